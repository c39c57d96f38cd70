"""Real-browser check that Markdown from a link or a report is drawn as text: an image
in it is never fetched and a link never made (Chromium against `relidash serve`, as in
tests/browser/test_browser.py).

A local HTTP server on 127.0.0.1 counts the requests it gets; the payloads point at it,
in the query parameters of every report page and in a suite's release names, tags and a
case id. Visiting the pages must cost it no request, show no link to it, and show the
payloads' characters as written (no Markdown backslash left in view).
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from chromium import CHROMIUM, CHROMIUM_ARGS, SETTLE_TIMEOUT, settle
from required_tools import require_browser
from servers import free_port, healthy, relidash_command, stop_group

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "mv-0.18.0_early-stop_runs8.json"
START_TIMEOUT = 90.0
SUITE = "leaky-agent"
RELEASES = 31  # one more than a page shows at once: the release range slider is drawn
JOINER = "\u2060"


class Counter(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.asked: list[str] = []


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (the handler's name)
        assert isinstance(self.server, Counter)
        self.server.asked.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def counter() -> Iterator[Counter]:
    server = Counter()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def payloads(counter: Counter) -> dict[str, str]:
    base = f"http://127.0.0.1:{counter.server_address[1]}"
    return {
        "image": f"![x]({base}/leak.png)",
        "link": f"**pwn** [sign in]({base}/link)",
        "html": f"<img src={base}/html.png>",
    }


def write_reports(directory: Path, p: dict[str, str]) -> str:
    """One suite of RELEASES releases named with Markdown images and links, tags holding
    them, and a steady case (never a lottery case) whose id is one. Its link key."""
    directory.mkdir(parents=True)
    data = json.loads(FIXTURE.read_text())
    data["suite"] = SUITE
    steady = next(i for i, c in enumerate(data["cases"]) if c["pass_count"] == c["runs"])
    data["cases"][steady]["case_id"] = "case " + p["image"]
    for case in data["cases"]:
        case["tags"] = [
            f"risk_tier:{p['image']}" if t.startswith("risk_tier:") else t for t in case["tags"]
        ] + [f"{p['link']}:v"]
    for i in range(1, RELEASES + 1):
        data["model"] = f"r{i:02d} {p['image'] if i % 2 else p['link']} {p['html']}"
        (directory / f"release-{i:02d}.json").write_text(json.dumps(data))
    return str(data["cases"][steady]["case_id"])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, counter: Counter) -> Iterator[tuple[str, str]]:
    """(the server's URL, the steady case's link key)."""
    require_browser(CHROMIUM)
    base = tmp_path_factory.mktemp("browser_markdown")
    case = write_reports(base / "reports", payloads(counter))
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = base / "server.log"
    command = [
        *relidash_command(), "serve", str(base / "reports"), "--port", str(port),
        "--catalog", str(base / "catalog.duckdb"), "--reviews", str(base / "reviews"),
    ]  # fmt: skip
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"relidash serve did not start:\n{log_path.read_text()}")
            time.sleep(0.25)
        yield url, case
    finally:
        stop_group(proc)


def test_markdown_from_links_and_reports_fetches_nothing(
    served: tuple[str, str], counter: Counter
) -> None:
    from playwright.sync_api import sync_playwright

    url, case = served
    p = payloads(counter)
    port = str(counter.server_address[1])
    from_link = {
        "suite": p["image"], "release": p["link"], "base": p["image"], "k": p["html"],
        "case": p["image"], "dim": p["link"], "slice": p["image"],
    }  # fmt: skip
    visits = [f"/{page}?{urlencode(from_link)}" for page in ("releases", "slices", "lottery")]
    visits += [f"/{page}?{urlencode(from_link)}" for page in ("case", "gates", "review")]
    visits += [
        f"/releases?{urlencode({'suite': SUITE})}",  # the release range slider
        f"/gates?{urlencode({'suite': SUITE})}",  # a verdict per release shown
        f"/slices?{urlencode({'suite': SUITE, 'dim': p['link'].split(':')[0]})}",
        f"/lottery?{urlencode({'suite': SUITE, 'case': case})}",  # a steady case asked for
        f"/review?{urlencode({'suite': SUITE})}",  # the base release in a metric's label
    ]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context()
            context.set_default_timeout(SETTLE_TIMEOUT * 1000)
            page = context.new_page()
            for visit in visits:
                page.goto(url + visit)
                settle(page)
                page.wait_for_timeout(300)  # an image would be asked for by now
                assert not counter.asked, (visit, counter.asked)
                made = page.locator(f'a[href*=":{port}"], img[src*=":{port}"]')
                assert made.count() == 0, (
                    visit,
                    made.evaluate_all("(e) => e.map((x) => x.parentElement.outerHTML)"),
                )
                # as a reader sees it: formatting.md's word joiners are invisible
                text = page.locator('[data-testid="stMain"]').inner_text().replace(JOINER, "")
                assert "\\!" not in text and "\\[" not in text, (visit, text)  # escapes unseen
                if visit.startswith("/releases?suite=%21"):
                    alerts = page.locator('[data-testid="stAlert"]').all_inner_texts()
                    assert any(p["image"] in a.replace(JOINER, "") for a in alerts), alerts
                if visit == f"/releases?{urlencode({'suite': SUITE})}":
                    slider = page.locator('[data-testid="stSlider"]').inner_text()
                    slider = slider.replace(JOINER, "")
                    assert f"r{RELEASES:02d} {p['image']}" in slider, slider
            context.close()
        finally:
            browser.close()
    assert counter.asked == []
