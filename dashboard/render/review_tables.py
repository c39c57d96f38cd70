"""A release review as the Review page shows it: the headline as big numbers, and the
rules, ledger, slices, lottery, problems, provenance and sign-offs as text tables.

Formatting only: every number and verdict comes from dashboard/analysis/review.py, and
numbers look as they do on every page (percent with one decimal, the CI in brackets).
Must not: decide a verdict, compute an estimate, import Streamlit, or do I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from dashboard.analysis.cases import case_link_key
from dashboard.analysis.comparing import LedgerEntry
from dashboard.analysis.gating import RuleResult
from dashboard.analysis.matching import story_link_key
from dashboard.analysis.policy import USES_CASE_RATE
from dashboard.analysis.review import FAMILY_LEVEL, Review, envelope_meaning
from dashboard.analysis.review_history import ReviewEntry
from dashboard.render.formatting import (
    case_url,
    delta_text,
    envelope_text,
    one_line,
    pct,
    pct_ci,
    points,
)
from dashboard.render.gate_report import rule_detail


def headline(review: Review) -> list[dict[str, str]]:
    """The big numbers, in reading order: label, value, and the line under it."""
    h = review.headline
    k = review.k
    out = [
        {
            "label": "pass@1",
            "value": pct(h["pass_at_1"]),
            "detail": pct_ci(h["pass_at_1"], h["pass_at_1_ci_low"], h["pass_at_1_ci_high"]),
        },
        {
            "label": f"pass@{k}",
            "value": pct(h["pass_at_k"]),
            "detail": pct_ci(h["pass_at_k"], h["pass_at_k_ci_low"], h["pass_at_k_ci_high"]),
        },
        {
            "label": f"pass^{k}",
            "value": pct(h["pass_hat_k"]),
            "detail": pct_ci(h["pass_hat_k"], h["pass_hat_k_ci_low"], h["pass_hat_k_ci_high"]),
        },
    ]
    change = _delta(review, "pass_hat_k")
    out.append(
        {
            "label": f"Δ pass^{k} vs {review.base}" if review.base else f"Δ pass^{k}",
            "value": "—" if change is None or change[0] is None else f"{points(change[0])} pts",
            "detail": "no base: the suite's first release"
            if change is None
            else delta_text(*change),
        }
    )
    return out


def _delta(review: Review, key: str) -> tuple[float | None, float | None, float | None, int] | None:
    if review.comparison is None:
        return None
    d = next(d for d in review.comparison.deltas if d.key == key)
    if d.delta is None:
        return None, None, None, 0
    return d.delta.delta, d.delta.ci_low, d.delta.ci_high, d.delta.n_pairs


def counts_line(review: Review) -> str:
    h = review.headline
    reading = str(h["envelope_reading"])
    meaning = envelope_meaning(reading)
    return (
        f"{h['cases_evaluated']} cases evaluated · {h['cases_errored']} errored · "
        f"{h['cases_skipped']} skipped · envelope pass@{review.k} − pass^{review.k} = "
        f"{envelope_text(h['envelope_points'], reading)}" + (f": {meaning}" if meaning else "")
    )


def rules_table(review: Review) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "verdict": r.verdict.verdict,
                "rule": r.rule.label(),
                "estimate": pct_ci(r.verdict.value, r.verdict.ci_low, r.verdict.ci_high),
                "cases": r.verdict.n_cases,
                "detail": rule_detail(r),
            }
            for r in review.gate.results
        ],
        columns=["verdict", "rule", "estimate", "cases", "detail"],
    )


def cases_below(result: RuleResult) -> pd.DataFrame:
    """The cases a per-case rule names, lowest first: what JUnit fails one by one."""
    measure = "pass rate" if result.rule.uses == USES_CASE_RATE else result.rule.metric_name
    return pd.DataFrame(
        [
            {
                "case": one_line(h.input) or h.case_id or f"case {h.case_idx}",
                "passes/runs": f"{h.passes}/{h.runs}",
                measure: f"{h.value:.3f}",
            }
            for h in result.holding
        ],
        columns=["case", "passes/runs", measure],
    )


def deltas_table(review: Review) -> pd.DataFrame:
    if review.comparison is None:
        return pd.DataFrame(columns=["metric", "base", "head", "Δ (paired, 95% CI)"])
    return pd.DataFrame(
        [
            {
                "metric": d.name,
                "base": pct(d.base),
                "head": pct(d.head),
                "Δ (paired, 95% CI)": delta_text(
                    d.delta.delta, d.delta.ci_low, d.delta.ci_high, d.delta.n_pairs
                )
                if d.delta
                else d.unknown_reason,
            }
            for d in review.comparison.deltas
        ]
    )


def ledger_case_url(suite: str, entry: LedgerEntry) -> str:
    """The Case page of a ledger entry: by its id, else by its input (the key compare
    matched it by, without the suffix that tells two identical id-less cases apart)."""
    key = f"id:{entry.case_id}" if entry.case_id else f"input:{entry.input}"
    return case_url(suite, story_link_key(key))


def ledger_table(review: Review) -> pd.DataFrame:
    """Every case that moved or still fails, with a link to it (the lottery view of the
    release that has it)."""
    columns = ["change", "case", "base", "head", "link"]
    if review.comparison is None:
        return pd.DataFrame(columns=columns)
    c = review.comparison
    rows = []
    shown = [(bucket, entries) for bucket, entries in c.buckets().items()]
    shown += [("added", list(c.added)), ("removed", list(c.removed))]
    for bucket, entries in shown:
        if bucket == "still passing":
            continue
        for e in entries:
            rows.append(
                {
                    "change": bucket,
                    "case": one_line(e.input) or e.case_id or e.key,
                    "base": e.base.cell() if e.base else "—",
                    "head": e.head.cell() if e.head else "—",
                    "link": ledger_case_url(review.suite, e),
                }
            )
    return pd.DataFrame(rows, columns=columns)


def ledger_counts(review: Review) -> str:
    if review.comparison is None:
        return ""
    c = review.comparison
    parts = [f"{len(v)} {k}" for k, v in c.buckets().items()]
    return " · ".join([*parts, f"{len(c.added)} added", f"{len(c.removed)} removed"])


def slices_table(review: Review) -> pd.DataFrame:
    """Δpass^k per slice with its raw and Holm-adjusted p-values and the flag they give."""
    k = review.k
    return pd.DataFrame(
        [
            {
                "slice": s.tag,
                "base": pct(s.base),
                "head": pct(s.head),
                f"Δ pass^{k}": delta_text(s.delta, s.ci_low, s.ci_high, s.pairs)
                if s.delta is not None
                else s.unknown_reason,
                "p": p_text(s.p_value),
                "p (Holm)": p_text(s.p_holm),
                "flag": s.flag,
            }
            for s in review.slices
        ],
        columns=["slice", "base", "head", f"Δ pass^{k}", "p", "p (Holm)", "flag"],
    )


def p_text(p: float | None) -> str:
    return "" if p is None else ("< 0.001" if p < 0.001 else f"{p:.3f}")


def slices_note(review: Review) -> str:
    """How the slices' flags were decided, with the number of slices tested."""
    tested = sum(s.p_holm is not None for s in review.slices)
    flagged = sum(bool(s.flag) for s in review.slices)
    return (
        f"{tested} slice{'s' if tested != 1 else ''} tested; a slice is flagged only when its "
        f"Holm-adjusted p-value is below {FAMILY_LEVEL:.0%} (family-wise), so reading every "
        f"row does not multiply false alarms. p is the larger of the paired bootstrap's and "
        f"Student's t-test's p-value of no change (the bootstrap's alone is too small too "
        f"often). {flagged} flagged."
    )


def lottery_shown(review: Review) -> pd.DataFrame:
    columns = ["rank", "case", "passes/runs", "releases in a row as lottery", "link"]
    rows = []
    for r in review.lottery.itertuples(index=False):
        key = case_link_key(r.case_id, r.case_idx)
        rows.append(
            {
                "rank": int(r.rank),
                "case": one_line(r.input) or key,
                "passes/runs": f"{int(r.passes)}/{int(r.runs)}",
                "releases in a row as lottery": int(r.releases_as_lottery),
                "link": "/lottery?"
                + urlencode({"suite": review.suite, "release": review.release, "case": key}),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def provenance_table(review: Review) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "role": e.role,
                "file": e.path,
                "bytes": e.bytes,
                "SHA-256": e.sha256,
                "format": e.format + (" (upgraded)" if e.upgraded else ""),
            }
            for e in review.evidence
        ],
        columns=["role", "file", "bytes", "SHA-256", "format"],
    )


def problems_table(review: Review) -> pd.DataFrame:
    return pd.DataFrame(list(review.problems), columns=["file", "scope", "reason"])


def ledger_breaks_table(breaks: Sequence[Any]) -> pd.DataFrame:
    """The records at which the ledger breaks (analysis.ledger_state.LedgerState.breaks)."""
    return pd.DataFrame(
        [{"record": b.file, "break": b.kind, "what": b.reason} for b in breaks],
        columns=["record", "break", "what"],
    )


def signoffs_table(entries: Sequence[ReviewEntry]) -> pd.DataFrame:
    columns = [
        "time", "suite", "release", "base", "decision", "by", "identity", "signature",
        "chain", "evidence", "changed files", "comment",
    ]  # fmt: skip
    rows = []
    for e in entries:
        r: Mapping[str, Any] = e.record
        rows.append(
            {
                "time": r.get("time"),
                "suite": r.get("suite"),
                "release": r.get("release"),
                "base": r.get("base") or "—",
                "decision": r.get("decision"),
                "by": r.get("by"),
                "identity": "verified" if r.get("identity_verified") else "unverified",
                "signature": e.signature.describe(),
                "chain": "chained" if e.chained else "predates chaining",
                "evidence": e.evidence.status,
                "changed files": "; ".join(
                    f"{f['path']}: {str(f['old'])[:12]}… → "
                    + (f"{str(f['new'])[:12]}…" if f["new"] else "missing")
                    for f in e.evidence.changed_files
                ),
                "comment": r.get("comment") or "",
            }
        )
    return pd.DataFrame(rows, columns=columns)
