"""The estimates every subject shares: which cases count, pass@k / pass^k over them, and
the words relidash uses for them (the envelope's reading, the error policy, the interval).

Every page table, CLI line and JSON number comes through here, so a word or a rule is
defined once. Must not: import Streamlit or Altair, hold SQL text, or format numbers for
display (that is dashboard/render).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from dashboard.data.formats import MULTIVON
from dashboard.data.formats.unknown_wording import k_beyond_runs, no_cases
from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    PassKResult,
    pass_at_k,
    pass_hat_k,
    suite_pass_k,
    suites_pass_k,
)
from dashboard.stats.covering import SMALL_SUITE, paired_verdict_bounds, suite_verdict_bounds
from dashboard.stats.paired import PairedDelta

if TYPE_CHECKING:
    import pandas as pd

METRICS = (METRIC_PASS_AT_K, METRIC_PASS_HAT_K)
MIN_K_MAX = 8
ERROR_STATUSES = ("model_error", "judge_error", "evaluator_error", "timeout")
INTERVAL_NOTE = {
    "cluster-bootstrap": "cluster bootstrap over cases (2000 resamples, seed 0)",
    "wilson": "Wilson interval (every case has the same value)",
    "widened": (
        "cluster bootstrap over cases widened to hold the BCa interval on the same resamples "
        f"(and, at {SMALL_SUITE} cases or fewer, the Wilson interval of the mean)"
    ),
    "": "none (UNKNOWN)",
}
METHOD_WIDENED: Final = "widened"
METHOD_PAIRED: Final = "paired-bootstrap"
# The reported percentile intervals cover well under 95% on a realistic mix of case
# rates (benchmarks/bench_coverage.py): pass@k's at a few cases (a sample that drew no
# hard case gives a narrow interval near 1) and at tens of cases (skewed values), the
# paired change's up to 50 cases. Verdicts read a wider one where that one is too narrow
# (stats/covering.py), and say so; at this many cases or fewer, the Wilson interval too.
WIDEN_CASES: Final = SMALL_SUITE

# The envelope pass@k − pass^k, in points: one vocabulary for the pages, the terminal,
# the review packet and the calculator.
GAMBLER_POINTS: Final = 50.0
STEADY_POINTS: Final = 20.0
GAMBLER: Final = "gambler"
IN_BETWEEN: Final = "in between"
STEADY: Final = "steady"
ENVELOPE_MEANING: Final = {
    GAMBLER: "capable but unreliable: it can do the task and often does not",
    IN_BETWEEN: "neither steady nor a gambler",
    STEADY: "what it can do, it does every time",
}


def policy_note(count_agent_errors: bool) -> str:
    """policy_label in a few words, for one line of a CI log or a report header."""
    return "agent errors count as failures" if count_agent_errors else "agent errors excluded"


def envelope_reading(width_points: float | None) -> str:
    """The envelope's reading: over 50 points a gambler, under 20 steady, else in between."""
    if width_points is None or np.isnan(width_points):
        return "UNKNOWN"
    if width_points > GAMBLER_POINTS:
        return GAMBLER
    if width_points < STEADY_POINTS:
        return STEADY
    return IN_BETWEEN


def policy_label(count_agent_errors: bool) -> str:
    if count_agent_errors:
        return (
            "Agent errors count as failures: a trial that ended in a model error or timeout is a "
            "failed trial (the whole case as 0 of its runs where trials were not recorded); "
            "judge and evaluator errors stay excluded."
        )
    return (
        "multivon-eval's rule: only cases that passed or failed on quality count; cases with "
        "model, judge or evaluator errors and skipped cases are left out."
    )


def k_max_for(runs_max: Any) -> int:
    """Largest k reported: at least 8, and every k up to the largest run count."""
    if is_missing(runs_max):
        return MIN_K_MAX
    return max(MIN_K_MAX, int(runs_max))


def pass_k_results(
    n: np.ndarray, c: np.ndarray, k_max: int, harness: str = MULTIVON
) -> dict[str, list[PassKResult]]:
    """pass@k and pass^k for k = 1..k_max over the given evaluated cases (in case order),
    UNKNOWN in the words of the harness that wrote them."""
    ks = list(range(1, k_max + 1))
    estimates = suites_pass_k([(n, c, ks, m) for m in METRICS])
    return {
        metric: [in_harness_words(r, n, harness) for r in results]
        for metric, results in zip(METRICS, estimates, strict=True)
    }


def in_harness_words(result: PassKResult, n: np.ndarray, harness: str) -> PassKResult:
    """A result UNKNOWN because no case is evaluated, or because k exceeds the fewest
    trials of the cases `n`, with its reason in the harness's terms (its option for more
    trials: `--runs`, `--epochs`)."""
    if result.value is not None:
        return result
    if result.n_cases == 0:
        return replace(result, unknown_reason=no_cases(harness))
    if result.runs < 1 or result.k <= result.runs:
        return result
    uneven = bool((np.asarray(n) != result.runs).any())
    return replace(result, unknown_reason=k_beyond_runs(harness, result.k, result.runs, uneven))


def verdict_interval(
    n: np.ndarray, c: np.ndarray, k: int, metric: str, low: float, high: float
) -> tuple[float, float]:
    """The interval a verdict reads on a suite's (or slice's) mean: the reported one
    (`low`, `high`: 2000 resamples, seed 0), widened to hold the BCa interval on the same
    resamples, which corrects the percentile interval for the skew of per-case values
    crowding near 1, and at WIDEN_CASES cases or fewer the Wilson interval of the mean
    taken as a proportion of m cases, conservative where a sample may hold none of the
    rare hard cases (stats/covering.py). The numbers reported (summary --json, the pages)
    keep multivon-eval's."""
    m = int(np.asarray(n).size)
    if m == 0 or k > int(np.min(n)):
        return low, high
    estimator = pass_at_k if metric == METRIC_PASS_AT_K else pass_hat_k
    values = np.atleast_1d(np.asarray(estimator(n, c, k), dtype=np.float64))
    wide_low, wide_high = suite_verdict_bounds(values[None, :], [low], [high])
    return float(wide_low[0]), float(wide_high[0])


def verdict_delta_interval(delta: PairedDelta) -> tuple[float, float]:
    """The interval a verdict reads on a paired change: the paired bootstrap's, widened to
    hold Student's t interval of the mean difference (stats/covering.py). `relidash
    compare` prints the bootstrap's."""
    return paired_verdict_bounds(delta)


def evaluated_arrays(outcomes: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(n, c) of the cases that count, in the frame's order."""
    counted = outcomes[outcomes["n"].notna()]
    return counted["n"].to_numpy(dtype=np.int64), counted["c"].to_numpy(dtype=np.int64)


def is_missing(x: Any) -> bool:
    """None, NaN, NaT or pandas' NA (without importing pandas)."""
    if x is None:
        return True
    try:
        return bool(x != x)
    except TypeError:  # pandas.NA refuses to be a bool
        return True


def estimate(
    n: np.ndarray, c: np.ndarray, k: int, metric: str, harness: str = MULTIVON
) -> PassKResult:
    """One metric at one k over the given evaluated cases (UNKNOWN in the harness's words)."""
    return in_harness_words(suite_pass_k(n, c, [k], metric)[0], n, harness)


def text_or_none(x: Any) -> str | None:
    return x if isinstance(x, str) else None


def number_or_none(x: Any) -> float | None:
    return None if is_missing(x) else float(x)
