"""The review packet: one offline HTML file whose machine-readable block reads back as the
review's numbers, that loads nothing from anywhere, shows hostile report strings as text
(in Chromium, with and without its Content-Security-Policy), prints cleanly, and still
renders when the chart renderer fails.

The browser test launches Debian's Chromium from /usr/bin/chromium; without it (or without
the playwright package) it skips on a workstation and fails under `make test` and CI
(tests/support/required_tools.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from required_tools import require_browser

from dashboard.analysis import releases, summary
from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.review import Review, build_review, review_json, signoff_record
from dashboard.data.catalog import open_catalog
from dashboard.render import packet
from dashboard.render.inline_svg import UnsafeSvg, inline_svg
from dashboard.render.packet import (
    PACKET_BLOCK_ID,
    delta_text,
    read_packet_block,
    render_packet,
)

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
SUITE = "support-agent"
GENERATED = "2026-04-14T12:00:00Z"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]

SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
SVG = '"><svg onload=window.__pwned=3>'
PAYLOADS = (SCRIPT, IMG, SVG)
HOSTILE_SUITE = f"hostile {SCRIPT}"
HOSTILE_RELEASE = f"v9 {IMG}{SVG}"
HOSTILE_CASE_ID = f"support/{SVG}"


class Tags(HTMLParser):
    """Every start tag with its attributes, the text of <style> and <script> elements,
    and the ids of <section> elements, in document order."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: dict[str, list[str]] = {"style": [], "script": []}
        self.headings: list[str] = []
        self._open: str | None = None
        self._heading: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in self.raw:
            self._open = tag
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = []

    def handle_endtag(self, tag: str) -> None:
        self._open = None
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None

    def handle_data(self, data: str) -> None:
        if self._open:
            self.raw[self._open].append(data)
        if self._heading is not None:
            self._heading.append(data)

    def named(self, tag: str) -> list[dict[str, str | None]]:
        return [attrs for t, attrs in self.tags if t == tag]


# ---- the review --------------------------------------------------------------------------


def catalog(reports: Path) -> duckdb.DuckDBPyConnection:
    con = open_catalog(":memory:")
    refresh_catalog(con, reports)
    return con


def history_of(con: duckdb.DuckDBPyConnection, review: Review) -> pd.DataFrame:
    return releases.release_table(con, summary.report_overview(con), review.suite, review.k)


@pytest.fixture(scope="module")
def sample() -> Iterator[tuple[Review, pd.DataFrame]]:
    con = catalog(SAMPLE)
    review = build_review(con, SUITE, reports_dir=SAMPLE)
    yield review, history_of(con, review)
    con.close()


def signoff(review: Review, **fields: Any) -> dict[str, Any]:
    record = signoff_record(
        review,
        decision=fields.pop("decision", "approved"),
        by=fields.pop("by", "Ada Lovelace"),
        comment=fields.pop("comment", "ship it"),
        time="2026-04-14T10:00:00Z",
    )
    return {**record, **fields}


@pytest.fixture(scope="module")
def sample_html(sample: tuple[Review, pd.DataFrame]) -> str:
    review, history = sample
    return render_packet(
        review, signoffs=[signoff(review)], history=history, generated_at=GENERATED
    )


# ---- the machine-readable block ------------------------------------------------------------


def test_block_reads_back_as_the_review_its_signoffs_and_the_time(
    sample: tuple[Review, pd.DataFrame],
) -> None:
    review, history = sample
    ours = signoff(review, comment="</script><!-- & -->")
    other = signoff(review, release="v1.10.0")  # another release's record is left out
    html_text = render_packet(
        review, signoffs=[ours, other], history=history, generated_at=GENERATED
    )
    assert read_packet_block(html_text) == {
        "review": review_json(review),
        "signoffs": [ours],
        "generated_at": GENERATED,
        "suite_releases": list(review.releases),
    }
    # the block cannot end early: report text inside it carries no raw "<", ">" or "&"
    script = "".join(Tags(html_text).raw["script"])
    assert "</script" not in script and "<!--" not in script and "&" not in script
    assert "\\u003c/script\\u003e" in script


def test_read_packet_block_refuses_what_is_not_a_packet(sample_html: str) -> None:
    start = sample_html.index(f'id="{PACKET_BLOCK_ID}">') + len(f'id="{PACKET_BLOCK_ID}">')
    broken = sample_html[:start] + "{not json" + sample_html[start:]
    assert read_packet_block(sample_html) is not None
    assert read_packet_block("<!doctype html><html><body><p>no packet</p></body></html>") is None
    assert read_packet_block(broken) is None
    block = '<script type="application/json" id="relidash-review">{}</script>'
    assert read_packet_block(block.replace("{}", '{"reviews": {}}')) is None
    assert read_packet_block(block.replace("{}", "[1, 2]")) is None
    assert read_packet_block(block.replace("application/json", "text/plain")) is None
    assert read_packet_block(block.replace("{}", '{"review": {"k": 1}}')) == {"review": {"k": 1}}


# ---- one file, nothing from outside it -------------------------------------------------------

URL_ATTRIBUTES = ("src", "href", "xlink:href", "srcset", "action", "formaction", "poster", "data")
# the packet's whole policy, directive by directive and source by source: a directive or
# a source more (script-src *, a host for images) lets a packet load or run more
PACKET_CSP = [
    ("default-src", ["'none'"]),
    ("style-src", ["'unsafe-inline'"]),
    ("img-src", ["data:"]),
    ("base-uri", ["'none'"]),
    ("form-action", ["'none'"]),
]


def csp_directives(policy: str) -> list[tuple[str, list[str]]]:
    """A Content-Security-Policy as (directive, its sources), in order (CSP 3, 2.2.1)."""
    return [
        (name.lower(), sources)
        for name, *sources in (d.split() for d in policy.split(";") if d.strip())
    ]


def test_the_packet_references_nothing_outside_itself(sample_html: str) -> None:
    assert sample_html.startswith("<!doctype html>")
    tags = Tags(sample_html)
    assert tags.named("meta")[0] == {"charset": "utf-8"}
    csp = tags.named("meta")[1]
    assert csp["http-equiv"] == "Content-Security-Policy"
    assert csp_directives(csp["content"] or "") == PACKET_CSP
    assert tags.named("link") == [] and tags.named("iframe") == [] and tags.named("img") == []
    assert tags.named("script") == [{"type": "application/json", "id": PACKET_BLOCK_ID}]
    for tag, attrs in tags.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert name not in URL_ATTRIBUTES or (value or "").startswith(("#", "data:")), (
                tag,
                name,
                value,
            )
            assert "//" not in (value or ""), (tag, name, value)
    style = "".join(tags.raw["style"])
    assert "url(" not in style and "@import" not in style and "@font-face" not in style
    # no URL at all, not even the SVG namespace (inline SVG in HTML needs none)
    assert "http://" not in sample_html and "https://" not in sample_html
    assert len(tags.named("svg")) == 1  # the chart is in the file


def test_inline_svg_keeps_drawings_and_refuses_references_and_handlers() -> None:
    ns = 'xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"'
    good = f'<svg {ns} width="10"><g><text x="1">a &lt;b&gt; &amp; c</text></g></svg>'
    assert inline_svg(good) == '<svg width="10"><g><text x="1">a &lt;b&gt; &amp; c</text></g></svg>'
    for bad in (
        f"<svg {ns}><script>alert(1)</script></svg>",
        f'<svg {ns}><rect onload="alert(1)"/></svg>',
        f'<svg {ns}><image xlink:href="https://example.com/x.png"/></svg>',
        f'<svg {ns}><path fill="url(https://example.com/#p)"/></svg>',
        f'<svg {ns}><foreignObject><div xmlns="http://www.w3.org/1999/xhtml"/></foreignObject></svg>',
    ):
        with pytest.raises(UnsafeSvg):
            inline_svg(bad)


def test_a_failing_chart_renderer_leaves_a_note(
    sample: tuple[Review, pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    import vl_convert

    review, history = sample

    def broken(*args: Any, **kwargs: Any) -> str:
        raise RuntimeError("no V8 today")

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", broken)
    html_text = render_packet(review, history=history, generated_at=GENERATED)
    assert "The chart could not be drawn (RuntimeError: no V8 today)" in html_text
    assert "<svg" not in html_text
    assert read_packet_block(html_text) is not None

    hostile = '<svg xmlns="http://www.w3.org/2000/svg"><image href="https://example.com/"/></svg>'
    monkeypatch.setattr(vl_convert, "vegalite_to_svg", lambda *a, **k: hostile)
    html_text = render_packet(review, history=history, generated_at=GENERATED)
    assert "could not be drawn (UnsafeSvg" in html_text and "<image" not in html_text


# ---- what it shows, in order ---------------------------------------------------------------


def test_verdict_first_then_the_sections_in_order_and_a_print_stylesheet(
    sample: tuple[Review, pd.DataFrame], sample_html: str
) -> None:
    review, _ = sample
    tags = Tags(sample_html)
    assert tags.headings[0] == review.verdict == "PASSED"
    assert tags.named("h1") == [{}]  # the verdict is the only top heading
    sections = [attrs["id"] for attrs in tags.named("section")]
    assert sections == [
        "rules", "headline", "change", "slices", "lottery", "problems", "provenance",
        "method", "signoffs",
    ]  # fmt: skip
    style = "".join(tags.raw["style"])
    print_rules = style[style.index("@media print") :]
    assert "section.page { break-before: page; }" in print_rules
    assert {a["id"] for a in tags.named("section") if a.get("class") == "page"} == {
        "change",
        "problems",
        "signoffs",
    }


def test_the_numbers_read_as_the_pages_read_them(
    sample: tuple[Review, pd.DataFrame], sample_html: str
) -> None:
    review, _ = sample
    h = review.headline
    assert h["pass_hat_k"] == pytest.approx(2 / 3) and review.k == 5
    assert "66.7% [50.0–83.3]" in sample_html  # pass^5, as formatting.pct_ci writes it
    assert "90.0% [80.0–100.0]" in sample_html  # pass@5
    assert "<b>30</b> evaluated / <b>2</b> errored / <b>1</b> skipped" in sample_html
    assert "23.3 pts (in between)" in sample_html
    # the paired Δpass@5 against v1.10.0, in points, with the typographic minus
    assert "+3.3 pts [\u22126.7, +13.3] over 30 cases" in sample_html
    assert delta_text(-0.02666, -0.08, 0.02, 30) == "\u22122.7 pts [\u22128.0, +2.0] over 30 cases"
    assert delta_text(None, None, None, 0, "UNKNOWN — why") == "UNKNOWN — why"
    # the ledger: the regressed case with its cells, and every evidence digest
    assert "support/shipping-po-box" in sample_html and "2/5 → 0/5" in sample_html
    for evidence in review.evidence:
        assert evidence.sha256 in sample_html and evidence.path in sample_html
    assert review.policy.sha256 in sample_html
    assert "Yao et al. 2024" in sample_html and "Chen et al. 2021" in sample_html
    assert f"Generated {GENERATED}" in sample_html


def test_first_release_has_no_base_and_a_changed_signoff_says_so(
    sample: tuple[Review, pd.DataFrame],
) -> None:
    con = catalog(SAMPLE)
    first = build_review(con, SUITE, release="v1.4.0", reports_dir=SAMPLE)
    record = signoff(first)
    record["evidence"] = [{"path": record["evidence"][0]["path"], "sha256": "0" * 64}]
    html_text = render_packet(first, signoffs=[record], generated_at=GENERATED)
    assert first.base is None
    assert "No base (first release)" in html_text
    assert "the evidence has changed since" in html_text
    assert read_packet_block(html_text) == {
        "review": review_json(first),
        "signoffs": [record],
        "generated_at": GENERATED,
        "suite_releases": list(first.releases),
    }
    assert "<svg" not in html_text  # no history given, no chart


# ---- a hostile report, opened in Chromium ---------------------------------------------------


def write_hostile_suite(reports: Path) -> None:
    """Two support-agent reports copied as their own suite, with markup for the suite, the
    later release's name, a case id (in both, so it matches) and every case's input."""
    target = reports / "hostile"
    target.mkdir()
    base_file, head_file = sorted((reports / SUITE).glob("*.json"))[-2:]
    for source, release in ((base_file, "v8"), (head_file, HOSTILE_RELEASE)):
        report = json.loads(source.read_text(encoding="utf-8"))
        report["suite"] = HOSTILE_SUITE
        for side in ("target_before", "target_after"):
            report["execution"][side]["declaration"]["version"] = release
        for i, case in enumerate(report["cases"]):
            case["input"] = f"{PAYLOADS[i % len(PAYLOADS)]} {case['input']}"
        report["cases"][0]["case_id"] = HOSTILE_CASE_ID
        (target / source.name).write_text(json.dumps(report), encoding="utf-8")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Review, str, Path]:
    reports = tmp_path_factory.mktemp("packet") / "reports"
    shutil.copytree(SAMPLE, reports)
    write_hostile_suite(reports)
    con = catalog(reports)
    review = build_review(con, HOSTILE_SUITE, reports_dir=reports)
    assert (review.suite, review.release, review.base) == (HOSTILE_SUITE, HOSTILE_RELEASE, "v8")
    record = signoff(review, by=IMG, comment=SVG + SCRIPT)
    html_text = render_packet(
        review, signoffs=[record], history=history_of(con, review), generated_at=GENERATED
    )
    con.close()
    path = reports.parent / "packet.html"
    path.write_text(html_text, encoding="utf-8")
    return review, html_text, path


def browser_or_skip() -> None:
    require_browser(CHROMIUM)


def open_in_chromium(path: Path) -> dict[str, Any]:
    """What Chromium did with the file: every request, `typeof window.__pwned`, the body's
    text, and how many script, img and event-handler elements the DOM holds."""
    from playwright.sync_api import Route, sync_playwright

    requests: list[str] = []

    def record(route: Route) -> None:
        requests.append(route.request.url)
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            route.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.route("**/*", record)
            page.goto(path.as_uri(), wait_until="load")
            page.wait_for_timeout(300)  # let an onerror or onload fire, were there one
            return {
                "requests": requests,
                "pwned": page.evaluate("typeof window.__pwned"),
                "text": page.inner_text("body"),
                "dom": page.evaluate(
                    "[document.querySelectorAll('script').length,"
                    " document.querySelectorAll('img').length,"
                    " document.querySelectorAll('[onload],[onerror]').length,"
                    " document.querySelectorAll('svg').length]"
                ),
            }
        finally:
            browser.close()


@pytest.mark.browser
def test_hostile_strings_are_text_and_nothing_is_loaded(hostile: tuple[Review, str, Path]) -> None:
    browser_or_skip()
    review, html_text, path = hostile
    assert read_packet_block(html_text) is not None
    assert read_packet_block(html_text)["review"] == review_json(review)  # type: ignore[index]
    # Twice: as written, and with its Content-Security-Policy cut out, so that the escaping
    # alone is shown to hold (the policy would block an injected script by itself).
    csp = f'<meta http-equiv="Content-Security-Policy" content="{packet.CSP}">'
    assert csp in html_text
    bare = path.with_name("packet-without-csp.html")
    bare.write_text(html_text.replace(csp, ""), encoding="utf-8")
    for page_file in (path, bare):
        seen = open_in_chromium(page_file)
        assert seen["requests"] == [page_file.as_uri()]
        assert seen["pwned"] == "undefined"
        assert seen["dom"] == [1, 0, 0, 1]  # the JSON block; no image; no handler; the chart
        for payload in (*PAYLOADS, HOSTILE_SUITE, HOSTILE_RELEASE, HOSTILE_CASE_ID):
            assert payload in seen["text"], payload
