"""A comparison of two releases for a terminal, or as GitHub-flavoured Markdown for
`$GITHUB_STEP_SUMMARY`: the paired deltas with their CIs, then the case ledger case by
case.

Formatting only: every number and bucket comes from dashboard/analysis/comparing.py.
Must not: compute a delta, import Streamlit, or print.
"""

from __future__ import annotations

from dashboard.analysis.comparing import STILL_PASSING, Comparison, LedgerEntry
from dashboard.analysis.deltas import INTERVAL_NOTE
from dashboard.analysis.estimates import policy_note
from dashboard.render.formatting import one_line, points

# the gate summary's escaping: HTML and Markdown syntax from a report made inert
from dashboard.render.gate_report import _md as md_text
from dashboard.render.visible import visible


def _entry_line(entry: LedgerEntry) -> str:
    before = entry.base.cell() if entry.base else "—"
    after = entry.head.cell() if entry.head else "—"
    text = one_line(entry.input) or visible(entry.case_id or entry.key)
    return f"    {before:>13} → {after:<13} {text}"


def _matching_lines(c: Comparison) -> list[str]:
    """The matching note under the counts: a warning in capitals when nothing matched."""
    note = c.matching_note
    if note is None:
        return []
    return [f"  WARNING: {note}" if c.no_match else f"  {note}"]


def render_text(comparison: Comparison, list_still_passing: bool = False) -> str:
    """The comparison for a terminal: deltas with CIs, then the ledger case by case."""
    c = comparison
    policy = policy_note(c.count_agent_errors)
    out = [
        f"relidash compare: suite {visible(c.suite)}, {visible(c.base_release)} → "
        f"{visible(c.head_release)} ({visible(c.slice or 'all cases')}; {policy})",
        f"  base {visible(c.base_file)}",
        f"  head {visible(c.head_file)}",
        f"  {len(c.ledger)} cases matched, {c.n_pairs} evaluated in both; "
        f"{len(c.added)} added, {len(c.removed)} removed; k = {c.k} ({c.k_source})",
        *_matching_lines(c),
        "",
        f"  {'':<8} {'base':>7} {'head':>7} {'Δ pts':>7}   95% CI (pts)",
    ]
    for d in c.deltas:
        if d.delta is None or d.base is None or d.head is None:
            out.append(f"  {d.name:<8} {d.unknown_reason}")
            continue
        out.append(
            f"  {d.name:<8} {100 * d.base:>6.1f}% {100 * d.head:>6.1f}% {points(d.delta.delta):>7}"
            f"   [{points(d.delta.ci_low)}, {points(d.delta.ci_high)}]"
        )
    out.append(f"  (means over the {c.n_pairs} cases evaluated in both; {INTERVAL_NOTE})")
    out += ["", f"Case ledger ({len(c.ledger)} matched cases, passes/runs base → head):"]
    for bucket, entries in c.buckets().items():
        out.append(f"  {bucket}: {len(entries)}")
        if bucket == STILL_PASSING and not list_still_passing:
            continue
        out += [_entry_line(e) for e in entries]
    for title, unmatched in (("added (head only)", c.added), ("removed (base only)", c.removed)):
        out.append(f"  {title}: {len(unmatched)}")
        out += [_entry_line(e) for e in unmatched]
    return "\n".join(out) + "\n"


def _md_row(entry: LedgerEntry) -> str:
    before = entry.base.cell() if entry.base else "—"
    after = entry.head.cell() if entry.head else "—"
    text = md_text(entry.input or entry.case_id or entry.key)
    return f"| {md_text(before)} | {md_text(after)} | {text} |"


def render_markdown(comparison: Comparison, list_still_passing: bool = False) -> str:
    """The comparison as GitHub-flavoured Markdown: a heading, the deltas as a table,
    the ledger's counts, and each bucket's cases in a collapsed <details>."""
    c = comparison
    out = [
        f"## relidash compare: {md_text(c.suite)} {md_text(c.base_release)} → "
        f"{md_text(c.head_release)}",
        "",
        f"Base {md_text(c.base_file)}, head {md_text(c.head_file)}; "
        f"{md_text(c.slice or 'all cases')}; {policy_note(c.count_agent_errors)}. "
        f"{len(c.ledger)} cases matched, {c.n_pairs} evaluated in both; {len(c.added)} added, "
        f"{len(c.removed)} removed; k = {c.k} ({c.k_source}).",
        "",
        "| Metric | Base | Head | Δ (pts) | 95% CI (pts) |",
        "|---|---:|---:|---:|---|",
    ]
    for d in c.deltas:
        if d.delta is None or d.base is None or d.head is None:
            out.append(f"| {d.name} | | | UNKNOWN | {md_text(d.unknown_reason, 1000)} |")
            continue
        out.append(
            f"| {d.name} | {100 * d.base:.1f}% | {100 * d.head:.1f}% | {points(d.delta.delta)} "
            f"| [{points(d.delta.ci_low)}, {points(d.delta.ci_high)}] |"
        )
    out += ["", f"Means over the {c.n_pairs} cases evaluated in both; {INTERVAL_NOTE}.", ""]
    groups = [(bucket, entries) for bucket, entries in c.buckets().items()]
    groups += [("added (head only)", list(c.added)), ("removed (base only)", list(c.removed))]
    out += [
        "### Case ledger",
        "",
        " · ".join(f"{bucket} **{len(entries)}**" for bucket, entries in groups),
        "",
    ]
    for bucket, entries in groups:
        if not entries or (bucket == STILL_PASSING and not list_still_passing):
            continue
        out += [
            f"<details><summary>{bucket}: {len(entries)}</summary>",
            "",
            "| Base | Head | Case |",
            "|---:|---:|---|",
            *[_md_row(e) for e in entries],
            "",
            "</details>",
            "",
        ]
    return "\n".join(out) + "\n"
