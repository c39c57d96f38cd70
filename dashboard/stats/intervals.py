"""Wilson score intervals and the inverse normal CDF, as multivon-eval computes them.

Role: the closed-form interval relidash falls back to when a bootstrap would collapse
to a point, and the z quantile behind it. Both follow multivon-eval's
`experiments._norm_ppf` and `experiments.wilson_interval` operation for operation, so a
bound printed by relidash equals the one multivon-eval wrote.

Must not: resample, know about pass@k, or import pandas, DuckDB or Streamlit.

References: Wilson 1927, "Probable inference, the law of succession, and statistical
inference", JASA 22(158).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1) exclusive, got {confidence}")
    return float(confidence)


def _norm_cdf(x: float) -> float:
    return (1 + math.erf(x / math.sqrt(2))) / 2


@lru_cache(maxsize=64)  # one confidence level serves every interval of a load
def norm_ppf(p: float) -> float:
    """Inverse standard normal CDF by 50 Newton steps from 0, p clipped to [1e-9, 1 - 1e-9].

    Deliberately multivon-eval's iteration rather than a rational approximation: the
    last bits of z reach every Wilson bound, and those must match upstream's.
    """
    p = max(1e-9, min(1 - 1e-9, p))
    x = 0.0
    for _ in range(50):
        fx = _norm_cdf(x) - p
        dfx = math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        if dfx == 0:
            break
        x -= fx / dfx
    return x


def _check_counts(successes: FloatArray, n: FloatArray) -> None:
    bad = ~np.isfinite(n) | (n < 0) | (n != np.round(n))
    if bad.any():
        raise ValueError(f"n must be a whole number >= 0, got {n[bad][0]}")
    bad = ~((successes >= 0) & (successes <= n))  # also catches NaN
    if bad.any():
        raise ValueError(f"successes must be in [0, n], got {successes[bad][0]} of {n[bad][0]}")


def _wilson(successes: FloatArray, n: FloatArray, z: float) -> tuple[FloatArray, FloatArray]:
    empty = n == 0
    n = np.where(empty, 1.0, n)
    # operation order kept from upstream so the bounds agree to the last bit
    p_hat = successes / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p_hat + z2 / (2 * n)) / denom
    margin = (z * np.sqrt(p_hat * (1 - p_hat) / n + z2 / (4 * n * n))) / denom
    low = np.where(empty, 0.0, np.maximum(0.0, center - margin))
    high = np.where(empty, 1.0, np.minimum(1.0, center + margin))
    return low, high


def wilson_bounds(
    successes: npt.ArrayLike, n: npt.ArrayLike, confidence: float = 0.95
) -> tuple[FloatArray, FloatArray]:
    """Wilson score bounds for many proportions at once: (low, high), broadcast shape.

    `successes` may be fractional (the bootstrap's fallback passes a mean times m);
    n == 0 gives the uninformative (0, 1).
    """
    s_arr, n_arr = np.broadcast_arrays(
        np.asarray(successes, dtype=np.float64), np.asarray(n, dtype=np.float64)
    )
    _check_counts(np.atleast_1d(s_arr), np.atleast_1d(n_arr))
    z = norm_ppf(1 - (1 - check_confidence(confidence)) / 2)
    return _wilson(s_arr, n_arr, z)


def wilson_interval(successes: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for `successes` out of `n`, clipped to [0, 1]; (0, 1) when n == 0."""
    low, high = wilson_bounds(successes, n, confidence)
    return float(low), float(high)
