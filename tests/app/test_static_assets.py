"""Streamlit's frontend code as relidash serves it: from memory, gzipped once
(dashboard/app/static_assets.py), over connections with Nagle's algorithm off
(dashboard/app/launch.py)."""

from __future__ import annotations

import gzip
import http.client
import re
import statistics
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest
from servers import free_port, healthy, relidash_command, stop_group
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from streamlit import file_util

from dashboard.app import static_assets
from dashboard.app.static_assets import StaticAssets, accepts_gzip

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(file_util.get_static_dir())
INDEX = (STATIC / "index.html").read_text(encoding="utf-8")
# the modules and style sheet a browser fetches before the app connects
STARTUP = re.findall(r'(?:src|href)="\./(static/[^"]+)"', INDEX)
MODULE = next(p for p in STARTUP if p.endswith(".js") and (STATIC / p).stat().st_size > 100_000)
FONT = next(p for p in STARTUP if p.endswith(".woff2"))


async def below(request: Request) -> PlainTextResponse:
    """The app under the middleware (Streamlit's in the served app): says it was asked."""
    return PlainTextResponse(f"below: {request.method} {request.url.path}")


def client(base: str = "") -> TestClient:
    routes = [Route("/{path:path}", below, methods=["GET", "HEAD", "POST"])]
    return TestClient(Starlette(routes=routes, middleware=[Middleware(StaticAssets, base=base)]))


def test_a_module_is_served_gzipped_with_streamlits_bytes_and_headers() -> None:
    served = client().get(f"/{MODULE}", headers={"Accept-Encoding": "gzip, deflate, br"})
    assert served.status_code == 200
    assert served.headers["content-encoding"] == "gzip"
    assert served.content == (STATIC / MODULE).read_bytes()  # the client un-gzipped it
    assert served.headers["content-type"].split(";")[0] in (
        "text/javascript",
        "application/javascript",
    )
    assert served.headers["cache-control"] == "public, immutable, max-age=31536000"
    assert served.headers["vary"] == "Accept-Encoding"
    # sent compressed: a third of the file or less
    assert int(served.headers["content-length"]) < (STATIC / MODULE).stat().st_size / 3


@pytest.mark.parametrize("accept", ["", "identity", "gzip;q=0", "br", "deflate, gzip; q=0.0"])
def test_a_client_that_refuses_gzip_gets_the_file_as_it_is(accept: str) -> None:
    served = client().get(f"/{MODULE}", headers={"Accept-Encoding": accept})
    assert served.status_code == 200
    assert "content-encoding" not in served.headers
    assert int(served.headers["content-length"]) == (STATIC / MODULE).stat().st_size
    assert served.content == (STATIC / MODULE).read_bytes()


def test_accept_encoding_is_read_as_a_list_with_weights() -> None:
    assert accepts_gzip(b"gzip")
    assert accepts_gzip(b"deflate, GZIP;q=0.5, br")
    assert not accepts_gzip(b"gzip;q=0")
    assert not accepts_gzip(b"x-gzip2, deflate")
    assert not accepts_gzip(b"")


def test_a_font_is_sent_as_it_is_compressed_already() -> None:
    served = client().get(f"/{FONT}", headers={"Accept-Encoding": "gzip"})
    assert served.status_code == 200
    assert "content-encoding" not in served.headers
    assert served.content == (STATIC / FONT).read_bytes()


def test_a_file_the_browser_holds_is_not_sent_again_and_head_sends_no_body() -> None:
    first = client().get(f"/{MODULE}")
    again = client().get(f"/{MODULE}", headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304 and again.content == b""
    head = client().head(f"/{MODULE}", headers={"Accept-Encoding": "identity"})
    assert head.status_code == 200 and head.content == b""
    assert int(head.headers["content-length"]) == (STATIC / MODULE).stat().st_size


@pytest.mark.parametrize(
    "method, path, headers",
    [
        ("GET", "/static/js/no-such-module.js", {}),
        ("GET", "/static/js", {}),  # a folder
        ("GET", "/static/js/", {}),
        ("GET", "/static/../index.html", {}),
        ("GET", "/static/./js/x.js", {}),
        ("GET", "/static/.hidden", {}),
        ("GET", "/index.html", {}),  # not below static/: Streamlit's, with its headers
        ("GET", "/_stcore/health", {}),
        ("POST", f"/{MODULE}", {}),
        ("GET", f"/{MODULE}", {"Range": "bytes=0-99"}),  # Streamlit answers ranges
    ],
)
def test_anything_else_goes_on_to_streamlit(
    method: str, path: str, headers: dict[str, str]
) -> None:
    served = client().request(method, path, headers=headers)
    assert served.text.startswith(f"below: {method}"), served.text[:80]


def test_under_a_base_path_only_its_static_folder_is_answered() -> None:
    prefixed = client("team/relidash/")
    served = prefixed.get(f"/team/relidash/{MODULE}")
    assert served.status_code == 200 and served.content == (STATIC / MODULE).read_bytes()
    assert prefixed.get(f"/{MODULE}").text.startswith("below:")


def test_each_file_is_read_and_compressed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    loads: list[Path] = []
    real = static_assets.load_asset
    monkeypatch.setattr(static_assets, "load_asset", lambda p: loads.append(p) or real(p))
    one = client()
    for _ in range(3):
        assert one.get(f"/{MODULE}").status_code == 200
    assert loads == [STATIC / MODULE]
    one.get("/static/js/no-such-module.js")
    assert len(loads) == 1


# ---- the served app -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("served")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with open(work / "server.log", "w") as log:
        proc = subprocess.Popen(
            [
                *relidash_command(),
                "serve",
                str(ROOT / "sample_reports"),
                "--port",
                str(port),
                "--catalog",
                str(work / "catalog.duckdb"),
                "--reviews",
                str(work / "reviews"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"relidash serve did not start:\n{(work / 'server.log').read_text()}")
            time.sleep(0.25)
        yield url
    finally:
        stop_group(proc)


def test_the_served_app_sends_its_startup_code_gzipped(served: str) -> None:
    address = urlparse(served)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    total = sent = 0
    for path in STARTUP:
        connection.request("GET", f"/{path}", headers={"Accept-Encoding": "gzip"})
        response = connection.getresponse()
        body = response.read()
        assert response.status == 200, path
        if response.getheader("content-encoding") == "gzip":
            body = gzip.decompress(body)
        assert body == (STATIC / path).read_bytes(), path
        total += len(body)
        sent += int(response.getheader("content-length"))
    connection.close()
    assert sent < total / 2, (sent, total)


def test_the_served_app_answers_at_once_on_a_kept_connection(served: str) -> None:
    """Small answers on a kept-alive connection are not held for the client's delayed
    acknowledgement. With Nagle's algorithm on (Streamlit's own socket), each waits for
    Linux's delayed-ACK timer, 40 ms at the least, whatever the machine's speed; with it
    off, a small file on the loopback takes a small fraction of that."""
    address = urlparse(served)
    small = sorted(STARTUP, key=lambda p: (STATIC / p).stat().st_size)[:12]
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    seconds = []
    for path in small:
        started = time.perf_counter()
        connection.request("GET", f"/{path}")
        response = connection.getresponse()
        response.read()
        seconds.append(time.perf_counter() - started)
        assert response.status == 200
    connection.close()
    assert statistics.median(seconds) < 0.03, [round(s, 4) for s in seconds]
