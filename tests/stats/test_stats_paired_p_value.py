"""The p-value of "no change" a verdict reads on a paired change: Student's one-sample
t-test's, and the larger of it and the paired bootstrap's, dual to the verdict's hull
interval."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dashboard.stats.covering import (
    paired_verdict_bounds,
    paired_verdict_p_value,
    student_t_bounds,
    student_t_p_value,
    student_t_ppf,
)
from dashboard.stats.paired import paired_bootstrap_ci


def test_t_p_value_by_hand() -> None:
    # one degree of freedom is the Cauchy: P(|T| > 1) = 1/2
    assert student_t_p_value(1.0, math.sqrt(2), 2) == pytest.approx(0.5, abs=1e-12)
    # t = 2.228 at 10 df and t = 2.0 at 5 df, by quadrature of the density
    assert student_t_p_value(2.228, math.sqrt(11), 11) == pytest.approx(0.050012, abs=1e-6)
    assert student_t_p_value(-2.0, math.sqrt(6), 6) == pytest.approx(0.1019395, abs=1e-6)


@pytest.mark.parametrize("df", [1, 2, 3, 7, 19, 50, 199, 200, 201, 500])
def test_t_p_value_inverts_the_quantile(df: int) -> None:
    # at t = the 1 - a/2 quantile the two-sided p-value is a (the quantile above 200 df
    # comes from its expansion, not from the CDF the p-value reads)
    for a in (0.2, 0.05, 0.01, 0.001):
        t = student_t_ppf(1 - a / 2, df)
        n = df + 1
        assert student_t_p_value(t, math.sqrt(n), n) == pytest.approx(a, rel=1e-7)


def test_t_p_value_edges() -> None:
    assert student_t_p_value(0.4, 0.0, 1) == 1.0  # one value: no spread to read
    assert student_t_p_value(0.0, 0.0, 9) == 1.0
    assert student_t_p_value(-0.1, 0.0, 9) == 0.0  # every value moved by the same
    assert student_t_p_value(0.0, 0.3, 9) == 1.0
    assert 0.0 <= student_t_p_value(-1.0, 1e-9, 30) < 1e-12
    for bad in [(0.1, -0.1, 5), (math.nan, 0.1, 5), (0.1, 0.1, 0), (0.1, 0.1, True)]:
        with pytest.raises(ValueError):
            student_t_p_value(*bad)


def test_t_p_value_is_dual_to_the_t_interval() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        d = rng.choice([-1.0, -0.5, 0.0, 0.0, 0.0, 0.5, 1.0], size=int(rng.integers(5, 40)))
        mean, spread = float(d.mean()), float(d.std(ddof=1))
        if spread == 0 or mean == 0:
            continue
        p = student_t_p_value(mean, spread, d.size)
        low, high = student_t_bounds(mean, spread, d.size, 1 - p)
        assert min(abs(low), abs(high)) == pytest.approx(0.0, abs=1e-9)


def test_verdict_p_value_is_the_larger_and_agrees_with_the_verdict_interval() -> None:
    rng = np.random.default_rng(8)
    for _ in range(40):
        m = int(rng.integers(6, 30))
        before = rng.choice([0.0, 0.2, 0.6, 1.0, 1.0, 1.0], size=m)
        after = np.clip(before + rng.choice([-1.0, -0.4, 0.0, 0.0, 0.0, 0.4], size=m), 0, 1)
        d = paired_bootstrap_ci(before, after)
        t = student_t_p_value(d.delta, d.spread, d.n_pairs)
        p = paired_verdict_p_value(d)
        assert p == max(d.p_value, t)
        # the verdict's 95% interval leaves zero out where p is clearly below 5%, holds it
        # where p is clearly above (the bootstrap's side is read at its resamples' grain)
        low, high = paired_verdict_bounds(d)
        if p < 0.04:
            assert not low <= 0.0 <= high
        if p > 0.06:
            assert low <= 0.0 <= high


def test_verdict_p_value_of_one_pair_and_of_a_uniform_move() -> None:
    assert paired_verdict_p_value(paired_bootstrap_ci([1.0], [0.0])) == 1.0
    uniform = paired_bootstrap_ci(np.ones(12), np.zeros(12))
    # no spread: the t-test says 0 and the bootstrap's floor 2 / (n_boot + 1) is read
    assert paired_verdict_p_value(uniform) == uniform.p_value == pytest.approx(2 / 2001)
