"""The first page in Chromium: the latest release's verdict and numbers in view without
scrolling at 1280×720, and the sidebar's links keeping the suite, its k and the
agent-errors switch (a link opens its page without the URL's parameters; the session
carries them: dashboard/app/state.py).

One `relidash serve` over a private copy of sample_reports/, as tests/browser/test_browser.py
starts it; skipped without Playwright or /usr/bin/chromium (failed under `make test` and
CI: tests/support/required_tools.py).
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from required_tools import require_browser
from servers import free_port, healthy, quiet_since, relidash_command, stop_group

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
START_TIMEOUT = 90.0
SETTLE_TIMEOUT = 60.0
VIEWPORT = {"width": 1280, "height": 720}
HEADLINE = '[data-testid="stAlert"], [data-testid="stMetric"]'


@pytest.fixture(scope="module", autouse=True)
def browser_available() -> None:
    require_browser(CHROMIUM)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    base = tmp_path_factory.mktemp("first_page")
    reports = base / "reports"
    shutil.copytree(SAMPLE, reports)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = base / "server.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [
                *relidash_command(),
                "serve",
                str(reports),
                "--port",
                str(port),
                "--catalog",
                str(base / "catalog.duckdb"),
                "--reviews",
                str(base / "reviews"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,  # Streamlit runs as a child: stopped as a group
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"relidash serve did not answer on {url}:\n{log_path.read_text()}")
            time.sleep(0.25)
        yield url
    finally:
        stop_group(proc)


@pytest.fixture
def page(server: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = chromium.new_context(viewport=VIEWPORT)
            context.set_default_timeout(SETTLE_TIMEOUT * 1000)
            yield context.new_page()
        finally:
            chromium.close()


def settle(page: Any) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
    page.locator("h1").first.wait_for()
    if quiet_since(page, 1.0, SETTLE_TIMEOUT) is None:
        pytest.fail(f"{page.url}: the script was still running after {SETTLE_TIMEOUT} s")
    assert page.locator('[data-testid="stException"]').count() == 0


def params(page: Any) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


def test_the_headline_is_in_view_at_1280_by_720(server: str, page: Any) -> None:
    page.goto(server + "/releases?suite=support-agent")
    settle(page)
    verdict = page.locator('[data-testid="stAlert"]').filter(has_text="the latest of").first
    assert verdict.inner_text().split(" ·")[0].strip() in ("PASSED", "FAILED", "UNKNOWN")
    metrics = page.locator('[data-testid="stMetric"]')
    assert metrics.count() == 2
    k = params(page)["k"]
    assert metrics.nth(0).inner_text().startswith(f"pass^{k}")
    for box in [verdict.bounding_box(), *(m.bounding_box() for m in metrics.all())]:
        assert box is not None and box["width"] > 0
        assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], box
    # the latest release is the table's first row, in view too
    first_row = page.locator('[data-testid="stHtml"] table tbody tr').first
    assert first_row.locator("td").first.inner_text().strip() in verdict.inner_text()
    row_box = first_row.bounding_box()
    assert row_box is not None and row_box["y"] < VIEWPORT["height"], row_box
    assert page.evaluate("window.scrollY") == 0


def test_a_sidebar_link_keeps_the_suite_its_k_and_the_switch(server: str, page: Any) -> None:
    page.goto(server + "/releases?suite=support-agent&k=2&agent_errors=count")
    settle(page)
    for target, heading in (("slices", "Slices"), ("gates", "Gates"), ("releases", "Releases")):
        page.locator(f'[data-testid="stSidebarNav"] a[href$="/{target}"]').click()
        page.wait_for_url(f"**/{target}*")
        settle(page)
        assert page.locator("h1").first.inner_text().strip() == heading
        shown = params(page)
        assert (shown.get("suite"), shown.get("k"), shown.get("agent_errors")) == (
            "support-agent",
            "2",
            "count",
        ), page.url
        # the picker shows it (not only the URL): Streamlit's combobox input
        assert page.get_by_role("combobox", name="Suite").input_value() == "support-agent"
