"""The Releases table as Chromium shows it, cell by cell, against the summary and upstream.

Reuses tests/browser/test_browser.py's workspace (a copy of sample_reports/ plus its hostile suite),
`relidash serve` and Chromium fixtures; this module gets a server of its own. A window of
releases is a static table (`widgets.data_table`): its cells are read as the browser shows
their text, after Streamlit rendered their inert Markdown. The downloaded CSV is read too.
Both are compared column by column with `relidash summary --json --by release` for the
same files, with multivon-eval 0.20.0's own numbers for the sample reports, and with the
paired Δ computed in tests/support/shown_numbers.py: a swapped column, or a bootstrap with another
seed, fails.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
import test_browser as tb
from shown_numbers import (
    catalog_case_rows,
    csv_rows,
    release_columns,
    release_table_errors,
    run_summary,
    suite_records,
    upstream_numbers,
)

pytestmark = pytest.mark.browser

# test_browser's fixtures, bound here so pytest finds them for this module
browser_available = tb.browser_available
workspace = tb.workspace
summary_doc = tb.summary_doc
server = tb.server
browser = tb.browser

VIEWPORT = {"width": 1280, "height": 900}  # narrower than the table: its cells wrap

READ_TABLE = """
(table) => [...table.querySelectorAll("tr")].map(
  (row) => [...row.querySelectorAll("th, td")].map((cell) => cell.innerText.trim())
)
"""


def static_table(page: Any) -> tuple[list[str], list[dict[str, str]]]:
    """The first static table's header and rows, as the browser shows their text (a cell
    wrapped over two lines read as one)."""
    table = page.locator(tb.STATIC_TABLE).first
    table.wait_for(state="visible")
    header, *rows = [[" ".join(c.split()) for c in row] for row in table.evaluate(READ_TABLE)]
    assert rows and all(len(row) == len(header) for row in rows), (header, rows)
    return header, [dict(zip(header, row, strict=True)) for row in rows]


def test_releases_table_shows_the_summary_and_upstream_numbers(
    server: str, browser: Any, workspace: tb.Workspace
) -> None:
    by_release = run_summary(workspace.reports, "release")
    upstream = upstream_numbers()
    case_rows = catalog_case_rows(workspace.reports)
    context = browser.new_context(accept_downloads=True, viewport=VIEWPORT)
    context.set_default_timeout(tb.SETTLE_TIMEOUT * 1000)
    errors: list[str] = []
    against_upstream = with_upstream_numbers = 0
    try:
        page = context.new_page()
        for suite in sorted({r["suite"] for r in by_release["releases"]}):
            rels = suite_records(by_release, suite)
            for k in sorted({int(rels[-1]["runs"]["max"]), 2}):  # the default k, and k = 2
                tb.open_path(page, f"{server}/releases?{urlencode({'suite': suite, 'k': k})}")
                tb.assert_no_exception(page)
                assert tb.heading(page) == "Releases"
                header, rows = static_table(page)
                assert set(header) == set(release_columns(k))
                # newest first: reversed to the summary's release order
                shown_errors, checked = release_table_errors(
                    rows[::-1], k, rels, upstream, case_rows
                )
                errors += shown_errors
                against_upstream += checked
                with_upstream_numbers += sum(r["file"] in upstream for r in rels)

                with page.expect_download() as info:
                    tb.download_button(page, f"releases-{suite}-k{k}").click()
                assert info.value.suggested_filename == f"releases-{suite}-k{k}.csv"
                csv_header, rows = csv_rows(Path(info.value.path()).read_bytes())
                assert csv_header == header
                csv_errors, _ = release_table_errors(rows[::-1], k, rels, upstream, case_rows)
                errors += [f"CSV: {e}" for e in csv_errors]
    finally:
        context.close()
    assert against_upstream == with_upstream_numbers >= len(upstream)
    assert not errors, "\n".join(errors[:40])
