"""The first page served at each page's address (dashboard/app/first_page.py): Streamlit's
own index.html with the server's root named before the frontend's scripts run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from required_tools import require_command
from starlette.applications import Starlette
from starlette.testclient import TestClient
from streamlit import file_util

from dashboard.app.first_page import BASE_SCRIPT, routes
from dashboard.app.pages import PAGES, URL_PATHS

SCRIPTS = Path(__file__).resolve().parents[2] / "dashboard" / "app" / "page_scripts"


def client(base: str = "") -> TestClient:
    return TestClient(Starlette(routes=routes(base)))


@pytest.mark.parametrize("path", URL_PATHS)
def test_each_page_address_answers_with_streamlits_page_naming_the_root(path: str) -> None:
    answer = client().get(f"/{path}?suite=s&k=3")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")
    assert answer.headers["cache-control"] == "no-cache"
    original = (Path(file_util.get_static_dir()) / "index.html").read_text(encoding="utf-8")
    # everything Streamlit's page holds, in order, with the setting ahead of its first script
    assert answer.text.replace(BASE_SCRIPT, "", 1) == original
    assert answer.text.index(BASE_SCRIPT) < answer.text.index('<script type="module"')
    assert answer.text.index(BASE_SCRIPT) == original.index("<script")


def test_an_unchanged_first_page_is_not_sent_again() -> None:
    first = client().get("/releases")
    again = client().get("/slices", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    other = client().get("/slices", headers={"If-None-Match": '"something else"'})
    assert other.status_code == 200 and BASE_SCRIPT in other.text


def test_only_page_addresses_are_answered_under_the_base_path() -> None:
    prefixed = client("team/relidash/")
    assert prefixed.get("/team/relidash/releases").status_code == 200
    assert prefixed.get("/releases").status_code == 404
    # the root, Streamlit's own paths and files stay Streamlit's
    for path in ("/", "/team/relidash", "/team/relidash/_stcore/health", "/favicon.png"):
        assert prefixed.get(path).status_code == 404, path
    assert client().get("/").status_code == 404


@pytest.mark.parametrize(
    "address, root",
    [
        ("http://127.0.0.1:8501/releases?suite=s&from=a&to=b", "http://127.0.0.1:8501/"),
        (
            "https://example.org/team/relidash/case?suite=s&case=c",
            "https://example.org/team/relidash/",
        ),
    ],
)
def test_the_setting_names_the_directory_of_the_address(address: str, root: str) -> None:
    """The script as a browser runs it (Node.js: the Makefile installs it for the az://
    tests): the root is the directory holding the page's address, and whatever a host
    had set in window.__streamlit stays."""
    node = require_command(
        "node", tests="the base-URL script in Node.js", install="Debian's nodejs package"
    )
    script = BASE_SCRIPT.removeprefix("<script>").removesuffix("</script>")
    program = (
        f"const window = {{location: {{href: {json.dumps(address)}}}, __streamlit: {{HOST: 1}}}};"
        f"{script} console.log(JSON.stringify(window.__streamlit));"
    )
    ran = subprocess.run([node, "-e", program], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {"HOST": 1, "BACKEND_BASE_URL": root}


def test_every_page_script_has_an_address() -> None:
    assert sorted(script for script, _, _ in PAGES) == sorted(p.name for p in SCRIPTS.glob("*.py"))
    assert len(set(URL_PATHS)) == len(URL_PATHS)
