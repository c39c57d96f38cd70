"""Slices on the Review page are flagged after Holm's adjustment: with no true change,
reading a dozen slices at 95% each shows a "regression" in many reviews; the family-wise
flag in about 5% at most."""

from __future__ import annotations

import numpy as np

from dashboard.analysis.review import SLICE_IMPROVEMENT, SLICE_REGRESSION, SliceDelta, holm_flagged
from dashboard.stats import pass_hat_k
from dashboard.stats.paired import paired_bootstrap_ci

K = 4


def null_review(rng: np.random.Generator, slices: int = 12, cases: int = 12, trials: int = 6):
    """The same agent twice: each case's rate is fixed, both releases draw from it."""
    out = []
    for s in range(slices):
        rates = rng.choice(
            [0.97, 0.99, 1.0, 0.5, 0.7, 0.2], size=cases, p=[0.2, 0.2, 0.15, 0.15, 0.15, 0.15]
        )
        n = np.full(cases, trials)
        before = np.atleast_1d(pass_hat_k(n, rng.binomial(trials, rates), K))
        after = np.atleast_1d(pass_hat_k(n, rng.binomial(trials, rates), K))
        d = paired_bootstrap_ci(before, after, 0.95, 500, 0)
        out.append(
            SliceDelta(f"s{s}", cases, None, None, d.delta, d.ci_low, d.ci_high, "", d.p_value)
        )
    return out


def test_with_no_true_change_few_reviews_flag_any_slice() -> None:
    rng = np.random.default_rng(2026)
    reviews = [null_review(rng) for _ in range(60)]
    raw = np.mean([any(s.ci_high < 0 for s in r) for r in reviews])
    flagged = np.mean([any(s.flag for s in holm_flagged(r)) for r in reviews])
    # uncorrected intervals show a false regression in a good share of reviews; the flag,
    # whose family-wise rate is 5%, in few (the bound allows for 60 reviews' noise)
    assert raw > 0.1
    assert flagged <= 0.1
    assert flagged < raw


def test_a_real_regression_is_flagged_and_an_unknown_slice_is_left_alone() -> None:
    n = np.full(20, 8)
    before = np.atleast_1d(pass_hat_k(n, np.full(20, 8), K))
    after = np.atleast_1d(pass_hat_k(n, np.array([0] * 15 + [8] * 5), K))
    worse = paired_bootstrap_ci(before, after)
    better = paired_bootstrap_ci(after, before)
    same = paired_bootstrap_ci(before, before)
    slices = [
        SliceDelta(
            "worse", 20, 1.0, 0.25, worse.delta, worse.ci_low, worse.ci_high, "", worse.p_value
        ),
        SliceDelta(
            "better", 20, 0.25, 1.0, better.delta, better.ci_low, better.ci_high, "", better.p_value
        ),
        SliceDelta("same", 20, 1.0, 1.0, same.delta, same.ci_low, same.ci_high, "", same.p_value),
        SliceDelta("unknown", 0, None, None, None, None, None, "UNKNOWN — k exceeds", None),
    ]
    flagged = holm_flagged(slices)
    assert [s.flag for s in flagged] == [SLICE_REGRESSION, SLICE_IMPROVEMENT, "", ""]
    assert flagged[3].p_holm is None
    # three slices with a known Δ; the two changes have the same p, the smallest: times 3
    assert worse.p_value == better.p_value
    assert flagged[0].p_holm == flagged[1].p_holm == min(1.0, 3 * worse.p_value)
    assert flagged[2].p_holm == 1.0
