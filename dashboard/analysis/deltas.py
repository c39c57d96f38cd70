"""Paired changes between two releases: Δpass@1, Δpass@k and Δpass^k over the cases
evaluated in both, with a paired cluster-bootstrap CI (`stats.paired`, seed 0), which
cancels each case's difficulty out of the difference.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from dashboard.data.formats import MULTIVON
from dashboard.data.formats.unknown_wording import k_beyond_matched
from dashboard.stats import METRIC_PASS_HAT_K, pass_at_k, pass_hat_k
from dashboard.stats.paired import PairedDelta, paired_bootstrap_ci

N_BOOT: Final = 2000


SEED: Final = 0


CONFIDENCE: Final = 0.95


INTERVAL_NOTE: Final = (
    f"paired cluster bootstrap over matched cases ({N_BOOT} resamples, seed {SEED}, "
    f"{CONFIDENCE:.0%})"
)


DELTA_KEYS: Final = ("pass_at_1", "pass_at_k", "pass_hat_k")


@dataclass(frozen=True)
class MetricDelta:
    """head − base of one metric over the pairs; `delta is None` means UNKNOWN."""

    key: str  # pass_at_1 | pass_at_k | pass_hat_k
    metric: str  # pass@k | pass^k
    k: int
    base: float | None  # the metric's mean over the pairs in base
    head: float | None
    delta: PairedDelta | None
    unknown_reason: str = ""

    @property
    def name(self) -> str:
        return self.metric.replace("k", str(self.k))

    def as_json(self) -> dict[str, Any]:
        """The delta as `relidash compare --json` and a review's record give it."""
        d = self.delta
        return {
            "metric": self.metric,
            "k": self.k,
            "base": self.base,
            "head": self.head,
            "delta": d.delta if d else None,
            "ci_low": d.ci_low if d else None,
            "ci_high": d.ci_high if d else None,
            "n_pairs": d.n_pairs if d else 0,
            "unknown_reason": self.unknown_reason or None,
        }


def counts_delta(
    counts: Sequence[np.ndarray], key: str, metric: str, k: int, harness: str = MULTIVON
) -> MetricDelta:
    """One metric's change at k over (n_base, c_base, n_head, c_head) arrays, one entry per
    matched pair, with its paired bootstrap CI (UNKNOWN in the words of `harness`)."""
    n_base, c_base, n_head, c_head = counts
    if n_base.size == 0:
        return MetricDelta(
            key, metric, k, None, None, None, "UNKNOWN — no case is evaluated in both releases."
        )
    shortest = int(min(n_base.min(), n_head.min()))
    if k > shortest:
        reason = k_beyond_matched(harness, k, shortest)
        return MetricDelta(key, metric, k, None, None, None, reason)
    estimator = pass_hat_k if metric == METRIC_PASS_HAT_K else pass_at_k
    before = np.atleast_1d(estimator(n_base, c_base, k))
    after = np.atleast_1d(estimator(n_head, c_head, k))
    delta = paired_bootstrap_ci(before, after, CONFIDENCE, N_BOOT, SEED)
    return MetricDelta(key, metric, k, float(before.mean()), float(after.mean()), delta)
