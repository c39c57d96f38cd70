"""Cluster-bootstrap percentile intervals that reproduce multivon-eval's to the last bit.

Role: the confidence interval on a suite's mean of per-case estimates. Cases, not
trials, are resampled (trials of one case are correlated; resampling them would fake
precision). multivon-eval draws each resample with `random.Random(seed).choice(values)`,
m draws per resample, 2000 resamples, in a Python loop. Here the same draws come from
numpy: `random.Random(seed)` seeds MT19937 with `init_by_array` of the seed's 32-bit
words, as `numpy.random.RandomState([seed])` does, and `choice` keeps the top
`m.bit_length()` bits of one 32-bit output, rejecting values >= m. Upstream reuses one
seed for every call, so the resample index matrix depends only on (m, n_boot, seed) and
is built once and cached.

Case order matters: the i-th draw picks the i-th value of the list as given, so values
must be passed in the report's case (file) order to match upstream.

Must not: compute per-case estimators, decide what is UNKNOWN, or import pandas, DuckDB
or Streamlit.

References: Efron & Tibshirani 1993, "An Introduction to the Bootstrap" (percentile
interval); Wilson 1927 (the fallback for degenerate samples).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Final, Generic, TypeVar

import numpy as np
import numpy.typing as npt

from .intervals import check_confidence, wilson_bounds

METHOD_BOOTSTRAP: Final = "cluster-bootstrap"
METHOD_WILSON: Final = "wilson"

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]
StrArray = npt.NDArray[np.str_]


# --- validation -------------------------------------------------------------------------


def _check_int(name: str, value: object, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return int(value)


def _check_choice_args(m: int, n_boot: int, seed: int) -> tuple[int, int, int]:
    m = _check_int("m", m, 1)
    if m >= 2**32:
        raise ValueError(f"m must be < 2**32 (one 32-bit output per draw), got {m}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return m, _check_int("n_boot", n_boot, 1), int(seed)


def _check_values(values: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] < 1:
        raise ValueError(f"values must have shape (rows, m) with m >= 1, got {arr.shape}")
    if not ((arr >= 0.0) & (arr <= 1.0)).all():  # also refuses NaN
        raise ValueError("values must be per-case estimates in [0, 1]")
    return arr


# --- computation ------------------------------------------------------------------------


def _cpython_mt19937(seed: int) -> np.random.MT19937:
    """An MT19937 in the state `random.Random(seed)` starts from."""
    words = []
    rest = abs(seed)  # CPython seeds with |seed|
    while rest:
        words.append(rest & 0xFFFFFFFF)
        rest >>= 32
    # a list, not an int: a list takes numpy's init_by_array path, an int init_genrand
    legacy = np.random.RandomState(words or [0])
    bit_generator = np.random.MT19937(0)
    bit_generator.state = {
        "bit_generator": "MT19937",
        "state": legacy.get_state(legacy=False)["state"],
    }
    return bit_generator


Key = tuple[int, int, int]  # (m, n_boot, seed)
ArrayT = TypeVar("ArrayT", bound=np.ndarray)


class _ArrayCache(Generic[ArrayT]):
    """`build`'s read-only arrays by (m, n_boot, seed), dropping the least recently used
    once they hold more than `limit` bytes together (the newest is always kept).

    functools.lru_cache bounds the number of entries, and one entry here is n_boot x m
    numbers: 32 MB at 2,000 cases, so 64 entries of large suites would have held 2 GB in
    a served app. Safe across threads (two may build the same array at once; one is kept).
    """

    def __init__(self, build: Callable[[int, int, int], ArrayT], limit: int) -> None:
        self.build, self.limit = build, limit
        self.entries: OrderedDict[Key, ArrayT] = OrderedDict()
        self.lock = threading.Lock()

    def __call__(self, m: int, n_boot: int, seed: int) -> ArrayT:
        key = (m, n_boot, seed)
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return self.entries[key]
        array = self.build(m, n_boot, seed)
        array.flags.writeable = False
        with self.lock:
            array = self.entries.setdefault(key, array)
            held = sum(entry.nbytes for entry in self.entries.values())
            while held > self.limit and len(self.entries) > 1:
                _, dropped = self.entries.popitem(last=False)
                held -= dropped.nbytes
        return array

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


def _build_choice_indices(m: int, n_boot: int, seed: int) -> IndexArray:
    bit_generator = _cpython_mt19937(seed)
    bits = m.bit_length()
    accept = m / 2**bits  # >= 1/2
    needed = m * n_boot
    kept: list[npt.NDArray[np.uint64]] = []
    have = 0
    while have < needed:
        # over-draw a little so one chunk almost always suffices; surplus draws are
        # dropped, which is safe because nothing reads the generator afterwards
        draw = int((needed - have) / accept * 1.02) + 64
        raw = np.asarray(bit_generator.random_raw(draw), dtype=np.uint64) >> np.uint64(32 - bits)
        chunk = raw[raw < m]
        kept.append(chunk)
        have += chunk.size
    indices: IndexArray = np.concatenate(kept)[:needed].astype(np.intp).reshape(n_boot, m)
    return indices


_choice_indices = _ArrayCache(_build_choice_indices, limit=128 * 1024 * 1024)


def cpython_choice_indices(m: int, n_boot: int = 2000, seed: int = 0) -> IndexArray:
    """The indices `random.Random(seed)` picks in n_boot rounds of m `choice` calls.

    Shape (n_boot, m), read-only and cached: equal to
    `[[rng._randbelow(m) for _ in range(m)] for _ in range(n_boot)]`.
    """
    return _choice_indices(*_check_choice_args(m, n_boot, seed))


# Rows resampled together by cluster_bootstrap_ci (their means: 2 MB at 2,000 resamples).
_CHUNK_ROWS = 128
# Above this many cases the count matrix (n_boot x m floats) is not worth caching.
_COUNTS_MAX_CASES = 2000


def _build_draw_counts(m: int, n_boot: int, seed: int) -> FloatArray:
    """How often each case is drawn in each resample, shape (n_boot, m). Its indices are
    built for it, not kept: the counts are what later calls ask for."""
    indices = _build_choice_indices(m, n_boot, seed)
    counts = np.zeros((n_boot, m))
    np.add.at(counts, (np.repeat(np.arange(n_boot), m), indices.ravel()), 1.0)
    return counts


_draw_counts = _ArrayCache(_build_draw_counts, limit=256 * 1024 * 1024)


def _resample_means(rows: FloatArray, m: int, n_boot: int, seed: int) -> FloatArray:
    """Mean of every resample of every row of m values, shape (rows, n_boot).

    A resample's sum is a dot product of the row with its draw counts, so all of them are
    one matrix product. Upstream adds draws left to right; the product sums in another
    order, which moves a mean by a few ulps (1e-16) and an interval bound by no more: far
    inside the 1e-9 the numbers must match upstream to. The count matrices are cached
    (_draw_counts); the indices they are built from are not kept (a cache of them small
    enough to hold would be too small for a load's many case counts, and would build the
    same matrices again and again).
    """
    if m <= _COUNTS_MAX_CASES:
        means: FloatArray = rows @ _draw_counts(m, n_boot, seed).T / m
        return means
    total: FloatArray = np.zeros((rows.shape[0], n_boot))
    # large m: no n_boot x m matrix
    for column in np.ascontiguousarray(_choice_indices(m, n_boot, seed).T):
        total += np.take(rows, column, axis=1)
    means = total / m
    return means


def _positions(size: int, confidence: float) -> list[tuple[int, int, float]]:
    """Upstream's `_quantile` at alpha/2 and 1 - alpha/2 of `size` sorted values: for
    each, the ranks it lies between and its fraction of the way."""
    alpha = 1 - confidence
    positions = []
    for q in (alpha / 2, 1 - alpha / 2):
        idx = q * (size - 1)
        lo = int(idx)
        positions.append((lo, min(lo + 1, size - 1), idx - lo))
    return positions


def _ranks(positions: list[tuple[int, int, float]]) -> list[int]:
    """The ranks `positions` read, in order."""
    return sorted({p for lo, hi, _ in positions for p in (lo, hi)})


def _interpolated(
    stats: dict[int, FloatArray], positions: list[tuple[int, int, float]]
) -> tuple[FloatArray, FloatArray]:
    low, high = (stats[lo] * (1 - frac) + stats[hi] * frac for lo, hi, frac in positions)
    return low, high


def _percentiles(means: FloatArray, confidence: float) -> tuple[FloatArray, FloatArray]:
    """Upstream's `_quantile` at alpha/2 and 1 - alpha/2 of each row's sorted means.

    Reorders `means` in place (the caller's scratch array), which must hold no negative
    value and no NaN (resample means of estimates in [0, 1]): see _order_statistics.
    """
    positions = _positions(means.shape[1], confidence)
    return _interpolated(_order_statistics(means, _ranks(positions)), positions)


def _whole_percentiles(
    sums: FloatArray, scale: FloatArray, confidence: float
) -> tuple[FloatArray, FloatArray]:
    """_percentiles of the means sums / scale, for resample sums that are whole numbers
    below 2**16 (each row's, its estimates' numerators over one denominator: `scale` is
    m times that denominator).

    Such sums sort as 16-bit integers, which numpy sorts by radix, and two different
    means differ by at least 1 / scale, far more than the rounding of upstream's float
    sums: the ranks hold the same resamples as upstream's sorted means, and each value is
    the exact mean (upstream's, to the few ulps its additions lose). Sorting the sums
    themselves is faster than partitioning the means as doubles (_order_statistics).
    """
    keys = sums.astype(np.uint16)
    keys.sort(axis=1, kind="stable")  # radix sort: a 16-bit type and a stable sort
    positions = _positions(sums.shape[1], confidence)
    return _interpolated({rank: keys[:, rank] / scale for rank in _ranks(positions)}, positions)


def _order_statistics(means: FloatArray, ranks: list[int]) -> dict[int, FloatArray]:
    """Each row's value of each rank (0: the smallest), reordering `means` in place.

    Only these are needed, so the rows are partitioned at all the ranks in one call, not
    sorted, and as int64: the means of per-case estimates in [0, 1] are never negative
    and never NaN, and non-negative doubles order as their bit patterns do (-0.0, whose
    pattern is the smallest int64, still sorts first among the values equal to 0). One
    partition of the integers at every rank is faster than the same partition of the
    doubles, than one partition at each inner rank with its neighbour found beside it,
    and than a sort.
    """
    means.view(np.int64).partition(ranks, axis=1)
    return {rank: means[:, rank] for rank in ranks}


def cluster_bootstrap_ci(
    values: npt.ArrayLike,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    *,
    denominators: npt.ArrayLike | None = None,
) -> tuple[FloatArray, FloatArray, StrArray]:
    """Percentile cluster-bootstrap interval on the mean of each row of `values`.

    `values` has shape (r, m): r independent rows (one per k, say), each holding m
    per-case estimates in case order. Returns (low, high, method), each of shape (r,).

    A row whose values are all equal (one case, an all-pass suite) would collapse to a
    point and overstate certainty; like upstream it falls back to a Wilson interval on
    values[0] * m successes of m (method "wilson"), which treats the m estimates as m
    Bernoulli trials: a conservative heuristic, not a bootstrap-consistent interval.

    `denominators` (shape (r,), optional; 0 where unknown): a whole number each row's
    values are fractions of, such as C(n, k) for the estimates of cases of n trials each.
    Where it holds (checked) and m times it is below 2**16, the row is resampled as whole
    numerators, which is exact and faster (_whole_percentiles); the result is the same.
    """
    rows = _check_values(values)
    confidence = check_confidence(confidence)
    m, n_boot, seed = _check_choice_args(rows.shape[1], n_boot, seed)
    low, high = np.empty(rows.shape[0]), np.empty(rows.shape[0])
    method = np.full(rows.shape[0], METHOD_BOOTSTRAP)
    flat = rows.min(axis=1) == rows.max(axis=1)
    low[flat], high[flat] = wilson_bounds(rows[flat, 0] * m, m, confidence)
    method[flat] = METHOD_WILSON
    whole, numerators, scale = _whole_rows(rows, ~flat, denominators)
    if whole.size:
        counts = _draw_counts(m, n_boot, seed)
        for start in range(0, whole.size, _CHUNK_ROWS):
            part = slice(start, start + _CHUNK_ROWS)
            sums = numerators[part] @ counts.T  # whole numbers, exactly
            low[whole[part]], high[whole[part]] = _whole_percentiles(sums, scale[part], confidence)
    rest = ~flat
    rest[whole] = False
    varied = np.flatnonzero(rest)
    # a chunk of rows at a time: the resample means (rows x n_boot) stay in the CPU cache
    for start in range(0, varied.size, _CHUNK_ROWS):
        chunk = varied[start : start + _CHUNK_ROWS]
        means = _resample_means(rows[chunk], m, n_boot, seed)
        low[chunk], high[chunk] = _percentiles(means, confidence)
    return low, high, method


def cluster_resample_means(values: npt.ArrayLike, n_boot: int = 2000, seed: int = 0) -> FloatArray:
    """The resample means behind cluster_bootstrap_ci's interval, shape (rows, n_boot):
    the same draws, for an interval built from more of their distribution than two of its
    quantiles (stats/covering.py's BCa)."""
    rows = _check_values(values)
    m, n_boot, seed = _check_choice_args(rows.shape[1], n_boot, seed)
    out = np.empty((rows.shape[0], n_boot))
    for start in range(0, rows.shape[0], _CHUNK_ROWS):
        out[start : start + _CHUNK_ROWS] = _resample_means(
            rows[start : start + _CHUNK_ROWS], m, n_boot, seed
        )
    return out


# A numerator off a whole number by more than this is not one: the row takes the float path.
_WHOLE_TOLERANCE = 1e-6
# Resample sums of whole numerators below this sort as 16-bit integers (_whole_percentiles).
WHOLE_SUM_LIMIT: Final = 2**16


def _whole_rows(
    rows: FloatArray,
    varied: npt.NDArray[np.bool_],
    denominators: npt.ArrayLike | None,
) -> tuple[IndexArray, FloatArray, FloatArray]:
    """The varied rows that can be resampled as whole numerators (their indices), those
    numerators, and each one's scale (m times its denominator)."""
    m = rows.shape[1]
    none = np.empty(0, dtype=np.intp), np.empty((0, m)), np.empty(0)
    if denominators is None or m > _COUNTS_MAX_CASES:
        return none
    scale = np.asarray(denominators, dtype=np.float64) * m
    if scale.shape != (rows.shape[0],):
        raise ValueError(f"denominators must have shape ({rows.shape[0]},), got {scale.shape}")
    # a resample's sum is at most m times the row's largest numerator: below 2**16
    candidates = np.flatnonzero(varied & (scale > 0) & (scale < WHOLE_SUM_LIMIT))
    if not candidates.size:
        return none
    scaled = rows[candidates] * (scale[candidates, None] / m)
    numerators = np.rint(scaled)
    exact = (np.abs(scaled - numerators) <= _WHOLE_TOLERANCE).all(axis=1)
    return candidates[exact], numerators[exact], scale[candidates[exact]]
