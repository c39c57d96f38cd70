"""Release gates: each rule of a policy judged on one release of one suite, PASSED,
FAILED, UNDECIDED or UNKNOWN, with the cases that hold a failed rule down.

The Gates page, `relidash gate` and the review page all judge through `gate_verdict`,
so a verdict in CI is the verdict on the page. A threshold is judged against the 95%
interval: PASSED when the evidence is for the claim (the CI's lower bound reaches the
threshold; for a `min_value` rule, the estimate does), FAILED when it is against it (the
CI's upper bound is below), and UNDECIDED when the interval straddles the threshold: the
evidence does not decide, and more trials would (analysis/planning.py says how many).
A `max_drop` rule is judged the same way on the paired change against a base release,
the interval `relidash compare` prints. Per-case rules hold when every evaluated case of
the slice does. UNDECIDED and UNKNOWN (k beyond the recorded runs, a slice with no
evaluated cases) fail: an undecided or ungateable claim is never a pass. With `strict`,
any load problem of the gated release's report file fails the gate too.

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

from dashboard.analysis.comparing import compare_cases
from dashboard.analysis.deltas import MetricDelta
from dashboard.analysis.estimates import (
    INTERVAL_NOTE,
    METHOD_PAIRED,
    METHOD_WIDENED,
    estimate,
    evaluated_arrays,
    number_or_none,
    verdict_delta_interval,
    verdict_interval,
)
from dashboard.analysis.matching import case_keys, story_link_key
from dashboard.analysis.planning import DecidePlan, decide_plan
from dashboard.analysis.policy import (
    USES_CASE_RATE,
    USES_CI_LOW,
    USES_MAX_DROP,
    GateRule,
)
from dashboard.analysis.releases import find_release, find_suite_releases, shown_cases
from dashboard.analysis.slices import check_slices, in_slice
from dashboard.analysis.summary import load_problems, report_overview
from dashboard.data.catalog.queries import run_query
from dashboard.data.formats import MULTIVON
from dashboard.stats import METRIC_PASS_HAT_K, pass_at_k, pass_hat_k

PASSED: Final = "PASSED"
FAILED: Final = "FAILED"
UNDECIDED: Final = "UNDECIDED"  # the interval straddles the threshold: more trials decide it
UNKNOWN: Final = "UNKNOWN"
VERDICTS: Final = (PASSED, FAILED, UNDECIDED, UNKNOWN)


@dataclass(frozen=True)
class GateVerdict:
    """A rule's verdict and the numbers behind it. For a max_drop rule, value and the CI are
    the paired change against `base` and n_cases the matched pairs; for a per-case rule,
    value is the weakest case's and there is no CI."""

    verdict: str  # PASSED | FAILED | UNDECIDED | UNKNOWN
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
    base: str = ""  # a max_drop rule's base release


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


def three_way(
    observed: float, value: float, low: float | None, high: float | None, threshold: float
) -> str:
    """PASSED when the evidence is for `observed >= threshold`, FAILED when the interval
    lies wholly below it, UNDECIDED between. For a CI-lower-bound rule `observed` is the
    bound itself; for a value rule, the estimate.

    A claim of perfection (threshold 1.0) is refuted by one observed failure whatever the
    interval says: a case that failed a trial has a success rate below 1, and so does the
    suite. The percentile interval's top is 1.0 whenever a resample can miss that case.
    """
    if observed >= threshold:
        return PASSED
    if (high is not None and high < threshold) or (threshold >= 1.0 and value < 1.0):
        return FAILED
    if high is None or low is None:
        return FAILED  # no interval (per-case counts): the estimate is the whole evidence
    return UNDECIDED


def gate_verdict(
    n: np.ndarray,
    c: np.ndarray,
    k: int,
    threshold: float,
    metric: str = METRIC_PASS_HAT_K,
    uses: str = "ci_low",
    harness: str = MULTIVON,
) -> GateVerdict:
    """multivon-eval's assert_pass_hat_k(k, min_ci_low) with a third answer: UNDECIDED when
    the CI straddles the threshold. UNKNOWN never passes (and says why in the words of the
    harness that wrote the cases)."""
    r = estimate(n, c, k, metric, harness)
    if r.value is None:
        return GateVerdict(
            "UNKNOWN", metric, k, None, None, None, r.n_cases, threshold, uses, r.unknown_reason
        )
    assert r.ci_low is not None and r.ci_high is not None
    # where the reported interval covers too little to decide on, verdicts read a wider
    # one (estimates.verdict_interval), and the line says so
    low, high = verdict_interval(n, c, k, metric, r.ci_low, r.ci_high)
    method = METHOD_WIDENED if (low, high) != (r.ci_low, r.ci_high) else r.method
    observed = low if uses == USES_CI_LOW else r.value
    verdict = three_way(observed, r.value, low, high, threshold)
    return GateVerdict(
        verdict, metric, k, r.value, low, high, r.n_cases, threshold, uses, "", method
    )


def drop_verdict(delta: MetricDelta, rule: GateRule, base: str) -> GateVerdict:
    """A max_drop rule on the paired change head - base: PASSED when its CI's lower bound
    is at least -max_drop, FAILED when its upper bound is below -max_drop. The CI is the
    one `compare` prints, widened where it covers too little
    (estimates.verdict_delta_interval)."""
    d = delta.delta
    if d is None:
        return GateVerdict(
            UNKNOWN, rule.metric, rule.k, None, None, None, 0, rule.threshold, rule.uses,
            delta.unknown_reason, base=base,
        )  # fmt: skip
    low, high = verdict_delta_interval(d)
    method = METHOD_WIDENED if (low, high) != (d.ci_low, d.ci_high) else METHOD_PAIRED
    verdict = three_way(low, d.delta, low, high, -rule.threshold)
    return GateVerdict(
        verdict, rule.metric, rule.k, d.delta, low, high, d.n_pairs, rule.threshold,
        rule.uses, "", method, base,
    )  # fmt: skip


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
            v = gate_verdict(n, c, k, threshold, harness=str(rel.harness))
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
    """The cases holding each FAILED or UNDECIDED rule down in the suite's latest release (lowest
    per-case pass^k first), with the key that links each to its Case page."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors)
    keys = case_keys(cases)
    latest = cases[cases["report_id"] == releases["report_id"].iloc[-1]]
    key_of = dict(zip(latest["case_idx"], keys[latest.index], strict=True))
    rows = []
    for tag, threshold in rules:
        members = latest[in_slice(latest, tag)]
        n, c = evaluated_arrays(members)
        if gate_verdict(n, c, k, threshold).verdict not in (FAILED, UNDECIDED):
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
class CaseCheck:
    """One evaluated case under a per-case rule: its own value and whether it holds."""

    case: HoldingCase
    passed: bool


@dataclass(frozen=True)
class RuleResult:
    rule: GateRule
    verdict: GateVerdict
    holding: tuple[HoldingCase, ...] = ()
    # a per-case rule: every evaluated case of the slice, in file order (JUnit's test cases)
    cases: tuple[CaseCheck, ...] = ()
    # an UNDECIDED threshold rule: about how many more trials would decide it
    plan: DecidePlan | None = None

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
        UNKNOWN if any rule is, else UNDECIDED if any rule is, else PASSED. The Review page
        and the first page's headline both say this one."""
        verdicts = {r.verdict.verdict for r in self.results}
        if FAILED in verdicts or self.strict_failed:
            return FAILED
        for verdict in (UNKNOWN, UNDECIDED):
            if verdict in verdicts:
                return verdict
        return PASSED


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
        _holding_case(row, value)
        for row, value in zip(rows.itertuples(index=False), values[order], strict=True)
    )


def _holding_case(row: Any, value: float) -> HoldingCase:
    """One suite_cases row (an itertuples row) with its value under a rule."""
    return HoldingCase(
        case_idx=int(row.case_idx),
        case_id=row.case_id if isinstance(row.case_id, str) and row.case_id else None,
        input=row.input if isinstance(row.input, str) else "",
        passes=int(row.c),
        runs=int(row.n),
        value=float(value),
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


def _case_checks(members: pd.DataFrame, rule: GateRule) -> tuple[CaseCheck, ...]:
    counted = members[members["n"].notna()]
    n = counted["n"].to_numpy(dtype=np.int64)
    c = counted["c"].to_numpy(dtype=np.int64)
    values = c / n if rule.uses == USES_CASE_RATE else np.atleast_1d(pass_hat_k(n, c, rule.k))
    return tuple(
        CaseCheck(
            _holding_case(row, value),
            bool(value >= rule.threshold),
        )
        for row, value in zip(counted.itertuples(index=False), values, strict=True)
    )


def _per_case_result(members: pd.DataFrame, rule: GateRule, reason_if_empty: str) -> RuleResult:
    """Every evaluated case of the slice must reach the threshold on its own."""
    counted = members[members["n"].notna()]
    unknown = GateVerdict(
        UNKNOWN, rule.metric, rule.k, None, None, None, len(counted), rule.threshold, rule.uses,
        reason_if_empty,
    )  # fmt: skip
    if counted.empty:
        return RuleResult(rule, unknown)
    if rule.uses != USES_CASE_RATE:
        short = int((counted["n"] < rule.k).sum())
        if short:
            reason = (
                f"UNKNOWN — k={rule.k} exceeds the trials of {short} case(s) "
                f"(shortest {int(counted['n'].min())}); a case's pass^k needs k trials."
            )
            return RuleResult(rule, dataclasses.replace(unknown, reason=reason))
    checks = _case_checks(members, rule)
    below = sorted((ch.case for ch in checks if not ch.passed), key=lambda h: (h.value, h.case_idx))
    weakest = min(ch.case.value for ch in checks)
    verdict = GateVerdict(
        FAILED if below else PASSED, rule.metric, rule.k, weakest, None, None, len(checks),
        rule.threshold, rule.uses, "" if not below else f"{len(below)} of {len(checks)} cases below",
    )  # fmt: skip
    return RuleResult(rule, verdict, tuple(below), checks)


def evaluate_rule(
    cases: pd.DataFrame,
    rule: GateRule,
    release: str = "",
    base_cases: pd.DataFrame | None = None,
    base_release: str = "",
    harness: str = MULTIVON,
    plan: bool = True,
) -> RuleResult:
    """One rule on one report's cases (suite_cases rows, in file order); a max_drop rule
    also on its base release's cases. With `plan`, an UNDECIDED threshold rule carries how
    many more trials would decide it: a simulation, left out where it is not shown."""
    members = cases[in_slice(cases, rule.slice)]
    if rule.per_case:
        return _per_case_result(members, rule, _no_cases_reason(cases, rule, release))
    if rule.uses == USES_MAX_DROP:
        if base_cases is None:
            reason = f"UNKNOWN — release {release} has no earlier release to compare with."
            verdict = GateVerdict(
                UNKNOWN, rule.metric, rule.k, None, None, None, 0, rule.threshold, rule.uses,
                reason,
            )  # fmt: skip
            return RuleResult(rule, verdict)
        _, _, deltas, *_ = compare_cases(base_cases, cases, rule.k, rule.slice, harness)
        delta = deltas[2] if rule.metric == METRIC_PASS_HAT_K else deltas[1]
        return RuleResult(rule, drop_verdict(delta, rule, base_release))
    n, c = evaluated_arrays(members)
    verdict = gate_verdict(n, c, rule.k, rule.threshold, rule.metric, rule.uses, harness)
    if verdict.verdict == UNKNOWN:
        if verdict.n_cases == 0:
            verdict = dataclasses.replace(verdict, reason=_no_cases_reason(cases, rule, release))
        return RuleResult(rule, verdict)
    held = verdict.verdict in (FAILED, UNDECIDED)
    holding = holding_cases(members, rule.metric, rule.k) if held else ()
    more = None
    if plan and verdict.verdict == UNDECIDED:
        on_ci_low = rule.uses == USES_CI_LOW
        more = decide_plan(n, c, rule.k, rule.metric, rule.threshold, on_ci_low)
    return RuleResult(rule, verdict, holding, plan=more)


def evaluate_rules(
    cases: pd.DataFrame,
    rules: Sequence[GateRule],
    release: str = "",
    bases: dict[str, tuple[str, pd.DataFrame]] | None = None,
    harness: str = MULTIVON,
    plan: bool = True,
) -> tuple[RuleResult, ...]:
    """Each rule on one report's cases; `bases` maps a max_drop rule's base name ("" for
    the release before) to that release's label and cases."""
    results = []
    for rule in rules:
        base_release, base_cases = (bases or {}).get(rule.base or "", ("", None))
        results.append(evaluate_rule(cases, rule, release, base_cases, base_release, harness, plan))
    return tuple(results)


def run_gate(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    release: str,
    rules: Sequence[GateRule],
    *,
    count_agent_errors: bool = False,
    strict: bool = False,
    base: str | None = None,
) -> GateReport:
    """Judge `rules` on one release of a suite; UnknownName for a bad suite, release or
    slice. A max_drop rule compares with its own `base`, else `base`, else the release
    before this one in the suite's order."""
    releases = find_suite_releases(report_overview(con), suite)
    row = find_release(releases, release)
    cases = run_query(
        con, "read/suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=None
    )
    check_slices(cases, suite, (rule.slice for rule in rules))
    this = cases[cases["report_id"] == row["report_id"]]
    problems = load_problems(con)
    own = problems[problems["file"] == row["file"]]
    bases = _bases(releases, row, cases, rules, base)
    return GateReport(
        suite=suite,
        release=str(row["release"]),
        file=str(row["file"]),
        count_agent_errors=count_agent_errors,
        strict=strict,
        results=evaluate_rules(this, rules, str(row["release"]), bases, str(row["harness"])),
        problems=tuple((str(p.scope), str(p.reason)) for p in own.itertuples(index=False)),
    )


def base_rows(
    releases: pd.DataFrame, row: pd.Series, rules: Sequence[GateRule], base: str | None
) -> dict[str, pd.Series]:
    """The base release rows the max_drop rules name ("" for the default: `base`, else the
    release before `row`); UnknownName for a name that is not a release of the suite. A
    release with none before it is left out, and its rule says UNKNOWN."""
    found: dict[str, pd.Series] = {}
    for name in {rule.base or "" for rule in rules if rule.uses == USES_MAX_DROP}:
        label = name or base
        if label:
            found[name] = find_release(releases, label)
            continue
        earlier = releases[releases["release_rank"] < row["release_rank"]]
        if not earlier.empty:
            found[name] = earlier.iloc[-1]
    return found


def _bases(
    releases: pd.DataFrame,
    row: pd.Series,
    cases: pd.DataFrame,
    rules: Sequence[GateRule],
    base: str | None,
) -> dict[str, tuple[str, pd.DataFrame]]:
    """base_rows with each base release's cases."""
    return {
        name: (str(r["release"]), cases[cases["report_id"] == r["report_id"]])
        for name, r in base_rows(releases, row, rules, base).items()
    }
