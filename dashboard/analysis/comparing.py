"""Compare two releases of a suite case by case: paired deltas and the case ledger.

Cases are matched across the two releases with `analysis.matching` (case_id where both
have one, else input text, and input text where the two share no case id), the rule the
dashboard's case history uses; the comparison says which rule matched them, and says
loudly when nothing matched. A matched case
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
from dashboard.analysis.matching import BY_CASE_ID, BY_INPUT_ACROSS_IDS, keyed_rows, match_rule
from dashboard.analysis.releases import find_release, find_suite_releases
from dashboard.analysis.slices import check_slices
from dashboard.analysis.summary import report_overview
from dashboard.data.catalog.queries import run_query
from dashboard.data.formats import MULTIVON
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
    base_id: str | None = None  # the base's case id, where it differs in scheme from head's


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
    matched_by: str = BY_CASE_ID  # analysis.matching's rule for the two releases

    @property
    def n_pairs(self) -> int:
        return sum(e.bucket != NOT_EVALUATED for e in self.ledger)

    @property
    def no_match(self) -> bool:
        """Both releases have cases and none of them matched: no Δ can mean anything."""
        return not self.ledger and bool(self.added) and bool(self.removed)

    @property
    def matching_note(self) -> str | None:
        """What a reader must know about how cases were matched, or None when by case id."""
        if self.no_match:
            return (
                f"0 cases matched: {self.base_release} and {self.head_release} share no case id "
                f"and no input ({len(self.removed)} cases in base only, {len(self.added)} in "
                "head only), so every Δ is UNKNOWN. Check that the two files are the same suite."
            )
        if self.matched_by == BY_INPUT_ACROSS_IDS:
            return (
                f"Cases matched by input: {self.base_release} and {self.head_release} share no "
                f"case id (the ids changed scheme, e.g. {_id_example(self.ledger)}); "
                f"{len(self.ledger)} cases with the same input are paired."
            )
        return None

    def buckets(self) -> dict[str, list[LedgerEntry]]:
        out: dict[str, list[LedgerEntry]] = {b: [] for b in LEDGER_BUCKETS}
        for entry in self.ledger:
            out[entry.bucket].append(entry)
        return out


def _id_example(ledger: Sequence[LedgerEntry]) -> str:
    """'sha256:1f2e… → SUP-101' for the first matched case carrying ids on both sides."""
    for entry in ledger:
        if entry.base_id and entry.case_id and entry.base_id != entry.case_id:
            return f"{_short_id(entry.base_id)} → {_short_id(entry.case_id)}"
    return "one release's ids are not the other's"


def _short_id(case_id: str) -> str:
    return case_id[:14] + "…" if case_id.startswith("sha256:") else case_id


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
        base_id = _case_id(b["case_id"])
        matched.append(
            LedgerEntry(
                key,
                ident,
                _text(h["input"]),
                bucket,
                before,
                after,
                base_id if base_id != ident else None,
            )
        )
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
        con, "read/suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=None
    )
    check_slices(cases, suite, [tag])
    base_cases = cases[cases["report_id"] == base_row["report_id"]]
    head_cases = cases[cases["report_id"] == head_row["report_id"]]
    k, k_source, deltas, matched, added, removed = compare_cases(
        base_cases, head_cases, k, tag, str(head_row["harness"])
    )
    rule = match_rule(base_cases.to_dict("records"), head_cases.to_dict("records"))
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
        matched_by=rule,
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
        "matched_by": comparison.matched_by,
        "matching_note": comparison.matching_note,
        "pairs": comparison.n_pairs,
        "interval": INTERVAL_NOTE,
        "deltas": {d.key: d.as_json() for d in comparison.deltas},
        "ledger": {b: [_entry_json(e) for e in entries] for b, entries in buckets.items()},
        "added": [_entry_json(e) for e in comparison.added],
        "removed": [_entry_json(e) for e in comparison.removed],
    }
