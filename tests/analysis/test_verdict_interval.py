"""The interval a verdict reads at a few cases (analysis/estimates.verdict_interval): the
reported bootstrap interval widened to hold the Wilson interval of the mean, since at 20
cases or fewer the bootstrap's covers too little (benchmarks/bench_coverage.py)."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard.analysis import gating
from dashboard.analysis.estimates import WIDEN_CASES, estimate, verdict_interval
from dashboard.render import gate_report
from dashboard.stats import pass_hat_k, wilson_interval

# ten cases, nine reliable and one seen 7 of 8: pass^4 = (9 + 35/70) / 10 = 0.95
N = np.full(10, 8)
C = np.array([8] * 9 + [7])


def test_a_few_cases_read_the_wider_of_the_two() -> None:
    r = estimate(N, C, 4, "pass^k")
    low, high = verdict_interval(N, C, 4, "pass^k", r.ci_low, r.ci_high)
    wilson = wilson_interval(0.95 * 10, 10)
    assert r.value == pytest.approx(0.95)
    assert (low, high) == (min(r.ci_low, wilson[0]), max(r.ci_high, wilson[1]))
    assert low < r.ci_low  # the bootstrap's lower bound is the narrower


def test_more_cases_keep_the_reported_interval() -> None:
    n = np.full(WIDEN_CASES + 1, 8)
    c = np.array([8] * WIDEN_CASES + [7])
    r = estimate(n, c, 4, "pass^k")
    assert verdict_interval(n, c, 4, "pass^k", r.ci_low, r.ci_high) == (r.ci_low, r.ci_high)


def test_the_gate_decides_on_it_and_says_so() -> None:
    r = estimate(N, C, 4, "pass^k")
    threshold = 0.8  # the bootstrap's lower bound (0.85) passes it, Wilson's does not
    assert r.ci_low >= threshold
    v = gating.gate_verdict(N, C, 4, threshold)
    assert v.verdict == "UNDECIDED" and v.method == "widened"
    assert "widened CI [" in gate_report.verdict_line(v)
    # the number reported stays the estimator's
    assert v.value == pytest.approx(float(np.mean(pass_hat_k(N, C, 4))))
