"""Release gates: each rule of a policy judged on one release of one suite, PASSED,
FAILED or UNKNOWN, with the cases that hold a failed rule down.

The Gates page, `relidash gate` and the review page all judge through `gate_verdict`,
so a verdict in CI is the verdict on the page. UNKNOWN (k beyond the recorded runs, a
slice with no evaluated cases) fails: an ungateable claim is never a pass. With
`strict`, any load problem of the gated release's report file fails the gate too.

Must not: format a verdict (dashboard/render/gate_report.py does), import Streamlit,
hold SQL text, print, or exit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import duckdb
import numpy as np
import pandas as pd

from dashboard.analysis.estimates import (
    INTERVAL_NOTE,
    estimate,
    evaluated_arrays,
    number_or_none,
)
from dashboard.analysis.matching import case_keys, story_link_key
from dashboard.analysis.policy import GateRule
from dashboard.analysis.releases import find_release, find_suite_releases, shown_cases
from dashboard.analysis.slices import check_slices, in_slice
from dashboard.analysis.summary import load_problems, report_overview
from dashboard.data.queries import run_query
from dashboard.stats import METRIC_PASS_HAT_K, pass_at_k, pass_hat_k

PASSED: Final = "PASSED"
FAILED: Final = "FAILED"
UNKNOWN: Final = "UNKNOWN"


@dataclass(frozen=True)
class GateVerdict:
    verdict: str  # PASSED | FAILED | UNKNOWN
    metric: str
    k: int
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_cases: int
    threshold: float
    uses: str  # "ci_low" | "value"
    reason: str
    method: str = ""  # the interval's method (cluster-bootstrap | wilson | "" for UNKNOWN)


def verdict_of_row(row: dict[str, Any]) -> GateVerdict:
    """The GateVerdict behind one gate_table row."""
    return GateVerdict(
        verdict=row["verdict"],
        metric=row["metric"],
        k=int(row["k"]),
        value=number_or_none(row["pass_hat_k"]),
        ci_low=number_or_none(row["ci_low"]),
        ci_high=number_or_none(row["ci_high"]),
        n_cases=int(row["n_cases"]),
        threshold=float(row["threshold"]),
        uses=row["uses"],
        reason=row["reason"],
        method=row["method"],
    )


def gate_verdict(
    n: np.ndarray,
    c: np.ndarray,
    k: int,
    threshold: float,
    metric: str = METRIC_PASS_HAT_K,
    uses: str = "ci_low",
) -> GateVerdict:
    """multivon-eval's assert_pass_hat_k(k, min_ci_low): UNKNOWN never passes."""
    r = estimate(n, c, k, metric)
    if r.value is None:
        return GateVerdict(
            "UNKNOWN", metric, k, None, None, None, r.n_cases, threshold, uses, r.unknown_reason
        )
    observed = r.ci_low if uses == "ci_low" else r.value
    assert observed is not None
    verdict = "PASSED" if observed >= threshold else "FAILED"
    return GateVerdict(
        verdict, metric, k, r.value, r.ci_low, r.ci_high, r.n_cases, threshold, uses, "", r.method
    )


def gate_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    k: int,
    rules: Sequence[tuple[str | None, float]],
    count_agent_errors: bool = False,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """Verdict of each (slice tag or None, min CI low) rule on pass^k for every release."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors, window)
    rows = []
    for rel in releases.itertuples(index=False):
        group = cases[cases["report_id"] == rel.report_id]
        for tag, threshold in rules:
            n, c = evaluated_arrays(group[in_slice(group, tag)])
            v = gate_verdict(n, c, k, threshold)
            rows.append(
                {
                    "release": rel.release,
                    "release_rank": int(rel.release_rank),
                    "slice": tag or "(all cases)",
                    "threshold": threshold,
                    "verdict": v.verdict,
                    "pass_hat_k": v.value,
                    "ci_low": v.ci_low,
                    "ci_high": v.ci_high,
                    "n_cases": v.n_cases,
                    "k": k,
                    "interval": INTERVAL_NOTE[v.method],
                    # the rest of the verdict, so render/gate_report.py can say it
                    "metric": v.metric,
                    "uses": v.uses,
                    "reason": v.reason,
                    "method": v.method,
                }
            )
    return pd.DataFrame(rows)


def holding_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    k: int,
    rules: Sequence[tuple[str | None, float]],
    count_agent_errors: bool = False,
) -> pd.DataFrame:
    """The cases holding each FAILED rule down in the suite's latest release (lowest
    per-case pass^k first), with the key that links each to its Case page."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors)
    keys = case_keys(cases)
    latest = cases[cases["report_id"] == releases["report_id"].iloc[-1]]
    key_of = dict(zip(latest["case_idx"], keys[latest.index], strict=True))
    rows = []
    for tag, threshold in rules:
        members = latest[in_slice(latest, tag)]
        n, c = evaluated_arrays(members)
        if gate_verdict(n, c, k, threshold).verdict != FAILED:
            continue
        for case in holding_cases(members, METRIC_PASS_HAT_K, k):
            rows.append(
                {
                    "slice": tag or "(all cases)",
                    "case_id": case.case_id,
                    "input": case.input,
                    "passes/runs": f"{case.passes}/{case.runs}",
                    f"pass^{k}": case.value,
                    "link_key": story_link_key(str(key_of[case.case_idx])),
                }
            )
    columns = ["slice", "case_id", "input", "passes/runs", f"pass^{k}", "link_key"]
    return pd.DataFrame(rows, columns=columns)


@dataclass(frozen=True)
class HoldingCase:
    """A case below 1.0 on the rule's per-case metric: what keeps the suite's value down."""

    case_idx: int
    case_id: str | None
    input: str
    passes: int
    runs: int
    value: float  # the case's own pass^k (or pass@k) at the rule's k


@dataclass(frozen=True)
class RuleResult:
    rule: GateRule
    verdict: GateVerdict
    holding: tuple[HoldingCase, ...] = ()

    @property
    def passed(self) -> bool:
        return self.verdict.verdict == PASSED


@dataclass(frozen=True)
class GateReport:
    suite: str
    release: str
    file: str
    count_agent_errors: bool
    strict: bool
    results: tuple[RuleResult, ...]
    problems: tuple[tuple[str, str], ...] = ()  # (scope, reason) of the gated file

    @property
    def strict_failed(self) -> bool:
        return self.strict and bool(self.problems)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and not self.strict_failed

    @property
    def failures(self) -> int:
        return sum(not r.passed for r in self.results) + int(self.strict_failed)

    @property
    def verdict(self) -> str:
        """The release's verdict: FAILED if any rule failed (or the strict check), else
        UNKNOWN if any rule is, else PASSED. The Review page and the first page's
        headline both say this one."""
        verdicts = {r.verdict.verdict for r in self.results}
        if FAILED in verdicts or self.strict_failed:
            return FAILED
        return UNKNOWN if UNKNOWN in verdicts else PASSED


def holding_cases(cases: pd.DataFrame, metric: str, k: int) -> tuple[HoldingCase, ...]:
    """Evaluated cases whose own metric at k is below 1, lowest first.

    Ties go to the lower pass rate, then file order. Every case must have k <= n
    (the caller only asks when the suite-level value is known).
    """
    counted = cases[cases["n"].notna()]
    if counted.empty:
        return ()
    n = counted["n"].to_numpy(dtype=np.int64)
    c = counted["c"].to_numpy(dtype=np.int64)
    estimator = pass_hat_k if metric == METRIC_PASS_HAT_K else pass_at_k
    values = np.atleast_1d(estimator(n, c, k))
    below = np.flatnonzero(values < 1.0)
    order = below[np.lexsort((below, c[below] / n[below], values[below]))]
    rows = counted.iloc[order]
    return tuple(
        HoldingCase(
            case_idx=int(row.case_idx),
            case_id=row.case_id if isinstance(row.case_id, str) and row.case_id else None,
            input=row.input if isinstance(row.input, str) else "",
            passes=int(row.c),
            runs=int(row.n),
            value=float(value),
        )
        for row, value in zip(rows.itertuples(index=False), values[order], strict=True)
    )


def _no_cases_reason(cases: pd.DataFrame, rule: GateRule, release: str) -> str:
    """Why a slice has nothing to estimate from, in the words a CI log reader needs."""
    if not rule.slice:
        return f"UNKNOWN — release {release} has no evaluated cases to estimate from."
    members = cases[in_slice(cases, rule.slice)]
    if members.empty:
        return f"UNKNOWN — no case of release {release} carries the tag {rule.slice}."
    statuses = ", ".join(
        f"{count} {status}" for status, count in members["status"].value_counts().items()
    )
    return (
        f"UNKNOWN — slice {rule.slice} has no evaluated cases in release {release} "
        f"(its {len(members)} cases: {statuses})."
    )


def evaluate_rule(cases: pd.DataFrame, rule: GateRule, release: str = "") -> RuleResult:
    """One rule on one report's cases (suite_cases rows, in file order)."""
    members = cases[in_slice(cases, rule.slice)]
    n, c = evaluated_arrays(members)
    verdict = gate_verdict(n, c, rule.k, rule.threshold, rule.metric, rule.uses)
    if verdict.verdict == UNKNOWN:
        if verdict.n_cases == 0:
            verdict = dataclasses.replace(verdict, reason=_no_cases_reason(cases, rule, release))
        return RuleResult(rule, verdict)
    holding = holding_cases(members, rule.metric, rule.k) if verdict.verdict == FAILED else ()
    return RuleResult(rule, verdict, holding)


def evaluate_rules(
    cases: pd.DataFrame, rules: Sequence[GateRule], release: str = ""
) -> tuple[RuleResult, ...]:
    return tuple(evaluate_rule(cases, rule, release) for rule in rules)


def run_gate(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    release: str,
    rules: Sequence[GateRule],
    *,
    count_agent_errors: bool = False,
    strict: bool = False,
) -> GateReport:
    """Judge `rules` on one release of a suite; UnknownName for a bad suite, release or slice."""
    releases = find_suite_releases(report_overview(con), suite)
    row = find_release(releases, release)
    cases = run_query(
        con, "suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=None
    )
    check_slices(cases, suite, (rule.slice for rule in rules))
    this = cases[cases["report_id"] == row["report_id"]]
    problems = load_problems(con)
    own = problems[problems["file"] == row["file"]]
    return GateReport(
        suite=suite,
        release=str(row["release"]),
        file=str(row["file"]),
        count_agent_errors=count_agent_errors,
        strict=strict,
        results=evaluate_rules(this, rules, str(row["release"])),
        problems=tuple((str(p.scope), str(p.reason)) for p in own.itertuples(index=False)),
    )
