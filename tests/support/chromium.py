"""Chromium for the tests that drive a page: where it is, how it starts, and how a test
waits for a Streamlit page to settle and reads what it shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest
import required_tools
from servers import quiet_since

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SETTLE_TIMEOUT = 60.0  # seconds for a page's script to finish
# a page's tables: the grid, or a static table (widgets.data_table draws a small one so,
# as HTML: formatting.html_table)
STATIC_TABLE = '[data-testid="stHtml"] table.relidash-table'
TABLES = f'[data-testid="stDataFrame"], {STATIC_TABLE}'
QUIET = 1.0  # seconds with no running script before a page counts as rendered


def unavailable(reason: str) -> NoReturn:
    required_tools.unavailable(
        reason, tests=required_tools.BROWSER_TESTS, install=required_tools.BROWSER_INSTALL
    )


def settle(page: Any) -> None:
    """Wait for the app to connect, show a heading, and finish running its script."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')
        page.locator("h1").first.wait_for()
    except PlaywrightTimeout:
        pytest.fail(f"{page.url}: no connected app with a heading:\n{page.inner_text('body')}")
    if quiet_since(page, QUIET, SETTLE_TIMEOUT) is None:
        pytest.fail(f"{page.url}: the script was still running after {SETTLE_TIMEOUT} s")


def assert_no_exception(page: Any) -> None:
    errors = page.locator('[data-testid="stException"]')
    assert errors.count() == 0, errors.all_inner_texts()


def heading(page: Any) -> str:
    return str(page.locator("h1").first.inner_text()).strip()
