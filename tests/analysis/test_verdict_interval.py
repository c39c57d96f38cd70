"""The intervals a verdict reads (analysis/estimates.verdict_interval and
verdict_delta_interval): the reported bootstrap interval widened to hold the BCa interval
on the same resamples (and at 20 cases or fewer the Wilson interval of the mean), and the
paired interval widened to hold Student's t; each holds the truth about 95% of the time
where the reported one does not (benchmarks/bench_coverage.py), and the verdict says so."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.analysis import gating
from dashboard.analysis.deltas import counts_delta
from dashboard.analysis.estimates import (
    WIDEN_CASES,
    estimate,
    verdict_delta_interval,
    verdict_interval,
)
from dashboard.analysis.policy import make_rule
from dashboard.render import gate_report
from dashboard.stats import pass_hat_k, wilson_interval
from dashboard.stats.covering import bca_bounds, student_t_bounds
from dashboard.stats.paired import paired_bootstrap_ci

# ten cases, nine reliable and one seen 7 of 8: pass^4 = (9 + 35/70) / 10 = 0.95
N = np.full(10, 8)
C = np.array([8] * 9 + [7])


def test_a_few_cases_read_the_wilson_interval_too() -> None:
    r = estimate(N, C, 4, "pass^k")
    low, high = verdict_interval(N, C, 4, "pass^k", r.ci_low, r.ci_high)
    wilson = wilson_interval(0.95 * 10, 10)
    bca = bca_bounds(np.array([[1.0] * 9 + [0.5]]))
    assert r.value == pytest.approx(0.95)
    assert (low, high) == (min(r.ci_low, wilson[0], bca[0][0]), max(r.ci_high, wilson[1]))
    assert low == wilson[0] < r.ci_low  # the bootstrap's lower bound is the narrower


def test_more_cases_read_bca_where_the_values_are_skewed() -> None:
    # 21 cases, one of them imperfect: the percentile interval's low side is short
    n = np.full(WIDEN_CASES + 1, 8)
    c = np.array([8] * WIDEN_CASES + [7])
    r = estimate(n, c, 4, "pass^k")
    low, high = verdict_interval(n, c, 4, "pass^k", r.ci_low, r.ci_high)
    bca = bca_bounds(np.atleast_2d(pass_hat_k(n, c, 4)))
    assert (low, high) == (bca[0][0], r.ci_high)
    assert low < r.ci_low - 0.02
    # no Wilson interval beyond WIDEN_CASES cases: it would reach further still
    assert low > wilson_interval(r.value * n.size, n.size)[0]


def test_where_bca_adds_nothing_the_verdict_reads_the_reported_interval() -> None:
    # 30 cases, 20 reliable and 10 never passing: the resample means lie on a grid of
    # 1/30, and BCa's levels fall on the same points of it as the percentile's
    n = np.full(30, 8)
    c = np.array([8] * 20 + [0] * 10)
    r = estimate(n, c, 4, "pass^k")
    assert (r.method, r.ci_low, r.ci_high) == ("cluster-bootstrap", 0.5, pytest.approx(0.8333333))
    assert verdict_interval(n, c, 4, "pass^k", r.ci_low, r.ci_high) == (r.ci_low, r.ci_high)
    v = gating.gate_verdict(n, c, 4, 0.5)
    assert (v.verdict, v.method) == ("PASSED", "cluster-bootstrap")
    assert "(pass^4 = 0.667, CI [" in gate_report.verdict_line(v)


def test_the_gate_decides_on_it_and_says_so() -> None:
    r = estimate(N, C, 4, "pass^k")
    threshold = 0.8  # the bootstrap's lower bound (0.85) passes it, Wilson's does not
    assert r.ci_low >= threshold
    v = gating.gate_verdict(N, C, 4, threshold)
    assert v.verdict == "UNDECIDED" and v.method == "widened"
    assert "widened CI [" in gate_report.verdict_line(v)
    # the number reported stays the estimator's
    assert v.value == pytest.approx(float(np.mean(pass_hat_k(N, C, 4))))


def test_a_regression_rule_reads_the_t_interval_and_says_so() -> None:
    # six matched cases, one of which lost a trial: Δpass^1 = -1/48; the bootstrap's
    # bottom is three copies of that case, -0.0625, Student's t reaches -0.074
    counts = (np.full(6, 8), np.full(6, 8), np.full(6, 8), np.array([8] * 5 + [7]))
    delta = counts_delta(counts, "pass_at_1", "pass^k", 1)
    d = delta.delta
    assert d is not None
    low, high = verdict_delta_interval(d)
    t_low, t_high = student_t_bounds(d.delta, d.spread, 6)
    assert (low, high) == (min(d.ci_low, t_low), max(d.ci_high, t_high))
    rule = make_rule(metric="pass^k", k=1, max_drop=0.07)
    assert d.ci_low >= -0.07 > low  # PASSED on the bootstrap's interval
    v = gating.drop_verdict(delta, rule, "v1")
    assert (v.verdict, v.method, v.ci_low, v.ci_high) == ("UNDECIDED", "widened", low, high)
    assert "widened paired CI [" in gate_report.verdict_line(v)


# ---- coverage, by simulation ------------------------------------------------------------

# the benchmark's mix of case rates: (share, lowest rate, highest rate), rates uniform
MIX = ((0.55, 0.95, 1.0), (0.30, 0.3, 0.85), (0.15, 0.0, 0.1))
RUNS = 1000


def draw_rates(rng: np.random.Generator, m: int) -> np.ndarray:
    kinds = rng.choice(len(MIX), size=m, p=[share for share, _, _ in MIX])
    return rng.uniform([MIX[i][1] for i in kinds], [MIX[i][2] for i in kinds])


def true_pass_at_k(k: int) -> float:
    """E[1 - (1 - p)^k] over the mix, in closed form for each uniform part."""
    return sum(
        share * (1 - ((1 - a) ** (k + 1) - (1 - b) ** (k + 1)) / ((k + 1) * (b - a)))
        for share, a, b in MIX
    )


def test_the_verdict_interval_covers_where_the_reported_one_does_not() -> None:
    # pass@7 of 30 cases with 8 trials each: most per-case values are 1, a few near 0
    m, trials, k = 30, 8, 7
    truth = true_pass_at_k(k)
    rng = np.random.default_rng(20)
    reported = verdict = 0
    for _ in range(RUNS):
        n = np.full(m, trials)
        c = rng.binomial(trials, draw_rates(rng, m))
        r = estimate(n, c, k, "pass@k")
        assert r.ci_low is not None and r.ci_high is not None
        reported += r.ci_low <= truth <= r.ci_high
        low, high = verdict_interval(n, c, k, "pass@k", r.ci_low, r.ci_high)
        verdict += low <= truth <= high
    # the reported interval (the one verdicts read at 30 cases before) covers about 90%
    assert reported / RUNS < 0.93
    assert verdict / RUNS >= 0.93


def test_the_paired_verdict_interval_covers_where_the_bootstrap_does_not() -> None:
    # the same 10 cases twice, 8 trials each, nothing changed: Δpass^1 is truly 0
    m, trials = 10, 8
    rng = np.random.default_rng(21)
    reported = verdict = 0
    for _ in range(RUNS):
        rates = draw_rates(rng, m)
        before = rng.binomial(trials, rates) / trials
        after = rng.binomial(trials, rates) / trials
        d = paired_bootstrap_ci(before, after)
        reported += d.ci_low <= 0.0 <= d.ci_high
        low, high = verdict_delta_interval(d)
        verdict += low <= 0.0 <= high
    assert reported / RUNS < 0.93  # the bootstrap's covers about 90%
    assert verdict / RUNS >= 0.93
