"""The review packet: one self-contained HTML file that a ship / no-ship decision can be
read from offline, years later, and that a verifier can re-check.

In order: the verdict and each rule's sentence; the headline numbers with their CIs and
the chart across releases (inline SVG drawn here by vl-convert); the paired Δ against the
base and the case ledger; Δpass^k per slice; the lottery cases; load problems;
provenance (each evidence file's SHA-256, the policy and its digest, relidash's version);
the method in plain words; the sign-offs recorded for the release. The numbers go in
once more as a `<script type="application/json">` block, read back by `read_packet_block`.

Formatting only: every number, verdict, bucket and evidence status comes from
dashboard/analysis (review.py and the subjects it draws on). Must not: decide a verdict,
compute a statistic, import Streamlit, do I/O, or put JavaScript or any reference outside
the file into the page: a Content-Security-Policy forbids loading anything but data:
images, and every string that came from a report or a record is escaped.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from html.parser import HTMLParser
from typing import Any, Final

import pandas as pd

from dashboard.analysis.comparing import LedgerEntry
from dashboard.analysis.deltas import INTERVAL_NOTE as PAIRED_INTERVAL
from dashboard.analysis.estimates import INTERVAL_NOTE
from dashboard.analysis.gating import FAILED
from dashboard.analysis.review import (
    Review,
    envelope_meaning,
    review_json,
)
from dashboard.analysis.verifying import MalformedPacket
from dashboard.render import charts, formatting
from dashboard.render.formatting import envelope_text, one_line, pct, pct_ci
from dashboard.render.gate_report import rule_detail, strict_line
from dashboard.render.inline_svg import inline_svg
from dashboard.render.packet_records import (
    carried_signatures,
    for_release,
    head_html,
    integrity_html,
    signoff_rows,
)
from dashboard.render.print_page import print_header
from dashboard.render.review_tables import p_text, slices_note

PACKET_BLOCK_ID: Final = "relidash-review"
CSP: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)
CHART_WIDTH: Final = 640
HOLDING_SHOWN: Final = 10
CASE_TEXT_WIDTH: Final = 90

STYLE: Final = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  color: #1f2328; margin: 0 auto; padding: 24px; max-width: 1000px; }
h1, h2, h3 { line-height: 1.2; }
h2 { border-bottom: 1px solid #d0d7de; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 1.05em; margin: 18px 0 6px; }
.verdict { border-radius: 8px; padding: 16px 24px; color: #fff; }
.verdict h1 { font-size: 3.2em; margin: 0; letter-spacing: 0.04em; }
.verdict p { margin: 4px 0 0; font-size: 1.1em; }
.PASSED { background: #1a7f37; } .FAILED { background: #cf222e; } .UNKNOWN { background: #9a6700; }
.UNDECIDED { background: #6e40c9; }
.badge { display: inline-block; min-width: 6em; text-align: center; color: #fff;
  border-radius: 4px; padding: 0 6px; margin-right: 8px; font-weight: 600; font-size: 0.85em; }
ul.rules { list-style: none; padding: 0; } ul.rules > li { margin: 6px 0; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 0.92em; }
th, td { border: 1px solid #d0d7de; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.nw { white-space: nowrap; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: 0.9em; overflow-wrap: anywhere; }
.big { font-size: 1.25em; font-weight: 600; }
.muted, .note { color: #59636e; }
.note { font-style: italic; }
figure { margin: 12px 0; } figure svg { max-width: 100%; height: auto; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; overflow-wrap: anywhere; }
footer { margin-top: 40px; border-top: 1px solid #d0d7de; padding-top: 8px; color: #59636e; }
@media print {
  @page { margin: 18mm 14mm 16mm; }
  body { font-size: 10.5pt; max-width: none; padding: 0; }
  section.page { break-before: page; }
  p { orphans: 3; widows: 3; }
  /* a heading stays with what follows it: its lead paragraph and the table's first rows */
  h2, h3, h2 + p, h3 + p { break-after: avoid; break-inside: avoid; }
  h2 + *, h3 + *, h2 + p + *, h3 + p + * { break-before: avoid; }
  tr, figure, li, .verdict, dl.facts { break-inside: avoid; }
  thead { display: table-header-group; }
  table { width: 100%; max-width: 100%; table-layout: auto; font-size: 0.88em; }
  th, td { padding: 2px 5px; }
  td { overflow-wrap: break-word; }
  td.num { white-space: normal; } /* a long UNKNOWN reason in a number column wraps */
  th { overflow-wrap: normal; word-break: normal; }
  figure svg { max-width: 100%; height: auto; }
  .verdict, .badge, th { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


class _Html(str):
    """Markup built here from escaped parts: a table cell holding it is not escaped again."""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _cell(value: Any) -> str:
    return value if isinstance(value, _Html) else _e(value)


def _table(headers: Sequence[str], rows: Iterable[Sequence[Any]], num: Sequence[int] = ()) -> str:
    """A table; cells are escaped unless they are _Html; columns in `num` align right."""
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f"<td{' class=num' if i in num else ''}>{_cell(v)}</td>" for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _code(value: Any) -> _Html:
    return _Html(f"<code>{_e(value)}</code>")


def _nowrap(value: Any) -> _Html:
    return _Html(f'<span class="nw">{_e(value)}</span>')


def _section(ident: str, title: str, body: str, *, page: bool = False) -> str:
    """A section with its heading; `page` starts it on a new printed page."""
    cls = ' class="page"' if page else ""
    return f'<section id="{ident}"{cls}><h2>{_e(title)}</h2>{body}</section>'


def _badge(verdict: str) -> str:
    return f'<span class="badge {_e(verdict)}">{_e(verdict)}</span>'


MINUS = "\u2212"  # the packet is typeset: a real minus sign in its deltas


def delta_text(
    delta: float | None, low: float | None, high: float | None, pairs: int, unknown: str = ""
) -> str:
    """A paired Δ in points with its CI: `+3.3 pts [−6.7, +13.3] over 30 cases`."""
    return formatting.delta_text(delta, low, high, pairs, unknown, minus=MINUS)


def _case(case_id: Any, text: Any) -> _Html:
    ident = f"<code>{_e(case_id)}</code>" if isinstance(case_id, str) and case_id else ""
    flat = one_line(text if isinstance(text, str) else "", CASE_TEXT_WIDTH)
    words = f'<span class="muted">{_e(flat)}</span>' if flat else ""
    return _Html("<br>".join(p for p in (ident, words) if p) or "—")


# ---- the chart, drawn on the server --------------------------------------------------------


def chart_html(history: pd.DataFrame | None, k: int) -> str:
    """pass@k and pass^k across releases with CI bands as inline SVG, or a note."""
    if history is None or history.empty:
        return ""
    try:
        svg = inline_svg(
            charts.svg(charts.vega_lite_spec(charts.releases_chart(history, k)), CHART_WIDTH)
        )
    except Exception as exc:  # any renderer failure leaves a note, never a broken packet
        return f'<p class="note">The chart could not be drawn ({_e(charts.failure(exc))}); the numbers are in the tables.</p>'
    return (
        f'<figure class="chart">{svg}<figcaption class="muted">pass@{k} (blue) and pass^{k} '
        f"(red) across the suite's releases; the shaded band is each release's 95% CI."
        "</figcaption></figure>"
    )


# ---- the sections ----------------------------------------------------------------------------


def _verdict_header(r: Review) -> str:
    against = f" against <b>{_e(r.base)}</b>" if r.base else " (first release: no base)"
    return (
        f'<header class="verdict {_e(r.verdict)}"><h1>{_e(r.verdict)}</h1>'
        f"<p>suite <b>{_e(r.suite)}</b> · release <b>{_e(r.release)}</b>{against} · k = {r.k}</p>"
        "</header>"
    )


def _rules_section(r: Review) -> str:
    items = []
    for result in r.gate.results:
        item = f"<li>{_badge(result.verdict.verdict)}{_e(rule_detail(result))}"
        if result.verdict.verdict == FAILED and result.holding:
            shown = result.holding[:HOLDING_SHOWN]
            cases = [
                (f"{h.passes}/{h.runs}", f"{h.value:.3f}", _case(h.case_id, h.input)) for h in shown
            ]
            item += _table(
                ["passes/runs", result.rule.metric_name, "case holding it down"], cases, num=(0, 1)
            )
            if len(result.holding) > len(shown):
                item += f'<p class="muted">… and {len(result.holding) - len(shown)} more</p>'
        items.append(item + "</li>")
    if r.gate.strict_failed:
        items.append(f"<li>{_badge(FAILED)}{_e(strict_line(r.gate))}</li>")
    if not items:
        items.append('<li class="note">The policy gives this suite no rule.</li>')
    return _section("rules", "Rules", f'<ul class="rules">{"".join(items)}</ul>')


HEADLINE_METRICS: Final = (
    ("pass@1", "pass_at_1"),
    ("pass@k", "pass_at_k"),
    ("pass^k", "pass_hat_k"),
)


def _headline_section(r: Review, chart: str) -> str:
    h = r.headline
    rows, unknown = [], []
    for name, col in HEADLINE_METRICS:
        label = name.replace("k", str(r.k))
        shown = pct_ci(h[col], h[f"{col}_ci_low"], h[f"{col}_ci_high"])
        method = str(h.get(f"{col}_method") or "")
        rows.append(
            (
                label,
                _Html(f'<span class="big">{_e(shown)}</span>'),
                INTERVAL_NOTE.get(method, method),
            )
        )
        if h.get(f"{col}_unknown"):
            unknown.append(f"<li>{_e(label)}: {_e(h[f'{col}_unknown'])}</li>")
    reading = str(h["envelope_reading"])
    meaning = envelope_meaning(reading)
    body = (
        _table(["metric", "estimate [95% CI]", "interval"], rows, num=(1,))
        + (f'<ul class="note">{"".join(unknown)}</ul>' if unknown else "")
        + f"<p>Cases: <b>{int(h['cases_evaluated'])}</b> evaluated / <b>{int(h['cases_errored'])}"
        f"</b> errored / <b>{int(h['cases_skipped'])}</b> skipped.</p>"
        f"<p>Envelope (pass@{r.k} − pass^{r.k}): <b>{_e(envelope_text(h['envelope_points'], reading))}"
        f"</b>{f' — {_e(meaning)}' if meaning else ''}.</p>{chart}"
    )
    return _section("headline", "Headline", body)


def _side(entry: LedgerEntry) -> str:
    before = entry.base.cell() if entry.base else "—"
    after = entry.head.cell() if entry.head else "—"
    return f"{before} → {after}"


def _change_section(r: Review) -> str:
    c = r.comparison
    title = "Change against the base"
    if c is None:
        body = "<p><b>No base (first release)</b>: no paired change and no case ledger.</p>"
        return _section("change", title, body, page=True)
    rows = [
        (d.name, pct(d.base), pct(d.head), delta_text(
            d.delta.delta if d.delta else None, d.delta.ci_low if d.delta else None,
            d.delta.ci_high if d.delta else None, d.delta.n_pairs if d.delta else 0,
            d.unknown_reason,
        ))
        for d in c.deltas
    ]  # fmt: skip
    buckets = {**c.buckets(), "added (release only)": c.added, "removed (base only)": c.removed}
    counts = ", ".join(f"{_e(name)} <b>{len(entries)}</b>" for name, entries in buckets.items())
    ledger = "".join(
        f"<h3>{_e(name)} ({len(entries)})</h3>"
        + _table(
            ["case", "passes/runs base → release"],
            [(_case(e.case_id, e.input), _side(e)) for e in entries],
            num=(1,),
        )
        for name, entries in buckets.items()
        if entries
    )
    body = (
        f"<p>Base <b>{_e(c.base_release)}</b> ({_code(c.base_file)}) → release "
        f"<b>{_e(c.head_release)}</b> ({_code(c.head_file)}): {len(c.ledger)} cases matched, "
        f"{c.n_pairs} evaluated in both; {len(c.added)} added, {len(c.removed)} removed.</p>"
        + _table(["metric", "base", "release", "paired Δ [95% CI]"], rows, num=(1, 2, 3))
        + f'<p class="muted">Means over the cases evaluated in both; {_e(PAIRED_INTERVAL)}.</p>'
        f"<h3>Case ledger</h3><p>{counts}</p>{ledger}"
    )
    return _section("change", title, body, page=True)


def _slices_section(r: Review) -> str:
    title = f"Δpass^{r.k} per slice"
    if r.comparison is None or not r.slices:
        why = "No base (first release)." if r.comparison is None else "No case carries a tag."
        return _section("slices", title, f"<p>{why}</p>")
    rows = [
        (_code(s.tag), pct(s.base), pct(s.head))
        + (delta_text(s.delta, s.ci_low, s.ci_high, s.pairs, s.unknown_reason),)
        + (p_text(s.p_value), p_text(s.p_holm), s.flag)
        for s in r.slices
    ]
    headers = ["slice (tag)", "base", "release", "paired Δ [95% CI]", "p", "p (Holm)", "flag"]
    table = _table(headers, rows, num=(1, 2, 3, 4, 5))
    return _section("slices", title, f"<p>{_e(slices_note(r))}</p>{table}")


def _lottery_section(r: Review) -> str:
    if r.lottery.empty:
        body = "<p>No lottery case: every evaluated case passes every run or none.</p>"
        return _section("lottery", "Lottery cases", body)
    rows = [
        (
            int(row["rank"]),
            _case(row["case_id"], row["input"]),
            f"{int(row['passes'])}/{int(row['runs'])}",
            pct(row["pass_at_k"]),
            pct(row["pass_hat_k"]),
            int(row["releases_as_lottery"]),
        )
        for row in r.lottery.to_dict("records")
    ]
    body = (
        '<p class="muted">Cases that pass sometimes and never reliably, closest to reliable '
        f"first (the top {len(rows)}; pass@k and pass^k per case), with how many releases in "
        "a row each has been one.</p>"
        + _table(
            ["rank", "case", "passes/runs", "pass@k", "pass^k", "releases as lottery"],
            rows,
            num=(0, 2, 3, 4, 5),
        )
    )
    return _section("lottery", "Lottery cases", body)


def _provenance_section(r: Review) -> str:
    problems = (
        _table(["file", "scope", "reason"], [(_code(f), s, why) for f, s, why in r.problems])
        if r.problems
        else "<p>None in the release's or the base's report file.</p>"
    )
    evidence = _table(
        ["role", "path", "bytes", "SHA-256", "format", "upgraded"],
        [
            (
                e.role,
                _code(e.path),
                f"{e.bytes:,}",
                _code(e.sha256),
                _nowrap(e.format),
                "yes" if e.upgraded else "no",
            )
            for e in r.evidence
        ],
        num=(2,),
    )
    rules = "".join(f"<li>{_e(rule.label())}</li>" for rule in r.policy.rules)
    facts = (
        f"<dt>relidash</dt><dd>{_e(r.relidash_version)}</dd>"
        f"<dt>error policy</dt><dd>{_e(r.policy_text)}</dd>"
        f"<dt>policy source</dt><dd>{_e(r.policy.source)}</dd>"
        f"<dt>policy SHA-256</dt><dd>{_code(r.policy.sha256)}</dd>"
        f"<dt>rules</dt><dd><ul>{rules}</ul></dd>"
        f"<dt>suite's releases</dt><dd>{_e(', '.join(r.releases))}</dd>"
    )
    return _section("problems", "Load problems", problems, page=True) + _section(
        "provenance",
        "Provenance",
        f'<h3>Evidence files</h3>{evidence}<dl class="facts">{facts}</dl>',
    )


def _method_section(r: Review) -> str:
    paras = (
        "For each case, n is the number of recorded runs and c the number that passed. "
        "pass@k = 1 − C(n−c, k) / C(n, k) is the chance that at least one of k runs passes "
        "(the unbiased estimator of Chen et al. 2021); pass^k = C(c, k) / C(n, k) is the chance "
        "that all k runs pass (Yao et al. 2024, arXiv:2406.12045). Both are computed per case "
        "and averaged over the cases evaluated. The envelope is pass@k − pass^k in points.",
        f"95% confidence intervals: {INTERVAL_NOTE['cluster-bootstrap']}, percentile interval; "
        f"a {INTERVAL_NOTE['wilson']}.",
        "A metric is UNKNOWN when k exceeds the trials recorded for a case: it is never "
        "extrapolated, and a rule that is UNKNOWN fails. A rule is UNDECIDED when the 95% "
        "interval straddles its threshold: the evidence neither meets nor rules out the "
        "claim, more trials would decide it, and until then it is not a pass.",
        "Where the percentile interval covers too little, a rule's verdict reads a wider one "
        f'and says "widened CI": the {INTERVAL_NOTE["widened"]}; for a regression rule, '
        "the paired interval widened to hold Student's t interval of the mean difference.",
        f"Error policy: {r.policy_text}",
        "The paired Δ against the base is the mean over matched cases of (release − base), "
        f"with a {PAIRED_INTERVAL}, which cancels each case's difficulty out of the difference. "
        "Cases are matched by case id where both releases have one, else by input text.",
    )
    return _section("method", "Method", "".join(f"<p>{_e(p)}</p>" for p in paras))


def _signoffs_section(
    r: Review,
    records: Sequence[Mapping[str, Any]],
    signatures: Mapping[str, Mapping[str, str]],
    criteria: Mapping[str, Any] | None,
) -> str:
    lead = f"<p>{_e(criteria['sentence'])}</p>" if criteria else ""
    if not records:
        body = lead + "<p>No sign-off is recorded for this release.</p>"
        return _section("signoffs", "Sign-offs", body, page=True)
    # the signature column only when a record is signed: a packet of unsigned records reads
    # (and verifies) as it did before signatures existed
    signed = bool(signatures)
    rows = [
        (_nowrap(t), by, ident, *([sig] if signed else []), _Html(f"<b>{_e(d)}</b>"), c, on)
        for t, by, ident, sig, d, c, on in signoff_rows(r, records, signatures)
    ]
    headers = ["time (UTC)", "by", "identity", *(["signature"] if signed else [])]
    headers += ["decision", "comment", "signed on"]
    return _section("signoffs", "Sign-offs", lead + _table(headers, rows), page=True)


# ---- the document and its machine-readable block ---------------------------------------------


def _json_block(doc: Mapping[str, Any]) -> str:
    # "<", ">" and "&" only occur inside JSON strings, where their \u escapes mean the same;
    # without them no "</script" or "<!--" can end the element early.
    text = json.dumps(doc, ensure_ascii=False, allow_nan=False, indent=1)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f'<script type="application/json" id="{PACKET_BLOCK_ID}">\n{text}\n</script>'


def render_packet(
    review: Review,
    *,
    signoffs: Sequence[Mapping[str, Any]] = (),
    history: pd.DataFrame | None = None,
    generated_at: str,
    signatures: Mapping[str, Mapping[str, str]] | None = None,
    criteria: Mapping[str, Any] | None = None,
    integrity: Sequence[Mapping[str, Any]] | None = None,
    ledger_head: Mapping[str, str] | None = None,
) -> str:
    """The review packet as one HTML document (no script needed, nothing loaded).

    `signoffs` are sign-off records; those of this suite and release are shown and carried.
    `history` is the suite's release table at the review's k (analysis.releases.release_table),
    drawn as pass@k and pass^k across releases when given. `signatures` (record SHA-256 ->
    {signature, status_text}), `criteria` (Preregistration.as_json) and `integrity`
    (evidence_integrity.integrity_json) and `ledger_head` (the reviews directory's last
    record: file, sha256) are carried when given.
    """
    records = for_release(review, signoffs)
    carried = carried_signatures(records, signatures or {})
    doc: dict[str, Any] = {
        "review": review_json(review),
        "signoffs": records,
        "generated_at": generated_at,
        "suite_releases": list(review.releases),  # the chart's and provenance's, then
    }
    if carried:
        doc["signatures"] = carried
    if criteria is not None:
        doc["criteria"] = dict(criteria)
    if integrity is not None:
        doc["trial_digests"] = [dict(f) for f in integrity]
    if ledger_head is not None:
        doc["ledger_head"] = dict(ledger_head)
    title = f"relidash review: {review.suite} {review.release} — {review.verdict}"
    body = "".join(
        (
            _verdict_header(review),
            _rules_section(review),
            _headline_section(review, chart_html(history, review.k)),
            _change_section(review),
            _slices_section(review),
            _lottery_section(review),
            _provenance_section(review),
            integrity_html(integrity),
            _method_section(review),
            _signoffs_section(review, records, carried, criteria),
            head_html(ledger_head),
            f"<footer>Generated {_e(generated_at)} by relidash {_e(review.relidash_version)}. "
            "The numbers above are repeated in the machine-readable block "
            f"<code>#{PACKET_BLOCK_ID}</code> of this file.</footer>",
        )
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="relidash {_e(review.relidash_version)}">\n'
        f"<title>{_e(title)}</title>\n<style>{STYLE}{print_header(review)}</style>\n"
        f"{_json_block(doc)}\n</head>\n<body>{body}</body></html>\n"
    )


class _BlockFinder(HTMLParser):
    """Collects the text of the first `<script type="application/json" id=PACKET_BLOCK_ID>`."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.inside = False
        self.found = False
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if (
            tag == "script"
            and not self.found
            and values.get("id") == PACKET_BLOCK_ID
            and (values.get("type") or "").strip().lower() == "application/json"
        ):
            self.inside = self.found = True

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.parts.append(data)


def parse_packet(html_text: str) -> dict[str, Any]:
    """The packet's machine-readable block; MalformedPacket when there is none (not a
    packet) or it is not a JSON object (a damaged or edited packet), saying which."""
    finder = _BlockFinder()
    finder.feed(html_text)
    finder.close()
    if not finder.found:
        raise MalformedPacket(f"not a relidash review packet (no #{PACKET_BLOCK_ID} block)")
    try:
        doc = json.loads("".join(finder.parts))
    except (ValueError, RecursionError) as exc:
        raise MalformedPacket(f"its review block is not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise MalformedPacket("its review block is not a JSON object")
    return doc


def read_packet_block(html_text: str) -> dict[str, Any] | None:
    """The packet's machine-readable block, or None when there is none, it is not valid
    JSON, or it is not an object with a "review" key."""
    try:
        doc = parse_packet(html_text)
    except MalformedPacket:
        return None
    return doc if "review" in doc else None
