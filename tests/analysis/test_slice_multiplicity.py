"""Slices on the Review page are flagged after Holm's adjustment over those with a known
Δ (the flag's rate with no true change, at the page's resample count, is in
test_slice_flag_rate.py)."""

from __future__ import annotations

import numpy as np

from dashboard.analysis.review import SLICE_IMPROVEMENT, SLICE_REGRESSION, SliceDelta, holm_flagged
from dashboard.stats import pass_hat_k
from dashboard.stats.paired import paired_bootstrap_ci

K = 4


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
