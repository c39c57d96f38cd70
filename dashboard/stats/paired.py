"""Bootstrap intervals on the difference head − base of a per-case metric between releases.

Role: say how far a suite moved between two releases, and how sure that is. The paired
bootstrap resamples *matched cases*: one draw picks case i in both releases at once, so
a case's difficulty, shared by its two measurements, cancels out of the difference and
the interval is as narrow as the data allow. The unpaired counterpart resamples each
release on its own (as if the cases were unrelated); it exists to show what pairing buys
and to test that it does.

Index stream: `cpython_choice_indices(m, n_boot, seed)`, the same draws multivon-eval's
`random.Random(seed).choice` makes for a suite of m cases. So a paired delta against an
all-zero base resamples exactly like the suite's own cluster-bootstrap CI of head, and a
printed interval never depends on numpy's generator version. The unpaired interval draws
head's indices with `seed + 1`: two streams with one seed would pair equal-size samples
draw for draw and quietly turn it back into the paired interval.

Interval: the percentile interval (linear interpolation between order statistics, as
upstream's `_quantile`), widened to hold the point estimate, since a near-constant
sample's resample means can sit an ulp away from its mean. When every difference is the
same (typically all 0: nothing changed) the interval collapses to that point; there is no
Wilson-like fallback for a difference of proportions, and callers should read a
zero-width interval as "every matched case moved by exactly this much".

Must not: match cases, compute per-case estimators, decide what is UNKNOWN, or import
pandas, DuckDB or Streamlit.

References: Efron & Tibshirani 1993, "An Introduction to the Bootstrap", ch. 13 (the
percentile interval) and §8.3 (paired data: resample the pairs); Chen et al. 2021,
arXiv:2107.03374 (pass@k); Yao et al. 2024, arXiv:2406.12045 (pass^k).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from .bootstrap import cpython_choice_indices
from .intervals import check_confidence

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]

# Resample means are computed this many index cells at a time, so memory stays bounded
# (about 32 MB of float64 plus the indices) however many cases a suite has.
_CHUNK_CELLS: Final = 4_000_000


@dataclass(frozen=True)
class PairedDelta:
    """mean(head − base) over matched cases, with its paired bootstrap interval and the
    two-sided bootstrap p-value of "no change" (the share of resample means on the far
    side of zero, doubled; (count + 1) / (n_boot + 1) so it is never 0)."""

    delta: float
    ci_low: float
    ci_high: float
    n_pairs: int
    p_value: float = 1.0
    spread: float = 0.0  # the differences' standard deviation (m − 1 denominator; 0 for one)


@dataclass(frozen=True)
class UnpairedDelta:
    """mean(head) − mean(base) with an interval that resamples each side independently."""

    delta: float
    ci_low: float
    ci_high: float
    n_base: int
    n_head: int


# --- validation -------------------------------------------------------------------------


def _check_sample(name: str, values: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size < 1:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must hold finite per-case values")
    return arr


def _check_boot(n_boot: int, seed: int) -> tuple[int, int]:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be an integer >= 1, got {n_boot!r}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return int(n_boot), int(seed)


def _check_paired(
    base: npt.ArrayLike, head: npt.ArrayLike, confidence: float, n_boot: int, seed: int
) -> tuple[FloatArray, FloatArray, float, int, int]:
    base_arr, head_arr = _check_sample("base", base), _check_sample("head", head)
    if base_arr.shape != head_arr.shape:
        raise ValueError(
            f"base and head must hold one value per matched case, got {base_arr.size} "
            f"and {head_arr.size}"
        )
    return base_arr, head_arr, check_confidence(confidence), *_check_boot(n_boot, seed)


# --- computation ------------------------------------------------------------------------


def _resample_means(values: FloatArray, indices: IndexArray) -> FloatArray:
    """Mean of `values` under each row of `indices`: shape (n_boot,)."""
    rows_per_chunk = max(1, _CHUNK_CELLS // values.size)
    means = np.empty(indices.shape[0])
    for start in range(0, indices.shape[0], rows_per_chunk):
        block = indices[start : start + rows_per_chunk]
        means[start : start + block.shape[0]] = np.take(values, block).mean(axis=1)
    return means


def _interval(means: FloatArray, point: float, confidence: float) -> tuple[float, float]:
    alpha = 1.0 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2], method="linear")
    return float(min(low, point)), float(max(high, point))


def paired_bootstrap_ci(
    base: npt.ArrayLike,
    head: npt.ArrayLike,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> PairedDelta:
    """Percentile interval on mean(head − base), resampling matched cases as pairs.

    `base[i]` and `head[i]` are one case's per-case metric (pass@1 = c/n, pass^k, ...)
    in the two releases. Deterministic: the same inputs give the same interval.
    Raises ValueError for empty, ragged or non-finite input.
    """
    base_arr, head_arr, confidence, n_boot, seed = _check_paired(
        base, head, confidence, n_boot, seed
    )
    differences = head_arr - base_arr
    point = float(differences.mean())
    indices = cpython_choice_indices(differences.size, n_boot, seed)
    means = _resample_means(differences, indices)
    low, high = _interval(means, point, confidence)
    spread = float(differences.std(ddof=1)) if differences.size > 1 else 0.0
    return PairedDelta(point, low, high, int(differences.size), _p_value(means), spread)


def _p_value(means: FloatArray) -> float:
    """Two-sided bootstrap p-value of a zero mean: the percentile interval at level
    1 − p just reaches zero (Efron & Tibshirani 1993, §16.4)."""
    below = int((means <= 0.0).sum())
    above = int((means >= 0.0).sum())
    tail = (min(below, above) + 1) / (means.size + 1)
    return float(min(1.0, 2.0 * tail))


def holm_adjusted(p_values: npt.ArrayLike) -> FloatArray:
    """Holm's step-down adjustment of a family of p-values (same order as given): reject
    where the adjusted value is below the family-wise level. Controls the family-wise
    error rate under any dependence between the tests.

    References: Holm 1979, "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6(2).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or ((p < 0) | (p > 1) | ~np.isfinite(p)).any():
        raise ValueError("p-values must be a 1-D array of numbers in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted


def unpaired_bootstrap_ci(
    base: npt.ArrayLike,
    head: npt.ArrayLike,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> UnpairedDelta:
    """Percentile interval on mean(head) − mean(base), resampling each release on its own.

    The two samples may differ in size. Base draws from `seed`, head from `seed + 1`.
    """
    base_arr, head_arr = _check_sample("base", base), _check_sample("head", head)
    confidence = check_confidence(confidence)
    n_boot, seed = _check_boot(n_boot, seed)
    point = float(head_arr.mean() - base_arr.mean())
    base_means = _resample_means(base_arr, cpython_choice_indices(base_arr.size, n_boot, seed))
    head_means = _resample_means(head_arr, cpython_choice_indices(head_arr.size, n_boot, seed + 1))
    low, high = _interval(head_means - base_means, point, confidence)
    return UnpairedDelta(point, low, high, int(base_arr.size), int(head_arr.size))
