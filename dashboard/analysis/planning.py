"""Trial plans for a release: the smallest design (cases × trials per case) that gives a
pass^k interval of a wanted half-width or the power to show a drop, and how many more
trials would decide an UNDECIDED rule. The simulations are stats/planning.py's, run on
the release's own per-case counts.

Must not: import Streamlit or Altair, hold SQL text, or format an answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import duckdb
import numpy as np

from dashboard.analysis.estimates import evaluated_arrays
from dashboard.analysis.releases import find_release, find_suite_releases
from dashboard.analysis.summary import report_overview
from dashboard.data.catalog.queries import run_query
from dashboard.stats import METRIC_PASS_HAT_K
from dashboard.stats.planning import (
    POWER,
    DecidePlan,
    Design,
    drop_power,
    half_widths,
    trials_to_decide,
)

CASE_FACTORS: Final = (1.0, 1.5, 2.0, 3.0, 4.0)
TRIAL_STEPS: Final = (3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32)


@dataclass(frozen=True)
class TrialPlan:
    """The designs tried for one release, cheapest (fewest trials in all) first, and the
    first that reaches the goal."""

    suite: str
    release: str
    metric: str
    k: int
    cases_now: int
    trials_now: int  # the fewest trials any of its evaluated cases has
    goal: str  # "half-width" | "drop"
    target: float
    designs: tuple[Design, ...]

    @property
    def recommended(self) -> Design | None:
        return next((d for d in self.designs if d.reached), None)


def candidate_designs(cases_now: int, k: int) -> list[tuple[int, int]]:
    """Designs from the release's own size up to four times its cases and 32 trials,
    cheapest first (trials in all, then fewer trials per case)."""
    cases = sorted({max(1, round(cases_now * f)) for f in CASE_FACTORS})
    trials = sorted({t for t in (*TRIAL_STEPS, k) if t >= k})
    return sorted(((m, t) for m in cases for t in trials), key=lambda d: (d[0] * d[1], d[1]))


def plan_trials(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    release: str,
    k: int,
    *,
    half_width: float | None = None,
    detect_drop: float | None = None,
    metric: str = METRIC_PASS_HAT_K,
    count_agent_errors: bool = False,
) -> TrialPlan:
    """The cheapest design for one release's cases that reaches a pass^k interval
    half-width of `half_width`, or POWER to show a drop of `detect_drop`; the designs
    are tried cheapest first and the search stops at the first that reaches it.
    UnknownName for a bad suite or release; ValueError when it has no evaluated case."""
    if (half_width is None) == (detect_drop is None):
        raise ValueError("give one goal: half_width or detect_drop")
    releases = find_suite_releases(report_overview(con), suite)
    row = find_release(releases, release)
    cases = run_query(
        con, "read/suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=None
    )
    n, c = evaluated_arrays(cases[cases["report_id"] == row["report_id"]])
    if n.size == 0:
        raise ValueError(f"release {row['release']} of {suite} has no evaluated case to plan from")
    tried: list[Design] = []
    for design in candidate_designs(int(n.size), k):
        if half_width is not None:
            (result,) = half_widths(n, c, k, metric, [design], target=half_width)
        else:
            assert detect_drop is not None
            (result,) = drop_power(n, c, k, metric, [design], drop=detect_drop)
        tried.append(result)
        if result.reached:
            break
    return TrialPlan(
        suite=suite,
        release=str(row["release"]),
        metric=metric,
        k=k,
        cases_now=int(n.size),
        trials_now=int(np.min(n)),
        goal="half-width" if half_width is not None else "drop",
        target=float(half_width if half_width is not None else detect_drop),  # type: ignore[arg-type]
        designs=tuple(tried),
    )


def decide_plan(
    n: np.ndarray, c: np.ndarray, k: int, metric: str, threshold: float, on_ci_low: bool
) -> DecidePlan:
    """How many more trials per lottery case would decide an UNDECIDED threshold rule."""
    return trials_to_decide(n, c, k, metric, threshold, on_ci_low=on_ci_low)


__all__ = ["POWER", "DecidePlan", "TrialPlan", "candidate_designs", "decide_plan", "plan_trials"]
