"""The Releases table as Chromium shows it, cell by cell, against the summary and upstream.

Reuses tests/test_browser.py's workspace (a copy of sample_reports/ plus its hostile suite),
`relidash serve` and Chromium fixtures; this module gets a server of its own. st.dataframe
draws a glide-data-grid canvas; the grid keeps the text of the cells it renders in an
accessible `table[role="grid"]` inside the canvas (only the columns and rows scrolled into
view), which is read here while scrolling the grid across. The downloaded CSV is read too.
Both are compared column by column with `relidash summary --json --by release` for the
same files, with multivon-eval 0.20.0's own numbers for the sample reports, and with the
paired Δ computed in tests/shown_numbers.py: a swapped column, or a bootstrap with another
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

VIEWPORT = {"width": 1280, "height": 900}  # narrower than the table: columns must be scrolled to

READ_GRID = """
(frame) => {
  const grid = frame.querySelector('table[role="grid"]');
  if (!grid) return null;
  const cells = [];
  for (const row of grid.querySelectorAll('tr[role="row"]')) {
    const r = Number(row.getAttribute("aria-rowindex"));
    for (const cell of row.querySelectorAll('[role="gridcell"], [role="columnheader"]')) {
      cells.push([r, Number(cell.getAttribute("aria-colindex")), cell.textContent]);
    }
  }
  const scroller = frame.querySelector(".dvn-scroller");
  return {
    rows: Number(grid.getAttribute("aria-rowcount")),
    cols: Number(grid.getAttribute("aria-colcount")),
    cells,
    scroll: scroller
      ? [scroller.scrollWidth, scroller.clientWidth, scroller.scrollHeight, scroller.clientHeight]
      : [0, 1, 0, 1],
  };
}
"""


def grid_table(page: Any) -> tuple[list[str], list[dict[str, str]]]:
    """The first st.dataframe's header and rows, as the accessible grid spells its cells."""
    frame = page.locator('[data-testid="stDataFrame"]').first
    frame.locator('[role="gridcell"]').first.wait_for(state="attached")
    seen: dict[tuple[int, int], str] = {}
    grid = frame.evaluate(READ_GRID)
    assert grid is not None, "the dataframe has no accessible grid"
    width, view_w, height, view_h = grid["scroll"]
    for top in range(0, max(height, 1), max(view_h // 2, 1)):
        for left in range(0, max(width, 1), max(view_w // 2, 1)):
            frame.locator(".dvn-scroller").evaluate(
                f"(s) => {{ s.scrollLeft = {left}; s.scrollTop = {top}; }}"
            )
            page.wait_for_timeout(150)
            grid = frame.evaluate(READ_GRID)
            seen.update({(r, c): text for r, c, text in grid["cells"]})
    rows, cols = grid["rows"], grid["cols"]
    missing = [(r, c) for r in range(1, rows + 1) for c in range(1, cols + 1) if (r, c) not in seen]
    assert not missing, f"grid cells never rendered: {missing}"
    header = [seen[(1, c)] for c in range(1, cols + 1)]
    return header, [
        {header[c - 1]: seen[(r, c)] for c in range(1, cols + 1)} for r in range(2, rows + 1)
    ]


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
                header, rows = grid_table(page)
                assert set(header) == set(release_columns(k))
                shown_errors, checked = release_table_errors(rows, k, rels, upstream, case_rows)
                errors += shown_errors
                against_upstream += checked
                with_upstream_numbers += sum(r["file"] in upstream for r in rels)

                with page.expect_download() as info:
                    tb.download_button(page, f"releases-{suite}-k{k}").click()
                assert info.value.suggested_filename == f"releases-{suite}-k{k}.csv"
                csv_header, rows = csv_rows(Path(info.value.path()).read_bytes())
                assert csv_header == header
                csv_errors, _ = release_table_errors(rows, k, rels, upstream, case_rows)
                errors += [f"CSV: {e}" for e in csv_errors]
    finally:
        context.close()
    assert against_upstream == with_upstream_numbers >= len(upstream)
    assert not errors, "\n".join(errors[:40])
