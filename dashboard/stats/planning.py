"""Trial planning: how many cases and trials a claim about pass^k (or pass@k) needs, and
how many more trials would settle an UNDECIDED verdict.

Every answer is a simulation of the estimator and interval relidash reports (the
per-case unbiased estimator, the cluster bootstrap over cases with its Wilson fallback,
`bootstrap.cluster_bootstrap_ci`; the paired bootstrap for a change,
`paired.paired_bootstrap_ci`), run on the release's own cases; whether a verdict is
decided, or a drop shown, on the wider interval a verdict reads (`covering`). A
simulated case's success rate is drawn from the Jeffreys posterior Beta(c + 1/2,
n − c + 1/2) of an observed case, so a case seen 8 of 8 is near-reliable but not
certainly perfect, and the plan carries the uncertainty of the rates it starts from. A
design with more cases than were observed draws its cases from the observed ones with
replacement.

Must not: read the catalog, format an answer, or import pandas, DuckDB or Streamlit.

References: Efron & Tibshirani 1993, ch. 13 (percentile interval); Jeffreys 1946 (the
Beta(1/2, 1/2) prior); Chen et al. 2021, arXiv:2107.03374; Yao et al. 2024,
arXiv:2406.12045.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from .bootstrap import cluster_bootstrap_ci
from .covering import paired_verdict_bounds, suite_verdict_bounds
from .estimators import METRIC_PASS_HAT_K, check_cases, check_k, check_metric, pass_at_k, pass_hat_k
from .paired import paired_bootstrap_ci

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

SIMULATIONS: Final = 200
POWER: Final = 0.8  # the share of simulated runs that must reach the goal
# the interval's resamples in a simulation: fewer than a report's 2000, since each
# simulated run is one of hundreds and only the share that reaches the goal is kept
PLAN_BOOT: Final = 500


@dataclass(frozen=True)
class Design:
    """A design (cases × trials per case) and how it did in simulation."""

    cases: int
    trials: int
    achieved: float  # the half-width reached by POWER of the runs, or the power itself
    reached: bool

    @property
    def total(self) -> int:
        return self.cases * self.trials


@dataclass(frozen=True)
class DecidePlan:
    """More trials for an UNDECIDED verdict: `extra` on each of the `cases` given them."""

    extra: int | None  # None: no number tried decides it in POWER of the runs
    cases: int  # how many cases get the extra trials (the lottery cases, else all)
    lottery: bool  # whether those are the lottery cases
    decided: float  # the share of simulated runs decided at `extra` (or at the most tried)
    tried: int  # the most extra trials per case that was simulated


def _estimates(n: IntArray, c: IntArray, k: int, metric: str) -> FloatArray:
    estimator = pass_hat_k if metric == METRIC_PASS_HAT_K else pass_at_k
    return np.asarray(estimator(n, c, k), dtype=np.float64)


def _rates(
    n: IntArray, c: IntArray, shape: tuple[int, ...], rng: np.random.Generator
) -> FloatArray:
    """Success rates drawn from each case's Jeffreys posterior; `shape` ends in the cases."""
    return rng.beta(c + 0.5, n - c + 0.5, size=shape)


def _intervals(values: FloatArray, seed: int) -> tuple[FloatArray, FloatArray]:
    low, high, _ = cluster_bootstrap_ci(values, n_boot=PLAN_BOOT, seed=seed)
    return low, high


def _checked(
    n: npt.ArrayLike, c: npt.ArrayLike, k: int, metric: str
) -> tuple[IntArray, IntArray, int, str]:
    n_arr, c_arr = check_cases(n, c)
    if n_arr.size == 0:
        raise ValueError("planning needs at least one evaluated case")
    return n_arr, c_arr, check_k(k), check_metric(metric)


def half_widths(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    metric: str,
    designs: Sequence[tuple[int, int]],
    *,
    target: float,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> list[Design]:
    """For each (cases, trials) design with trials >= k, the interval half-width that
    POWER of the simulated runs reach or beat, and whether that is within `target`."""
    n_arr, c_arr, k, metric = _checked(n, c, k, metric)
    rng = np.random.default_rng(seed)
    out = []
    for cases, trials in designs:
        if trials < k:
            raise ValueError(f"a design needs at least k={k} trials per case, got {trials}")
        drawn = rng.integers(0, n_arr.size, size=(simulations, cases))
        if cases == n_arr.size:
            drawn = np.broadcast_to(np.arange(cases), (simulations, cases))
        rates = rng.beta(c_arr[drawn] + 0.5, n_arr[drawn] - c_arr[drawn] + 0.5)
        passes = rng.binomial(trials, rates)
        values = _estimates(np.full_like(passes, trials), passes, k, metric)
        low, high = _intervals(values, seed)
        width = float(np.quantile((high - low) / 2, POWER))
        out.append(Design(cases, trials, width, width <= target))
    return out


def _drop_factor(rates: FloatArray, k: int, metric: str, drop: float) -> float:
    """The factor f in (0, 1] that lowers the mean of the metric over `rates` by `drop`
    when every rate is multiplied by it (bisection; 0 when no factor drops it that far)."""

    def mean(f: float) -> float:
        scaled = rates * f
        value = scaled**k if metric == METRIC_PASS_HAT_K else 1 - (1 - scaled) ** k
        return float(value.mean())

    goal = mean(1.0) - drop
    if mean(0.0) > goal:
        return 0.0
    low, high = 0.0, 1.0
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if mean(mid) < goal else (low, mid)
    return (low + high) / 2


def drop_power(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    metric: str,
    designs: Sequence[tuple[int, int]],
    *,
    drop: float,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> list[Design]:
    """For each design, the power to show a true drop of `drop` in the metric: the share of
    simulated base/head pairs whose paired 95% interval on head − base lies below zero.
    The head's cases are the base's with every success rate scaled down until the
    metric's mean falls by `drop`."""
    n_arr, c_arr, k, metric = _checked(n, c, k, metric)
    if not 0.0 < drop <= 1.0:
        raise ValueError(f"drop must be in (0, 1], got {drop}")
    rng = np.random.default_rng(seed)
    out = []
    for cases, trials in designs:
        if trials < k:
            raise ValueError(f"a design needs at least k={k} trials per case, got {trials}")
        shown = 0
        for _ in range(simulations):
            drawn = rng.integers(0, n_arr.size, size=cases)
            rates = rng.beta(c_arr[drawn] + 0.5, n_arr[drawn] - c_arr[drawn] + 0.5)
            factor = _drop_factor(rates, k, metric, drop)
            runs = np.full(cases, trials)
            before = _estimates(runs, rng.binomial(trials, rates), k, metric)
            after = _estimates(runs, rng.binomial(trials, rates * factor), k, metric)
            delta = paired_bootstrap_ci(
                np.atleast_1d(before), np.atleast_1d(after), 0.95, PLAN_BOOT, seed
            )
            shown += paired_verdict_bounds(delta)[1] < 0
        power = shown / simulations
        out.append(Design(cases, trials, power, power >= POWER))
    return out


def lottery_cases(n: IntArray, c: IntArray) -> npt.NDArray[np.bool_]:
    """Cases that pass sometimes and never reliably: where more trials move the estimate
    (a case seen 0 of n or n of n stays so in most simulated runs)."""
    return (c > 0) & (c < n)


def trials_to_decide(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    k: int,
    metric: str,
    threshold: float,
    *,
    on_ci_low: bool = True,
    steps: Sequence[int] = (2, 4, 8, 16, 32, 64),
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> DecidePlan:
    """About how many more trials per case would turn an UNDECIDED verdict on
    `metric` at k against `threshold` into PASSED or FAILED in POWER of the simulated runs.

    The extra trials go to the lottery cases first, where they move the estimate most;
    with none, to every case. `on_ci_low`: the rule passes on its CI's lower bound
    (else on the estimate); it fails when the CI's upper bound is below the threshold.
    """
    n_arr, c_arr, k, metric = _checked(n, c, k, metric)
    chosen = lottery_cases(n_arr, c_arr)
    lottery = bool(chosen.any())
    if not lottery:
        chosen = np.ones(n_arr.size, dtype=bool)
    rng = np.random.default_rng(seed)
    rates = _rates(n_arr, c_arr, (simulations, n_arr.size), rng)
    decided = 0.0
    for extra in steps:
        more = np.where(chosen, extra, 0)
        passes = c_arr + rng.binomial(more, rates)
        runs = np.broadcast_to(n_arr + more, passes.shape)
        values = _estimates(np.ascontiguousarray(runs), passes, k, metric)
        # the interval the verdict reads, so "decided" means what the gate would say
        low, high = suite_verdict_bounds(values, *_intervals(values, seed), 0.95, PLAN_BOOT, seed)
        estimate = values.mean(axis=1)
        observed = low if on_ci_low else estimate
        # as analysis/gating.three_way: a claim of perfection falls with one failure
        refuted = (high < threshold) | ((threshold >= 1.0) & (estimate < 1.0))
        decided = float(((observed >= threshold) | refuted).mean())
        if decided >= POWER:
            return DecidePlan(extra, int(chosen.sum()), lottery, decided, max(steps))
    return DecidePlan(None, int(chosen.sum()), lottery, decided, max(steps))
