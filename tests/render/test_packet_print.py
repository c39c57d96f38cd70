"""The review packet on paper: page numbers and a running header (suite, release,
verdict) from @page margin boxes, headings kept with their tables, tables fitted to the
page, and a header that a hostile release name cannot break out of.

The browser test prints the packet in Debian's Chromium (/usr/bin/chromium); without it
(or without the playwright package) it skips on a workstation and fails under `make test`
and CI (tests/support/required_tools.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from required_tools import require_browser

from dashboard.analysis import releases, summary
from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.review import Review, build_review
from dashboard.data.catalog import open_catalog
from dashboard.render.packet import STYLE, render_packet
from dashboard.render.print_page import css_string, print_header

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
A4_TEXT_WIDTH = 688  # px: 210 mm less the 14 mm margins, at 96 px per inch


@pytest.fixture(scope="module")
def packets() -> Iterator[dict[str, tuple[Review, str]]]:
    con = open_catalog(":memory:")
    refresh_catalog(con, SAMPLE)
    out = {}
    for suite in ("code-agent", "support-agent"):
        review = build_review(con, suite, reports_dir=SAMPLE)
        history = releases.release_table(con, summary.report_overview(con), suite, review.k)
        out[suite] = (
            review,
            render_packet(review, history=history, generated_at="2026-04-14T12:00:00Z"),
        )
    yield out
    con.close()


def css_unescape(text: str) -> str:
    return re.sub(r"\\([0-9a-f]{1,6}) ?", lambda m: chr(int(m[1], 16)), text)


def test_pages_are_numbered_and_headed_with_suite_release_and_verdict(
    packets: dict[str, tuple[Review, str]],
) -> None:
    for review, html_text in packets.values():
        style = html_text[html_text.index("<style>") : html_text.index("</style>")]
        assert 'counter(page) " of " counter(pages)' in style
        boxes = dict(
            re.findall(r"@(top-left|top-right|bottom-right) \{ content: \"([^\"]*)\"", style)
        )
        assert boxes.pop("bottom-right") == "page "  # then the counters
        assert set(boxes) == {"top-left", "top-right"}
        left, right = css_unescape(boxes["top-left"]), css_unescape(boxes["top-right"])
        assert left == f"relidash review · {review.suite} · {review.release} vs {review.base}"
        assert right == f"{review.verdict} · k = {review.k}"


def test_headings_stay_with_their_tables_and_tables_fit_the_page() -> None:
    printed = STYLE[STYLE.index("@media print") :]
    assert re.search(
        r"h2, h3, h2 \+ p, h3 \+ p \{ break-after: avoid; break-inside: avoid; \}", printed
    )
    assert "h2 + *, h3 + *, h2 + p + *, h3 + p + * { break-before: avoid; }" in printed
    assert re.search(r"table \{ width: 100%; max-width: 100%;", printed)
    assert "thead { display: table-header-group; }" in printed


@pytest.mark.parametrize(
    "name",
    [
        'v9 "; } body { display: none } @page { x: "',
        "v9 </style><script>alert(1)</script>",
        "a\\b\nc",
    ],
)
def test_a_hostile_name_stays_inside_its_css_string(name: str) -> None:
    quoted = css_string(name)
    assert not set(quoted) & set('"<>\n\r{};')
    assert css_unescape(quoted) == name


def test_the_print_header_is_the_reviews_own(packets: dict[str, tuple[Review, str]]) -> None:
    review, html_text = packets["code-agent"]
    assert print_header(review) in html_text
    other, _ = packets["support-agent"]
    assert print_header(other) not in html_text


def browser_or_skip() -> None:
    require_browser(CHROMIUM)


@pytest.mark.browser
def test_printed_in_chromium_tables_fit_and_headings_keep_with_next(
    packets: dict[str, tuple[Review, str]], tmp_path: Path
) -> None:
    browser_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": A4_TEXT_WIDTH, "height": 1000})
            for suite, (_, html_text) in packets.items():
                path = tmp_path / f"{suite}.html"
                path.write_text(html_text, encoding="utf-8")
                page.goto(path.as_uri(), wait_until="load")
                page.emulate_media(media="print")
                seen: dict[str, Any] = page.evaluate(
                    """() => ({
                      wide: Array.from(document.querySelectorAll('table'))
                        .filter(t => t.getBoundingClientRect().width > document.body.clientWidth + 1)
                        .map(t => t.closest('section')?.id),
                      headings: Array.from(document.querySelectorAll('h2, h3'))
                        .map(h => getComputedStyle(h).breakAfter),
                    })"""
                )
                assert seen["wide"] == [], f"{suite}: tables wider than the page in {seen['wide']}"
                assert set(seen["headings"]) == {"avoid"}
                pdf = page.pdf(format="A4", prefer_css_page_size=True)
                assert pdf.startswith(b"%PDF")
                assert len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 2
        finally:
            browser.close()
