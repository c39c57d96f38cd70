"""Compare two releases of a suite case by case: paired deltas and the case ledger.

Cases are matched across the two releases with `views.case_keys` (case_id where both
have one, else input text), the rule the dashboard's case history uses. A matched case
evaluated in both releases is a *pair*: Δpass@1, Δpass@k and Δpass^k are means of
per-case differences over the pairs, with a paired cluster-bootstrap CI
(`stats.paired`, seed 0), which cancels each case's difficulty out of the difference.
Nothing is dropped silently: cases in one release only are listed as added or removed,
and matched cases that are not evaluated in both (errors, skips) have their own bucket.

The ledger puts every matched case in exactly one bucket, by how its passes/runs moved
(`views.classify_change`: reliable = every run passed, failing = none did, flaky =
some did): regressed (to failing), fixed (failing to reliable), newly flaky (reliable
or failing to flaky), stabilised (flaky to reliable), still failing, still flaky,
still passing, and not evaluated.

No Streamlit, no SQL text, no printing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import duckdb
import numpy as np
import pandas as pd

from dashboard import service, views
from dashboard.data.queries import run_query
from dashboard.gating import check_slices, find_release, find_suite_releases
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K, pass_at_k, pass_hat_k
from dashboard.stats.paired import PairedDelta, paired_bootstrap_ci
from dashboard.terminal import one_line

N_BOOT: Final = 2000
SEED: Final = 0
CONFIDENCE: Final = 0.95
INTERVAL_NOTE: Final = (
    f"paired cluster bootstrap over matched cases ({N_BOOT} resamples, seed {SEED}, "
    f"{CONFIDENCE:.0%})"
)

REGRESSED: Final = "regressed"
FIXED: Final = "fixed"
NEWLY_FLAKY: Final = "newly flaky"
STABILISED: Final = "stabilised"
STILL_FAILING: Final = "still failing"
STILL_FLAKY: Final = "still flaky"
STILL_PASSING: Final = "still passing"
NOT_EVALUATED: Final = "not evaluated"
LEDGER_BUCKETS: Final = (
    REGRESSED,
    FIXED,
    NEWLY_FLAKY,
    STABILISED,
    STILL_FAILING,
    STILL_FLAKY,
    STILL_PASSING,
    NOT_EVALUATED,
)
# views.classify_change's words for a case seen in both releases -> the ledger's
_BUCKET_OF_CHANGE: Final = {
    "regressed": REGRESSED,
    "fixed": FIXED,
    "became flaky": NEWLY_FLAKY,
    "partly fixed": NEWLY_FLAKY,  # failing -> flaky: the ledger's "newly flaky" too
    "stabilised": STABILISED,
    "still failing": STILL_FAILING,
    "still flaky": STILL_FLAKY,
    "still reliable": STILL_PASSING,
}
DELTA_KEYS: Final = ("pass_at_1", "pass_at_k", "pass_hat_k")


@dataclass(frozen=True)
class CaseSide:
    """One case in one release."""

    case_idx: int
    status: str
    passes: int | None  # None when the case is not evaluated under the policy
    runs: int | None

    def cell(self) -> str:
        return f"{self.passes}/{self.runs}" if self.passes is not None else self.status


@dataclass(frozen=True)
class LedgerEntry:
    key: str
    case_id: str | None
    input: str
    bucket: str  # one of LEDGER_BUCKETS, or "added" / "removed"
    base: CaseSide | None
    head: CaseSide | None


@dataclass(frozen=True)
class MetricDelta:
    """head − base of one metric over the pairs; `delta is None` means UNKNOWN."""

    key: str  # pass_at_1 | pass_at_k | pass_hat_k
    metric: str  # pass@k | pass^k
    k: int
    base: float | None  # the metric's mean over the pairs in base
    head: float | None
    delta: PairedDelta | None
    unknown_reason: str = ""

    @property
    def name(self) -> str:
        return self.metric.replace("k", str(self.k))


@dataclass(frozen=True)
class Comparison:
    suite: str
    base_release: str
    head_release: str
    base_file: str
    head_file: str
    k: int
    k_source: str  # "given" | "largest k every pair supports"
    slice: str | None
    count_agent_errors: bool
    deltas: tuple[MetricDelta, ...]
    ledger: tuple[LedgerEntry, ...]  # every matched case, in head's case order
    added: tuple[LedgerEntry, ...]
    removed: tuple[LedgerEntry, ...]

    @property
    def n_pairs(self) -> int:
        return sum(e.bucket != NOT_EVALUATED for e in self.ledger)

    def buckets(self) -> dict[str, list[LedgerEntry]]:
        out: dict[str, list[LedgerEntry]] = {b: [] for b in LEDGER_BUCKETS}
        for entry in self.ledger:
            out[entry.bucket].append(entry)
        return out


# ---- matching ----------------------------------------------------------------------------


def _side(row: dict[str, Any]) -> CaseSide:
    n = row["n"]
    evaluated = not service.is_missing(n)  # NULL arrives as None or NaN
    return CaseSide(
        case_idx=int(row["case_idx"]),
        status=str(row["status"]),
        passes=int(row["c"]) if evaluated else None,
        runs=int(n) if evaluated else None,
    )


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _case_id(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _with_occurrence(keys: Sequence[str], sides: Sequence[str]) -> list[str]:
    """Make keys unique within each release: the i-th case sharing a key gets '#i'.

    Two cases of one report with one input and no case_id are indistinguishable; they
    are paired with their counterparts in file order rather than dropped.
    """
    seen: dict[tuple[str, str], int] = {}
    out = []
    for key, side in zip(keys, sides, strict=True):
        seen[(side, key)] = seen.get((side, key), 0) + 1
        out.append(key if seen[(side, key)] == 1 else f"{key}#{seen[(side, key)]}")
    return out


def _has_tag(row: dict[str, Any], tag: str) -> bool:
    tags = row.get("tags")
    return tags is not None and tag in [str(t) for t in tags]


def match_cases(
    base: pd.DataFrame, head: pd.DataFrame, tag: str | None = None
) -> tuple[list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]]:
    """(matched, added, removed) ledger entries for two reports' suite_cases rows.

    `tag` keeps the cases that carry it in either release, so a case whose tag was
    added or dropped between releases is still compared, not mistaken for new.
    Plain rows, not DataFrame operations: the Releases page runs this for every pair of
    consecutive releases.
    """
    return match_case_rows(base.to_dict("records"), head.to_dict("records"), tag)


def match_case_rows(
    base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]], tag: str | None = None
) -> tuple[list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]]:
    """match_cases over suite_cases rows as dicts."""
    base_rows, head_rows = _keyed_rows(base, head, tag)
    matched, added = [], []
    for key, h in head_rows.items():
        b = base_rows.get(key)
        ident = _case_id(h["case_id"]) or (_case_id(b["case_id"]) if b is not None else None)
        if b is None:
            added.append(LedgerEntry(key, ident, _text(h["input"]), "added", None, _side(h)))
            continue
        before, after = _side(b), _side(h)
        if before.passes is None or after.passes is None:
            bucket = NOT_EVALUATED
        else:
            bucket = _BUCKET_OF_CHANGE[views.classify_change(before.cell(), after.cell())]
        matched.append(LedgerEntry(key, ident, _text(h["input"]), bucket, before, after))
    removed = [
        LedgerEntry(key, _case_id(b["case_id"]), _text(b["input"]), "removed", _side(b), None)
        for key, b in base_rows.items()
        if key not in head_rows
    ]
    return matched, added, removed


def _keyed_rows(
    base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]], tag: str | None
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Each release's rows by case key (unique within the release), in file order."""
    rows = [("base", r) for r in base]
    rows += [("head", r) for r in head]
    keys = _with_occurrence(
        views.case_key_list([r["case_id"] for _, r in rows], [r["input"] for _, r in rows]),
        [side for side, _ in rows],
    )
    if tag:
        keep = {key for (_, r), key in zip(rows, keys, strict=True) if _has_tag(r, tag)}
        pairs = [(sr, key) for sr, key in zip(rows, keys, strict=True) if key in keep]
    else:
        pairs = list(zip(rows, keys, strict=True))
    base_rows = {key: r for (side, r), key in pairs if side == "base"}
    head_rows = {key: r for (side, r), key in pairs if side == "head"}
    return base_rows, head_rows


def paired_counts(
    base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]]
) -> tuple[np.ndarray, ...]:
    """(n_base, c_base, n_head, c_head) of the cases evaluated in both releases, in head's
    order: the pairs match_case_rows yields, without building the ledger (the Releases
    page needs only the change, for every pair of consecutive releases)."""
    base_rows, head_rows = _keyed_rows(base, head, None)
    counts: list[tuple[int, int, int, int]] = []
    for key, h in head_rows.items():
        b = base_rows.get(key)
        if b is not None and not service.is_missing(b["n"]) and not service.is_missing(h["n"]):
            counts.append((int(b["n"]), int(b["c"]), int(h["n"]), int(h["c"])))
    columns = np.array(counts, dtype=np.int64).reshape(-1, 4).T
    return tuple(columns)


# ---- deltas ------------------------------------------------------------------------------


def _pair_counts(pairs: Sequence[LedgerEntry]) -> tuple[np.ndarray, ...]:
    def column(side: str, field: str) -> np.ndarray:
        return np.array([getattr(getattr(e, side), field) for e in pairs], dtype=np.int64)

    return (
        column("base", "runs"),
        column("base", "passes"),
        column("head", "runs"),
        column("head", "passes"),
    )


def default_k(pairs: Sequence[LedgerEntry]) -> int:
    """The largest k every pair supports in both releases (1 when there are no pairs)."""
    if not pairs:
        return 1
    n_base, _, n_head, _ = _pair_counts(pairs)
    return int(min(n_base.min(), n_head.min()))


def metric_deltas(pairs: Sequence[LedgerEntry], k: int) -> tuple[MetricDelta, ...]:
    """Δpass@1, Δpass@k, Δpass^k over the pairs, each with its paired bootstrap CI."""
    specs = (
        (DELTA_KEYS[0], METRIC_PASS_AT_K, 1),
        (DELTA_KEYS[1], METRIC_PASS_AT_K, k),
        (DELTA_KEYS[2], METRIC_PASS_HAT_K, k),
    )
    counts = _pair_counts(pairs)
    return tuple(counts_delta(counts, key, metric, kk) for key, metric, kk in specs)


def counts_delta(counts: Sequence[np.ndarray], key: str, metric: str, k: int) -> MetricDelta:
    """One metric's change at k over (n_base, c_base, n_head, c_head) arrays, one entry per
    matched pair, with its paired bootstrap CI."""
    n_base, c_base, n_head, c_head = counts
    if n_base.size == 0:
        return MetricDelta(
            key, metric, k, None, None, None, "UNKNOWN — no case is evaluated in both releases."
        )
    shortest = int(min(n_base.min(), n_head.min()))
    if k > shortest:
        reason = (
            f"UNKNOWN — k={k} exceeds the {shortest} trials of the shortest-run matched "
            f"case; pass k <= {shortest}. multivon-eval does not extrapolate."
        )
        return MetricDelta(key, metric, k, None, None, None, reason)
    estimator = pass_hat_k if metric == METRIC_PASS_HAT_K else pass_at_k
    before = np.atleast_1d(estimator(n_base, c_base, k))
    after = np.atleast_1d(estimator(n_head, c_head, k))
    delta = paired_bootstrap_ci(before, after, CONFIDENCE, N_BOOT, SEED)
    return MetricDelta(key, metric, k, float(before.mean()), float(after.mean()), delta)


def compare_cases(
    base: pd.DataFrame, head: pd.DataFrame, k: int | None = None, tag: str | None = None
) -> tuple[
    int, str, tuple[MetricDelta, ...], list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]
]:
    """(k, k_source, deltas, matched, added, removed) for two reports' suite_cases rows."""
    return compare_case_rows(base.to_dict("records"), head.to_dict("records"), k, tag)


def compare_case_rows(
    base: Sequence[dict[str, Any]],
    head: Sequence[dict[str, Any]],
    k: int | None = None,
    tag: str | None = None,
) -> tuple[
    int, str, tuple[MetricDelta, ...], list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]
]:
    """compare_cases over suite_cases rows as dicts (no DataFrame work per pair)."""
    matched, added, removed = match_case_rows(base, head, tag)
    pairs = [e for e in matched if e.bucket != NOT_EVALUATED]
    k_source = "given"
    if k is None:
        k, k_source = default_k(pairs), "the largest k every matched case supports"
    return k, k_source, metric_deltas(pairs, k), matched, added, removed


def compare_releases(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    base: str,
    head: str,
    *,
    k: int | None = None,
    tag: str | None = None,
    count_agent_errors: bool = False,
) -> Comparison:
    """Compare two releases of a suite; gating.UnknownName for a bad suite, release or slice."""
    releases = find_suite_releases(service.report_overview(con), suite)
    base_row, head_row = find_release(releases, base), find_release(releases, head)
    cases = run_query(con, "suite_cases", suite=suite, count_agent_errors=count_agent_errors)
    check_slices(cases, suite, [tag])
    base_cases = cases[cases["report_id"] == base_row["report_id"]]
    head_cases = cases[cases["report_id"] == head_row["report_id"]]
    k, k_source, deltas, matched, added, removed = compare_cases(base_cases, head_cases, k, tag)
    return Comparison(
        suite=suite,
        base_release=str(base_row["release"]),
        head_release=str(head_row["release"]),
        base_file=str(base_row["file"]),
        head_file=str(head_row["file"]),
        k=k,
        k_source=k_source,
        slice=tag,
        count_agent_errors=count_agent_errors,
        deltas=deltas,
        ledger=tuple(matched),
        added=tuple(added),
        removed=tuple(removed),
    )


# ---- rendering ---------------------------------------------------------------------------


def _side_json(side: CaseSide | None) -> dict[str, Any] | None:
    if side is None:
        return None
    return {
        "case_idx": side.case_idx,
        "status": side.status,
        "passes": side.passes,
        "runs": side.runs,
    }


def _entry_json(entry: LedgerEntry) -> dict[str, Any]:
    return {
        "case_id": entry.case_id,
        "input": entry.input,
        "base": _side_json(entry.base),
        "head": _side_json(entry.head),
    }


def comparison_json(comparison: Comparison) -> dict[str, Any]:
    """The document `relidash compare --json` prints. Deltas are fractions, not points."""
    buckets = comparison.buckets()
    return {
        "suite": comparison.suite,
        "base": {"release": comparison.base_release, "file": comparison.base_file},
        "head": {"release": comparison.head_release, "file": comparison.head_file},
        "k": comparison.k,
        "k_source": comparison.k_source,
        "slice": comparison.slice,
        "count_agent_errors": comparison.count_agent_errors,
        "matched": len(comparison.ledger),
        "pairs": comparison.n_pairs,
        "interval": INTERVAL_NOTE,
        "deltas": {
            d.key: {
                "metric": d.metric,
                "k": d.k,
                "base": d.base,
                "head": d.head,
                "delta": d.delta.delta if d.delta else None,
                "ci_low": d.delta.ci_low if d.delta else None,
                "ci_high": d.delta.ci_high if d.delta else None,
                "n_pairs": d.delta.n_pairs if d.delta else 0,
                "unknown_reason": d.unknown_reason or None,
            }
            for d in comparison.deltas
        },
        "ledger": {b: [_entry_json(e) for e in entries] for b, entries in buckets.items()},
        "added": [_entry_json(e) for e in comparison.added],
        "removed": [_entry_json(e) for e in comparison.removed],
    }


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def _entry_line(entry: LedgerEntry) -> str:
    before = entry.base.cell() if entry.base else "—"
    after = entry.head.cell() if entry.head else "—"
    text = one_line(entry.input) or entry.case_id or entry.key
    return f"    {before:>13} → {after:<13} {text}"


def render_text(comparison: Comparison, list_still_passing: bool = False) -> str:
    """The comparison for a terminal: deltas with CIs, then the ledger case by case."""
    c = comparison
    policy = "agent errors count as failures" if c.count_agent_errors else "agent errors excluded"
    out = [
        f"relidash compare: suite {c.suite}, {c.base_release} → {c.head_release} "
        f"({c.slice or 'all cases'}; {policy})",
        f"  base {c.base_file}",
        f"  head {c.head_file}",
        f"  {len(c.ledger)} cases matched, {c.n_pairs} evaluated in both; "
        f"{len(c.added)} added, {len(c.removed)} removed; k = {c.k} ({c.k_source})",
        "",
        f"  {'':<8} {'base':>7} {'head':>7} {'Δ pts':>7}   95% CI (pts)",
    ]
    for d in c.deltas:
        if d.delta is None or d.base is None or d.head is None:
            out.append(f"  {d.name:<8} {d.unknown_reason}")
            continue
        out.append(
            f"  {d.name:<8} {100 * d.base:>6.1f}% {100 * d.head:>6.1f}% {_pts(d.delta.delta):>7}"
            f"   [{_pts(d.delta.ci_low)}, {_pts(d.delta.ci_high)}]"
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
