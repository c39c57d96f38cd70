"""The first page's headline for a suite: is its latest release reliable, and did it get
better or worse?

The latest release (the last in release order) judged against the suite's policy by the
rules the Review page uses (analysis/policy.py resolves them, analysis/gating.py's
evaluate_rules judges them, over the latest release's cases), its pass^k with the CI at the suite's k from the release table, and its paired
Δpass@1 and Δpass^k against the latest earlier release where Δ is computable at that k,
matched as the release table's Δ column matches cases.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb
import pandas as pd

from dashboard.analysis.deltas import DELTA_KEYS, MetricDelta, counts_delta
from dashboard.analysis.gating import GateReport, base_rows, evaluate_rules
from dashboard.analysis.matching import paired_counts
from dashboard.analysis.policy import Policy, PolicyError, resolve_policy
from dashboard.analysis.releases import UnknownName, release_table, suite_releases
from dashboard.analysis.slices import check_slices
from dashboard.data.catalog.queries import fetch_rows, run_query
from dashboard.data.sources.reports import ReportSource
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K

BASE_BATCH: Final = 10  # earlier releases whose cases are read at a time, newest first


@dataclass(frozen=True)
class Headline:
    suite: str
    release: str  # the latest release
    k: int
    verdict: str | None  # PASSED | FAILED | UNKNOWN; None when the policy cannot be used
    policy: Policy | None
    policy_error: str  # why the policy cannot be used ("" when it can)
    gate: GateReport | None
    row: Mapping[str, Any]  # the latest release's row of releases.release_table at k
    base: str | None  # the latest earlier release with Δpass^k computable at k
    passed_over: tuple[str, ...]  # later releases than the base where Δ is not computable
    pass_at_1: MetricDelta | None  # head − base, paired; None without a base
    pass_hat_k: MetricDelta | None
    releases: int  # in the suite


def suite_policy(
    suite: str, policy_file: Path | None, reports: Path | ReportSource | None
) -> tuple[Policy | None, str]:
    """(the suite's policy, "") as the Review page resolves it, or (None, why not)."""
    try:
        return resolve_policy(suite, policy_file, reports), ""
    except PolicyError as exc:
        return None, str(exc)


def latest_headline(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    k: int,
    policy: Policy | None,
    *,
    policy_error: str = "",
    count_agent_errors: bool = False,
) -> Headline:
    """The headline of `suite`'s latest release at k; UnknownName for a suite without
    releases. `overview` holds at least the suite's report_overview rows."""
    releases = suite_releases(overview, suite)
    if releases.empty:
        raise UnknownName(f"no suite named {suite!r}")
    latest = str(releases["release"].iloc[-1])
    table = release_table(con, overview, suite, k, count_agent_errors, (latest, latest))
    row = table[table["release"] == latest].iloc[0].to_dict()
    gate = verdict = None
    if policy is not None:
        try:
            gate = _gate_latest(con, releases, suite, policy, count_agent_errors)
            verdict = gate.verdict
        except UnknownName as exc:  # a rule's slice no case of the suite carries
            policy, policy_error = None, str(exc)
    base, passed_over, deltas = _base_and_deltas(con, releases, suite, k, count_agent_errors)
    return Headline(
        suite=suite,
        release=latest,
        k=k,
        verdict=verdict,
        policy=policy,
        policy_error=policy_error,
        gate=gate,
        row=row,
        base=base,
        passed_over=passed_over,
        pass_at_1=deltas[0] if deltas else None,
        pass_hat_k=deltas[1] if deltas else None,
        releases=len(releases),
    )


def _gate_latest(
    con: duckdb.DuckDBPyConnection,
    releases: pd.DataFrame,
    suite: str,
    policy: Policy,
    count_agent_errors: bool,
) -> GateReport:
    """The policy's rules judged on the latest release, as run_gate judges them (the
    Review page's verdict), from that release's cases and its max_drop rules' base
    releases' alone: run_gate reads every case of the suite, much of a first page's time
    in a long history."""
    tags = [str(t) for t in run_query(con, "read/suite_tags", suite=suite)["tag"]]
    # the suite's tags as one row: check_slices' own test and message for a mistyped slice
    check_slices(pd.DataFrame({"tags": [tags]}), suite, (rule.slice for rule in policy.rules))
    latest = releases.iloc[-1]
    bases = base_rows(releases, latest, policy.rules, None)
    ids = [int(latest["report_id"]), *(int(r["report_id"]) for r in bases.values())]
    cases = run_query(
        con, "read/suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=ids
    )
    name = str(latest["release"])
    of = {
        n: (str(r["release"]), cases[cases["report_id"] == r["report_id"]])
        for n, r in bases.items()
    }
    return GateReport(
        suite=suite,
        release=name,
        file=str(latest["file"]),
        count_agent_errors=count_agent_errors,
        strict=False,
        results=evaluate_rules(
            cases[cases["report_id"] == latest["report_id"]],
            policy.rules,
            name,
            of,
            str(latest["harness"]),  # UNKNOWN in the words of the harness that wrote it
            plan=False,  # the first page links to the review, which says what would decide it
        ),
    )


def _cases_by_report(
    con: duckdb.DuckDBPyConnection, suite: str, report_ids: Sequence[int], count_agent_errors: bool
) -> dict[int, list[dict[str, Any]]]:
    by_report: dict[int, list[dict[str, Any]]] = {int(r): [] for r in report_ids}
    for case in fetch_rows(
        con,
        "read/suite_cases",
        suite=suite,
        count_agent_errors=count_agent_errors,
        report_ids=[int(r) for r in report_ids],
    ):
        by_report[int(case["report_id"])].append(case)
    return by_report


def _base_and_deltas(
    con: duckdb.DuckDBPyConnection,
    releases: pd.DataFrame,
    suite: str,
    k: int,
    count_agent_errors: bool,
) -> tuple[str | None, tuple[str, ...], tuple[MetricDelta, MetricDelta] | None]:
    """Walk back from the release before the latest, a batch at a time, to the first
    whose Δpass^k against the latest is computable at k."""
    head_id = int(releases["report_id"].iloc[-1])
    head = _cases_by_report(con, suite, [head_id], count_agent_errors)[head_id]
    earlier = list(releases.iloc[:-1].itertuples(index=False))[::-1]  # newest first
    passed_over: list[str] = []
    for start in range(0, len(earlier), BASE_BATCH):
        batch = earlier[start : start + BASE_BATCH]
        cases = _cases_by_report(con, suite, [r.report_id for r in batch], count_agent_errors)
        for rel in batch:
            counts = paired_counts(cases[int(rel.report_id)], head)
            hat = counts_delta(counts, DELTA_KEYS[2], METRIC_PASS_HAT_K, k)
            if hat.delta is None:
                passed_over.append(str(rel.release))
                continue
            at_1 = counts_delta(counts, DELTA_KEYS[0], METRIC_PASS_AT_K, 1)
            return str(rel.release), tuple(passed_over), (at_1, hat)
    return None, tuple(passed_over), None
