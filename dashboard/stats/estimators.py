"""Per-case pass@k and pass^k estimators, vectorised over cases.

Role: turn one case's recorded trials (n runs, c of them passing) into the unbiased
estimate of "passes at least once in k tries" (pass@k) and "passes all k tries" (pass^k),
for many cases and many k at once, plus the input checks the other stats modules share.

Must not: average over cases, compute intervals, read reports, or import pandas, DuckDB
or Streamlit. Callers that hold a k larger than a case's n get a ValueError here; turning
that into an honest UNKNOWN is `passk.suite_pass_k`'s job.

Both estimators are a probability that a size-k subset drawn without replacement from the
n recorded trials is all from one group (all passes, or all failures), C(g, k) / C(n, k).
It is computed as the product prod_{i<k} (g - i) / (n - i): every factor lies in [0, 1],
so nothing overflows (C(n, k) leaves float64 near n = 1030 and int64 at C(67, 33)), and a
cumulative product over i yields every k in one pass. Never the plug-in (c/n)**k, which
samples with replacement and is biased upwards for finite n.

References: Chen et al. 2021, "Evaluating Large Language Models Trained on Code",
arXiv:2107.03374 (pass@k); Yao et al. 2024, "tau-bench", arXiv:2406.12045 (pass^k).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

METRIC_PASS_AT_K: Final = "pass@k"
METRIC_PASS_HAT_K: Final = "pass^k"
METRICS: Final = (METRIC_PASS_AT_K, METRIC_PASS_HAT_K)

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


# --- validation -------------------------------------------------------------------------


def as_counts(name: str, values: npt.ArrayLike) -> IntArray:
    """`values` as an int64 array of whole numbers.

    Whole-valued floats are accepted because reports are read with counts as DOUBLE; a
    fractional, infinite or NaN count is an error, never silently rounded.
    """
    arr = np.asarray(values)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64, copy=False)  # nothing in this layer writes into it
    if arr.dtype.kind == "f":
        whole = np.isfinite(arr) & (arr == np.round(arr))
        if not whole.all():
            bad = arr[~whole].flat[0]
            raise ValueError(f"{name} must be whole numbers, got {bad!r}")
        return arr.astype(np.int64)
    raise ValueError(f"{name} must be integers, got an array of dtype {arr.dtype}")


def _where(mask: npt.NDArray[np.bool_]) -> str:
    """' (at index i)' for the first True of an array, '' for a scalar."""
    if mask.ndim == 0:
        return ""
    pos = tuple(int(i) for i in np.argwhere(mask)[0])
    return f" (at index {pos[0] if len(pos) == 1 else pos})"


def check_trials(
    n: npt.ArrayLike, c: npt.ArrayLike, k: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    """Broadcast n, c, k and check them with the messages of multivon-eval's `_validate`."""
    n_arr, c_arr, k_arr = np.broadcast_arrays(
        as_counts("n", n), as_counts("c", c), as_counts("k", k)
    )
    bad = k_arr < 1
    if bad.any():
        raise ValueError(f"k must be >= 1, got {k_arr[bad].flat[0]}{_where(bad)}")
    bad = n_arr < 1
    if bad.any():
        raise ValueError(f"n must be >= 1, got {n_arr[bad].flat[0]}{_where(bad)}")
    bad = (c_arr < 0) | (c_arr > n_arr)
    if bad.any():
        raise ValueError(
            f"c must be in [0, {n_arr[bad].flat[0]}], got {c_arr[bad].flat[0]}{_where(bad)}"
        )
    bad = k_arr > n_arr
    if bad.any():
        raise ValueError(
            f"k={k_arr[bad].flat[0]} exceeds the {n_arr[bad].flat[0]} recorded trials — "
            f"cannot estimate without extrapolating{_where(bad)}"
        )
    return n_arr, c_arr, k_arr


def check_cases(n: npt.ArrayLike, c: npt.ArrayLike) -> tuple[IntArray, IntArray]:
    """Per-case trial and pass counts: two 1-D integer arrays of one length, 0 <= c <= n, n >= 1."""
    n_arr, c_arr = as_counts("n", n), as_counts("c", c)
    if n_arr.ndim != 1 or c_arr.ndim != 1:
        raise ValueError(f"n and c must be 1-D, got shapes {n_arr.shape} and {c_arr.shape}")
    if n_arr.shape != c_arr.shape:
        raise ValueError(f"n and c must have one length, got {n_arr.size} and {c_arr.size}")
    # three comparisons, not check_trials' broadcast, on the way every load takes (a load
    # checks each report's cases several times); check_trials words a failure
    if n_arr.size and (n_arr.min() < 1 or c_arr.min() < 0 or (c_arr > n_arr).any()):
        check_trials(n_arr, c_arr, 1)
    return n_arr, c_arr


def check_k(k: object, name: str = "k") -> int:
    """`k` as a Python int >= 1 (bools are refused: True is not a trial count)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be >= 1, got {k}")
    return int(k)


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {sorted(METRICS)}, got {metric!r}")
    return metric


# --- computation ------------------------------------------------------------------------


def _all_from_group(n: IntArray, group: IntArray, k_max: int) -> FloatArray:
    """C(group, k) / C(n, k) for k = 1..k_max, stacked on a new leading axis.

    Row k-1 is prod_{i<k} (group - i) / (n - i); 0 where k > group, NaN where k > n.
    """
    i = np.arange(k_max).reshape((k_max,) + (1,) * n.ndim)
    left = n - i
    factors = (group - i) / np.where(left > 0, left, 1)
    prob = np.cumprod(factors, axis=0)
    k = i + 1
    # the zero factor at i == group already makes these 0; this also clears -0.0
    prob = np.where(k > group, 0.0, prob)
    return np.where(k > n, np.nan, prob)


def _table(n: IntArray, c: IntArray, k_max: int, metric: str) -> FloatArray:
    if metric == METRIC_PASS_HAT_K:
        return _all_from_group(n, c, k_max)
    return 1.0 - _all_from_group(n, n - c, k_max)


def _at_k(n: IntArray, c: IntArray, k: IntArray, metric: str) -> float | FloatArray:
    if k.size == 0:
        return np.zeros(k.shape)
    table = _table(n, c, int(k.max()), metric)
    value = np.take_along_axis(table, (k - 1)[np.newaxis], axis=0)[0]
    return float(value) if value.ndim == 0 else value


def pass_at_k(n: npt.ArrayLike, c: npt.ArrayLike, k: npt.ArrayLike) -> float | FloatArray:
    """P(at least one of k trials passes): 1 - C(n-c, k) / C(n, k), unbiased.

    Broadcasts over array-likes of whole numbers; a float for scalar inputs. 0 when c == 0,
    1 when n - c < k. Raises ValueError for k < 1, n < 1, c outside [0, n] or k > n.
    """
    n_arr, c_arr, k_arr = check_trials(n, c, k)
    return _at_k(n_arr, c_arr, k_arr, METRIC_PASS_AT_K)


def pass_hat_k(n: npt.ArrayLike, c: npt.ArrayLike, k: npt.ArrayLike) -> float | FloatArray:
    """P(all k trials pass): C(c, k) / C(n, k), the exact hypergeometric estimator.

    Broadcasts like `pass_at_k`; 0 when c < k. Same ValueErrors as `pass_at_k`.
    """
    n_arr, c_arr, k_arr = check_trials(n, c, k)
    return _at_k(n_arr, c_arr, k_arr, METRIC_PASS_HAT_K)


def pass_k_tables(n: IntArray, c: IntArray, k_max: int, metric: str) -> FloatArray:
    """pass_k_table of a stack of suites with one number of cases at once: n and c of shape
    (suites, m), each row already checked (check_cases); shape (k_max, suites, m)."""
    return _table(n, c, check_k(k_max, "k_max"), check_metric(metric))


def pass_k_table(n: npt.ArrayLike, c: npt.ArrayLike, k_max: int, metric: str) -> FloatArray:
    """Every case's estimator at every k = 1..k_max, shape (k_max, m).

    Row k-1 holds each case's pass@k or pass^k (`metric`); NaN where k exceeds that
    case's n, since a case cannot speak for more tries than it recorded.
    """
    n_arr, c_arr = check_cases(n, c)
    return pass_k_tables(n_arr, c_arr, k_max, metric)
