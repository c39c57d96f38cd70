"""The intervals a verdict adds to the percentile bootstrap where that one covers too little.

Role: a verdict (a gate rule, the Review page's) decides on a 95% interval, so that
interval must hold the truth about 95% of the time. The percentile intervals relidash
reports, as multivon-eval does, fall short on a realistic mix of case rates
(benchmarks/bench_coverage.py), for three reasons, each met here by an interval a verdict
reads besides the reported one (the hull of the two: never narrower than the reported
interval, and wider only where the other is):

- Skew. Per-case values crowd near 1 with a few near 0 (pass@k above all), so the mean's
  sampling distribution has a long low tail, and the percentile interval is short on that
  side. The BCa interval (bias-corrected and accelerated) reads the same resamples at
  levels moved by the resamples' median bias z0 and by the acceleration a, the skew of
  the jackknife values, which for a mean is Σ(v − v̄)³ / (6 (Σ(v − v̄)²)^{3/2}). Where
  the values are not skewed it is the percentile interval.
- A few cases. At SMALL_SUITE cases or fewer a sample may hold none of the rare hard cases
  and understate its own spread, which no interval built from that sample can see. The
  Wilson interval of the mean read as a proportion of m cases assumes the largest spread
  values in [0, 1] can have (a binomial's), so it reaches where the sample cannot.
- A mean of paired differences, heavy-tailed (mostly 0, a few ±1), read with a normal
  quantile and an n denominator. Student's t interval, mean ± t(m − 1) s / √m with s's
  m − 1 denominator, is the classical small-sample interval it approximates.

The same holds for the p-value of "no change" a slice's flag reads: the paired bootstrap's
(the level at which its percentile interval reaches zero) is too small as often as that
interval misses, and Holm's adjustment reads it far in the tail (0.05 / the number of
slices), where the bootstrap is least reliable. The flag reads the larger of it and
Student's one-sample t-test p-value of the mean difference: the p-value dual to the
verdict's hull interval (the hull at level 1 − α leaves zero out exactly where both
intervals do), and one that holds its level where the t-test does. With no change (the
same agent twice) each case's difference is symmetric about zero, and there the t-test
is conservative at the usual levels (Efron 1969).

Must not: compute per-case estimators, decide a verdict, or import pandas, DuckDB or
Streamlit.

References: Efron 1987, "Better bootstrap confidence intervals", JASA 82(397) (BCa);
Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 14 (BCa, the
acceleration from the jackknife) and §12–14 (the percentile interval's coverage in small
samples); Wilson 1927; Student 1908, "The probable error of a mean", Biometrika 6(1);
Abramowitz & Stegun 1964, 26.7.3–26.7.5 (the t distribution's CDF and quantile).
Efron 1969, "Student's t-test under symmetry conditions", JASA 64(328) (the t-test's level
on symmetric samples); Holm 1979 (the adjustment that reads these p-values).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import Final

import numpy as np
import numpy.typing as npt

from .bootstrap import cluster_resample_means
from .intervals import check_confidence, norm_ppf, wilson_bounds
from .paired import PairedDelta

FloatArray = npt.NDArray[np.float64]

# At or below this many cases a verdict also reads the Wilson interval of the mean: at
# 10-20 cases the BCa interval alone covers as little as 85-91% of pass@k on the
# benchmark's mix (a sample without its hard cases), from 25 cases on 94% or more.
SMALL_SUITE: Final = 20
# Resample means this close to the estimate are ties with it (a matrix product's sums
# differ from the estimate's by a few ulps)
_TIE: Final = 1e-12
# BCa ends within this of the reported ones are the reported ones: the numbers match
# upstream's to 1e-9, and a bound that moved by less has not moved
_ROUNDING: Final = 1e-9
# Above this many degrees of freedom the t quantile comes from its expansion in z (A&S
# 26.7.5), exact there to 1e-12; below, from the exact CDF by bisection.
_EXPANSION_DF: Final = 200
_NORMAL: Final = NormalDist()


def _check_rows(values: npt.ArrayLike) -> FloatArray:
    rows = np.asarray(values, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[1] < 1:
        raise ValueError(f"values must have shape (rows, m) with m >= 1, got {rows.shape}")
    if not ((rows >= 0.0) & (rows <= 1.0)).all():  # also refuses NaN
        raise ValueError("values must be per-case estimates in [0, 1]")
    return rows


def _bca_level(z0: float, accel: float, z: float) -> float:
    """The level BCa reads for the normal quantile z (Efron & Tibshirani 1993, (14.10))."""
    shifted = z0 + z
    denominator = 1.0 - accel * shifted
    if denominator <= 0.0:  # the acceleration sends this end past the resamples
        return 0.0 if z < 0 else 1.0
    return _NORMAL.cdf(z0 + shifted / denominator)


def _quantile(sorted_row: FloatArray, level: float) -> float:
    """Upstream's `_quantile` (linear between order statistics) of sorted values."""
    position = level * (sorted_row.size - 1)
    low = int(position)
    high = min(low + 1, sorted_row.size - 1)
    return float(sorted_row[low] * (1 - (position - low)) + sorted_row[high] * (position - low))


def bca_bounds(
    values: npt.ArrayLike, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[FloatArray, FloatArray]:
    """The BCa interval on each row's mean, from the resamples of cluster_bootstrap_ci with
    the same n_boot and seed. A row with no spread gets its mean as both bounds."""
    rows = _check_rows(values)
    confidence = check_confidence(confidence)
    means = np.sort(cluster_resample_means(rows, n_boot, seed), axis=1)
    point = rows.mean(axis=1)
    centred = rows - point[:, None]
    square = (centred**2).sum(axis=1)
    cube = (centred**3).sum(axis=1)
    z = norm_ppf(1 - (1 - confidence) / 2)
    low, high = point.copy(), point.copy()
    # one row at a time: each reads its own levels (a verdict's one row, a plan's hundreds)
    for i in np.flatnonzero(square > 0.0):
        below = np.count_nonzero(means[i] < point[i] - _TIE)
        ties = np.count_nonzero(np.abs(means[i] - point[i]) <= _TIE)
        share = float(below + ties / 2) / n_boot
        share = min(max(share, 0.5 / n_boot), 1 - 0.5 / n_boot)  # z0 finite
        z0 = _NORMAL.inv_cdf(share)
        accel = float(cube[i] / (6.0 * square[i] ** 1.5))
        low[i] = _quantile(means[i], _bca_level(z0, accel, -z))
        high[i] = _quantile(means[i], _bca_level(z0, accel, z))
    return low, high


def suite_verdict_bounds(
    values: npt.ArrayLike,
    low: npt.ArrayLike,
    high: npt.ArrayLike,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[FloatArray, FloatArray]:
    """The interval a verdict reads on each row's mean: the hull of the reported interval
    (`low`, `high`, from n_boot resamples drawn with `seed`), the BCa interval on the same
    resamples, and at SMALL_SUITE cases or fewer the Wilson interval of the mean."""
    rows = _check_rows(values)
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    bca_low, bca_high = bca_bounds(rows, confidence, n_boot, seed)
    # an end BCa moves by a rounding's worth (its resample sums add in another order than
    # upstream's) stays the reported one
    wide_low = np.where(bca_low < low - _ROUNDING, bca_low, low)
    wide_high = np.where(bca_high > high + _ROUNDING, bca_high, high)
    m = rows.shape[1]
    if m <= SMALL_SUITE:
        wilson_low, wilson_high = wilson_bounds(rows.mean(axis=1) * m, m, confidence)
        wide_low, wide_high = np.minimum(wide_low, wilson_low), np.maximum(wide_high, wilson_high)
    return wide_low, wide_high


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| <= t) for Student's t with df degrees of freedom (A&S 26.7.3, 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    total, term = 0.0, 1.0
    if df % 2:
        term = math.cos(theta)
        for j in range(1, (df - 1) // 2 + 1):
            total += term
            term *= cos2 * (2 * j) / (2 * j + 1)
        return 2.0 / math.pi * (theta + sin * total)
    for j in range(1, df // 2 + 1):
        total += term
        term *= cos2 * (2 * j - 1) / (2 * j)
    return sin * total


@lru_cache(maxsize=256)  # one per pair count a load's verdicts see
def student_t_ppf(p: float, df: int) -> float:
    """The p quantile of Student's t with df >= 1 degrees of freedom, p in (0, 1)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1) exclusive, got {p}")
    if isinstance(df, bool) or not isinstance(df, int | np.integer) or df < 1:
        raise ValueError(f"df must be an integer >= 1, got {df!r}")
    if p < 0.5:
        return -student_t_ppf(1.0 - p, df)
    if df > _EXPANSION_DF:
        z = _NORMAL.inv_cdf(p)
        terms = (
            (z**3 + z) / 4,
            (5 * z**5 + 16 * z**3 + 3 * z) / 96,
            (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
            (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
        )
        return z + math.fsum(term / int(df) ** (i + 1) for i, term in enumerate(terms))
    target = 2.0 * p - 1.0
    low, high = 0.0, 1.0
    while _t_two_sided(high, int(df)) < target:
        low, high = high, 2.0 * high
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (mid, high) if _t_two_sided(mid, int(df)) < target else (low, mid)
    return (low + high) / 2


def student_t_bounds(
    mean: float, spread: float, n: int, confidence: float = 0.95
) -> tuple[float, float]:
    """Student's t interval on a mean of n values with standard deviation `spread` (m − 1
    denominator): unbounded for one value, whose spread nothing estimates."""
    confidence = check_confidence(confidence)
    if n < 2:
        return -math.inf, math.inf
    half = student_t_ppf(1 - (1 - confidence) / 2, n - 1) * spread / math.sqrt(n)
    return mean - half, mean + half


def paired_verdict_bounds(delta: PairedDelta, confidence: float = 0.95) -> tuple[float, float]:
    """The interval a verdict reads on a paired change: the hull of the paired bootstrap's
    and Student's t interval of the mean difference, within the [-1, 1] a difference of
    per-case values in [0, 1] can take (one pair: all of it)."""
    t_low, t_high = student_t_bounds(delta.delta, delta.spread, delta.n_pairs, confidence)
    return max(-1.0, min(delta.ci_low, t_low)), min(1.0, max(delta.ci_high, t_high))


def student_t_p_value(mean: float, spread: float, n: int) -> float:
    """Two-sided p-value of Student's one-sample t-test of a zero mean, from n values with
    mean `mean` and standard deviation `spread` (m − 1 denominator): 1 for one value, whose
    spread nothing estimates; with no spread, 1 at a zero mean and 0 elsewhere."""
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if not (math.isfinite(mean) and math.isfinite(spread)) or spread < 0.0:
        raise ValueError(f"mean and spread must be finite and spread >= 0, got {mean}, {spread}")
    if n < 2:
        return 1.0
    if spread == 0.0:
        return 1.0 if mean == 0.0 else 0.0
    t = abs(mean) / (spread / math.sqrt(n))
    return min(1.0, max(0.0, 1.0 - _t_two_sided(t, int(n) - 1)))


def paired_verdict_p_value(delta: PairedDelta) -> float:
    """The p-value of "no change" a verdict reads on a paired change (a slice's flag, after
    Holm's adjustment): the larger of the paired bootstrap's and Student's t-test's of the
    mean difference, the p-value dual to paired_verdict_bounds."""
    return max(delta.p_value, student_t_p_value(delta.delta, delta.spread, delta.n_pairs))
