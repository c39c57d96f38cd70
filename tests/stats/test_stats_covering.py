"""The intervals verdicts add to the reported ones (stats/covering.py): BCa against a slow
loop over CPython's own draws, Student's t quantile against printed tables and closed
forms, and the hulls a verdict reads."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import numpy as np
import pytest
from upstream_copy import quantile

from dashboard.stats import cluster_bootstrap_ci, wilson_interval
from dashboard.stats.covering import (
    SMALL_SUITE,
    bca_bounds,
    paired_verdict_bounds,
    student_t_bounds,
    student_t_ppf,
    suite_verdict_bounds,
)
from dashboard.stats.paired import PairedDelta, paired_bootstrap_ci

NORMAL = NormalDist()


def slow_bca(values: list[float], n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    """BCa as Efron & Tibshirani 1993 (14.9)-(14.15) write it: resample means drawn as
    multivon-eval draws them, z0 from the share below the estimate (ties count half), the
    acceleration from the jackknife's leave-one-out means."""
    rng = random.Random(seed)
    m = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(m)) / m for _ in range(n_boot))
    point = sum(values) / m
    below = sum(x < point - 1e-12 for x in means)
    ties = sum(abs(x - point) <= 1e-12 for x in means)
    z0 = NORMAL.inv_cdf((below + ties / 2) / n_boot)
    jackknife = [(sum(values) - v) / (m - 1) for v in values]
    centre = sum(jackknife) / m
    accel = sum((centre - j) ** 3 for j in jackknife) / (
        6 * sum((centre - j) ** 2 for j in jackknife) ** 1.5
    )
    z = NORMAL.inv_cdf(0.975)
    levels = [NORMAL.cdf(z0 + (z0 + e) / (1 - accel * (z0 + e))) for e in (-z, z)]
    return quantile(means, levels[0]), quantile(means, levels[1])


@pytest.mark.parametrize(
    "values",
    [
        [1.0] * 20 + [0.5],  # one imperfect case among reliable ones: a long low tail
        [1.0] * 12 + [0.2, 0.0, 0.0, 0.6, 0.875],
        [0.1, 0.9, 0.5, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6],
        [0.0] * 25 + [1.0, 0.4],  # skewed the other way
    ],
)
def test_bca_matches_a_slow_loop(values: list[float]) -> None:
    low, high = bca_bounds(np.array([values]))
    want_low, want_high = slow_bca(values)
    assert low[0] == pytest.approx(want_low, abs=1e-12)
    assert high[0] == pytest.approx(want_high, abs=1e-12)


def test_bca_reaches_further_down_a_long_low_tail() -> None:
    values = np.array([[1.0] * 20 + [0.5]])
    low, high, _ = cluster_bootstrap_ci(values)
    bca_low, bca_high = bca_bounds(values)
    assert bca_low[0] < low[0] - 0.02  # the percentile interval's short side
    assert bca_high[0] == pytest.approx(1.0) == high[0]


def test_bca_of_a_row_without_spread_is_its_value() -> None:
    low, high = bca_bounds(np.array([[0.5] * 8, [1.0] * 8]))
    assert list(low) == list(high) == [0.5, 1.0]


def test_many_rows_are_each_their_own() -> None:
    rows = np.array([[1.0] * 20 + [0.5], [0.0] * 19 + [0.4, 1.0]])
    low, high = bca_bounds(rows)
    for i, row in enumerate(rows):
        one_low, one_high = bca_bounds(row[None, :])
        assert (low[i], high[i]) == (one_low[0], one_high[0])


@pytest.mark.parametrize(
    ("df", "printed"),
    # Student's t, 0.975 quantile, as printed in every table (A&S table 26.10 and later)
    [(1, 12.7062), (2, 4.3027), (3, 3.1824), (4, 2.7764), (5, 2.5706), (9, 2.2622),
     (19, 2.0930), (29, 2.0452), (60, 2.0003), (120, 1.9799), (1000, 1.9623)],
)  # fmt: skip
def test_t_quantiles_are_the_tables(df: int, printed: float) -> None:
    assert student_t_ppf(0.975, df) == pytest.approx(printed, abs=5e-5)
    assert student_t_ppf(0.025, df) == -student_t_ppf(0.975, df)


@pytest.mark.parametrize("p", [0.6, 0.9, 0.975, 0.995])
def test_t_quantiles_with_closed_forms(p: float) -> None:
    # one degree of freedom is Cauchy's; two have t = (2p - 1) / sqrt(2 p (1 - p))
    assert student_t_ppf(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)
    assert student_t_ppf(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12)


def test_the_expansion_takes_over_where_the_series_is_exact() -> None:
    # both sides of the switch from the exact CDF to the z expansion agree
    assert student_t_ppf(0.975, 200) == pytest.approx(1.971896224, abs=1e-8)
    assert student_t_ppf(0.975, 201) == pytest.approx(1.971836507, abs=1e-8)
    assert student_t_ppf(0.975, 10**6) == pytest.approx(NORMAL.inv_cdf(0.975), abs=1e-5)


@pytest.mark.parametrize(("p", "df"), [(0.0, 5), (1.0, 5), (0.5, 0), (0.5, True)])
def test_t_refuses_bad_arguments(p: float, df: int) -> None:
    with pytest.raises(ValueError):
        student_t_ppf(p, df)


def test_student_t_bounds_by_hand() -> None:
    low, high = student_t_bounds(0.1, 0.3, 10)
    half = 2.2621571627 * 0.3 / math.sqrt(10)
    assert (low, high) == pytest.approx((0.1 - half, 0.1 + half), abs=1e-9)
    assert student_t_bounds(0.5, 0.0, 1) == (-math.inf, math.inf)


def test_a_few_cases_read_wilson_too_and_more_do_not() -> None:
    few = np.array([[1.0] * 9 + [0.5]])
    low, high, _ = cluster_bootstrap_ci(few)
    wide_low, wide_high = suite_verdict_bounds(few, low, high)
    wilson = wilson_interval(0.95 * 10, 10)
    assert wide_low[0] == min(low[0], bca_bounds(few)[0][0], wilson[0]) == wilson[0]
    many = np.array([[1.0] * SMALL_SUITE + [0.5]])
    low, high, _ = cluster_bootstrap_ci(many)
    wide_low, _ = suite_verdict_bounds(many, low, high)
    mean = float(many.mean())
    assert wide_low[0] == bca_bounds(many)[0][0] > wilson_interval(mean * 21, 21)[0]


def test_the_verdict_hull_never_narrows_the_reported_interval() -> None:
    rng = np.random.default_rng(5)
    rows = rng.choice([0.0, 0.2, 0.6, 1.0], size=(40, 30), p=[0.1, 0.1, 0.2, 0.6])
    low, high, _ = cluster_bootstrap_ci(rows)
    wide_low, wide_high = suite_verdict_bounds(rows, low, high)
    assert (wide_low <= low).all() and (wide_high >= high).all()
    # and an end BCa leaves where it was (no skew that way) is the reported one exactly
    assert (wide_high == high).any() or (wide_low == low).any()


def test_the_paired_verdict_interval() -> None:
    # five unchanged cases and one that lost half its pass rate: the bootstrap's top is 0
    # (a resample without that case) and its bottom three copies of it; t reaches further
    base, head = [1.0] * 6, [1.0] * 5 + [0.5]
    d = paired_bootstrap_ci(base, head)
    assert d.spread == pytest.approx(np.std(np.subtract(head, base), ddof=1))
    low, high = paired_verdict_bounds(d)
    t_low, t_high = student_t_bounds(d.delta, d.spread, 6)
    assert (low, high) == (min(d.ci_low, t_low), max(d.ci_high, t_high))
    assert low < d.ci_low and high > d.ci_high
    # one pair estimates no spread: a verdict reads every change it could be
    assert paired_verdict_bounds(PairedDelta(-0.5, -0.5, -0.5, 1)) == (-1.0, 1.0)
