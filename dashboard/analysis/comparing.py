"""Compare two releases of a suite case by case: paired deltas and the case ledger.

Cases are matched across the two releases with `analysis.matching` (case_id where both
have one, else input text), the rule the dashboard's case history uses. A matched case
evaluated in both releases is a *pair*: Δpass@1, Δpass@k and Δpass^k are means of
per-case differences over the pairs, with a paired cluster-bootstrap CI
(`stats.paired`, seed 0), which cancels each case's difficulty out of the difference.
Nothing is dropped silently: cases in one release only are listed as added or removed,
and matched cases that are not evaluated in both (errors, skips) have their own bucket.

The ledger puts every matched case in exactly one bucket, by how its passes/runs moved
(`analysis.cases.classify_change`: reliable = every run passed, failing = none did, flaky =
some did): regressed (to failing), fixed (failing to reliable), newly flaky (reliable
to flaky), started passing sometimes (failing to flaky: the opposite news), stabilised (flaky to reliable), still failing, still flaky,
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

from dashboard.analysis.cases import classify_change
from dashboard.analysis.deltas import (
    DELTA_KEYS,
    INTERVAL_NOTE,
    MetricDelta,
    counts_delta,
)
from dashboard.analysis.estimates import is_missing
from dashboard.analysis.matching import keyed_rows
from dashboard.analysis.releases import find_release, find_suite_releases
from dashboard.analysis.slices import check_slices
from dashboard.analysis.summary import report_overview
from dashboard.data.formats import MULTIVON
from dashboard.data.queries import run_query
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K

REGRESSED: Final = "regressed"


FIXED: Final = "fixed"


NEWLY_FLAKY: Final = "newly flaky"
# failing -> flaky is the opposite news of reliable -> flaky, so it has its own bucket
STARTED_PASSING: Final = "started passing sometimes"


STABILISED: Final = "stabilised"


STILL_FAILING: Final = "still failing"


STILL_FLAKY: Final = "still flaky"


STILL_PASSING: Final = "still passing"


NOT_EVALUATED: Final = "not evaluated"


LEDGER_BUCKETS: Final = (
    REGRESSED,
    FIXED,
    NEWLY_FLAKY,
    STARTED_PASSING,
    STABILISED,
    STILL_FAILING,
    STILL_FLAKY,
    STILL_PASSING,
    NOT_EVALUATED,
)


# classify_change's words for a case seen in both releases -> the ledger's
_BUCKET_OF_CHANGE: Final = {
    "regressed": REGRESSED,
    "fixed": FIXED,
    "became flaky": NEWLY_FLAKY,
    "started passing sometimes": STARTED_PASSING,
    "stabilised": STABILISED,
    "still failing": STILL_FAILING,
    "still flaky": STILL_FLAKY,
    "still reliable": STILL_PASSING,
}


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


def bucket_of_change(before: str, after: str) -> str:
    """The ledger bucket of a case present in both releases, from its two cells ("c/n"
    when evaluated, else its status): the rule match_case_rows files cases by."""
    if "/" not in before or "/" not in after:
        return NOT_EVALUATED
    return _BUCKET_OF_CHANGE[classify_change(before, after)]


def _side(row: dict[str, Any]) -> CaseSide:
    n = row["n"]
    evaluated = not is_missing(n)  # NULL arrives as None or NaN
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
    base_rows, head_rows = keyed_rows(base, head, tag)
    matched, added = [], []
    for key, h in head_rows.items():
        b = base_rows.get(key)
        ident = _case_id(h["case_id"]) or (_case_id(b["case_id"]) if b is not None else None)
        if b is None:
            added.append(LedgerEntry(key, ident, _text(h["input"]), "added", None, _side(h)))
            continue
        before, after = _side(b), _side(h)
        bucket = bucket_of_change(before.cell(), after.cell())
        matched.append(LedgerEntry(key, ident, _text(h["input"]), bucket, before, after))
    removed = [
        LedgerEntry(key, _case_id(b["case_id"]), _text(b["input"]), "removed", _side(b), None)
        for key, b in base_rows.items()
        if key not in head_rows
    ]
    return matched, added, removed


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


def metric_deltas(
    pairs: Sequence[LedgerEntry], k: int, harness: str = MULTIVON
) -> tuple[MetricDelta, ...]:
    """Δpass@1, Δpass@k, Δpass^k over the pairs, each with its paired bootstrap CI."""
    specs = (
        (DELTA_KEYS[0], METRIC_PASS_AT_K, 1),
        (DELTA_KEYS[1], METRIC_PASS_AT_K, k),
        (DELTA_KEYS[2], METRIC_PASS_HAT_K, k),
    )
    counts = _pair_counts(pairs)
    return tuple(counts_delta(counts, key, metric, kk, harness) for key, metric, kk in specs)


def compare_cases(
    base: pd.DataFrame,
    head: pd.DataFrame,
    k: int | None = None,
    tag: str | None = None,
    harness: str = MULTIVON,
) -> tuple[
    int, str, tuple[MetricDelta, ...], list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]
]:
    """(k, k_source, deltas, matched, added, removed) for two reports' suite_cases rows
    (`harness`: the head report's, whose words an UNKNOWN delta uses)."""
    return compare_case_rows(base.to_dict("records"), head.to_dict("records"), k, tag, harness)


def compare_case_rows(
    base: Sequence[dict[str, Any]],
    head: Sequence[dict[str, Any]],
    k: int | None = None,
    tag: str | None = None,
    harness: str = MULTIVON,
) -> tuple[
    int, str, tuple[MetricDelta, ...], list[LedgerEntry], list[LedgerEntry], list[LedgerEntry]
]:
    """compare_cases over suite_cases rows as dicts (no DataFrame work per pair)."""
    matched, added, removed = match_case_rows(base, head, tag)
    pairs = [e for e in matched if e.bucket != NOT_EVALUATED]
    k_source = "given"
    if k is None:
        k, k_source = default_k(pairs), "the largest k every matched case supports"
    return k, k_source, metric_deltas(pairs, k, harness), matched, added, removed


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
    """Compare two releases of a suite; UnknownName for a bad suite, release or slice."""
    releases = find_suite_releases(report_overview(con), suite)
    base_row, head_row = find_release(releases, base), find_release(releases, head)
    cases = run_query(
        con, "suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=None
    )
    check_slices(cases, suite, [tag])
    base_cases = cases[cases["report_id"] == base_row["report_id"]]
    head_cases = cases[cases["report_id"] == head_row["report_id"]]
    k, k_source, deltas, matched, added, removed = compare_cases(
        base_cases, head_cases, k, tag, str(head_row["harness"])
    )
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
        "deltas": {d.key: d.as_json() for d in comparison.deltas},
        "ledger": {b: [_entry_json(e) for e in entries] for b, entries in buckets.items()},
        "added": [_entry_json(e) for e in comparison.added],
        "removed": [_entry_json(e) for e in comparison.removed],
    }
