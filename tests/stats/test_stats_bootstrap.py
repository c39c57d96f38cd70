"""Cluster bootstrap: CPython's draws reproduced bit for bit, upstream's loop matched to 1e-15."""

from __future__ import annotations

import random

import numpy as np
import pytest
import upstream_copy as upstream
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.stats import (
    METHOD_BOOTSTRAP,
    METHOD_WILSON,
    cluster_bootstrap_ci,
    cpython_choice_indices,
)
from dashboard.stats.bootstrap import _ArrayCache

# multivon-eval 0.20.0's own helpers, the oracle (tests/support/upstream_copy.py)
_norm_ppf = upstream.norm_ppf
wilson_interval = upstream.wilson_interval
_quantile = upstream.quantile
_cluster_bootstrap_ci = upstream.cluster_bootstrap_ci


# --- the index stream ---------------------------------------------------------------------


def cpython_stream(m: int, n_boot: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[rng._randbelow(m) for _ in range(m)] for _ in range(n_boot)]


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**32 + 7, 2**70 + 3, -5])
@pytest.mark.parametrize("m", [1, 2, 3, 4, 7, 8, 50, 1000])
def test_choice_indices_equal_cpython(m: int, seed: int) -> None:
    n_boot = 2000 if m <= 50 else 40
    got = cpython_choice_indices(m, n_boot, seed)
    assert got.shape == (n_boot, m)
    assert got.tolist() == cpython_stream(m, n_boot, seed)


def test_choice_indices_match_choice_itself() -> None:
    values = list(range(100, 113))
    rng = random.Random(0)
    picks = [[rng.choice(values) for _ in values] for _ in range(2000)]
    assert (np.asarray(values)[cpython_choice_indices(13)] == picks).all()


def test_choice_indices_cached_and_read_only() -> None:
    first = cpython_choice_indices(9, 100, 3)
    assert cpython_choice_indices(9, 100, 3) is first
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 1


def test_array_cache_bounded_by_bytes() -> None:
    """Entries past the byte limit go, least recently used first; the newest always stays."""
    built: list[tuple[int, int, int]] = []

    def build(m: int, n_boot: int, seed: int) -> np.ndarray:
        built.append((m, n_boot, seed))
        return np.zeros((n_boot, m))  # n_boot * m * 8 bytes

    cache = _ArrayCache(build, limit=3 * 8 * 100)  # room for three 100-byte-row arrays
    a, b, c = cache(100, 1, 0), cache(100, 1, 1), cache(100, 1, 2)
    assert cache(100, 1, 0) is a  # a hit, and now the most recently used
    assert not a.flags.writeable
    cache(100, 1, 3)  # over the limit: b, the least recently used, goes
    assert len(built) == 4
    assert cache(100, 1, 0) is a and cache(100, 1, 2) is c
    assert len(built) == 4
    assert cache(100, 1, 1) is not b  # built again
    assert len(built) == 5
    huge = cache(1000, 1, 0)  # alone over the limit: kept, everything else dropped
    assert cache(1000, 1, 0) is huge and list(cache.entries) == [(1000, 1, 0)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((0,), "m must be >= 1"),
        ((3, 0), "n_boot must be >= 1"),
        ((True,), "m must be an"),
        ((3, 10, 1.5), "seed must be"),
        ((2**32,), "2\\*\\*32"),
    ],
)
def test_choice_indices_validation(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cpython_choice_indices(*args)


# --- the interval -------------------------------------------------------------------------


def test_single_row_matches_upstream_to_rounding() -> None:
    values = [0.1 * (i % 7) + 1 / (i + 3) for i in range(37)]
    low, high, method = cluster_bootstrap_ci(np.array([values]))
    # the same draws; sums in another order (a matrix product) move a bound by a few ulps
    want = _cluster_bootstrap_ci(values, 0.95, 2000, 0)
    assert low[0] == pytest.approx(want[0], abs=1e-15)
    assert high[0] == pytest.approx(want[1], abs=1e-15)
    assert method.tolist() == [METHOD_BOOTSTRAP]


def test_rows_are_independent_and_flat_rows_use_wilson() -> None:
    rows = np.array(
        [
            [1.0, 1.0, 1.0, 1.0, 1.0],
            [0.0, 0.0, 0.0, 0.0, 0.0],
            [0.4, 0.4, 0.4, 0.4, 0.4],
            [1.0, 0.0, 1.0, 1.0, 0.5],
            [0.9, 0.1, 0.2, 0.3, 0.0],
        ]
    )
    low, high, method = cluster_bootstrap_ci(rows, confidence=0.9)
    assert method.tolist() == [METHOD_WILSON] * 3 + [METHOD_BOOTSTRAP] * 2
    for r, row in enumerate(rows.tolist()):
        want = _cluster_bootstrap_ci(row, 0.9, 2000, 0)
        assert (low[r], high[r]) == pytest.approx(want, abs=1e-15)


def test_one_case_at_one_is_wilson() -> None:
    low, high, method = cluster_bootstrap_ci([[1.0]])
    assert (round(float(low[0]), 4), float(high[0]), method[0]) == (0.2065, 1.0, METHOD_WILSON)


def test_no_rows() -> None:
    low, high, method = cluster_bootstrap_ci(np.empty((0, 4)))
    assert low.shape == high.shape == method.shape == (0,)


@pytest.mark.parametrize(
    ("values", "kwargs", "message"),
    [
        ([1.0, 2.0], {}, "shape"),
        (np.empty((2, 0)), {}, "shape"),
        ([[np.nan, 1.0]], {}, r"\[0, 1\]"),
        ([[2.0, 2.0]], {}, r"\[0, 1\]"),
        ([[0.0, 1.0]], {"confidence": 1.0}, "confidence"),
        ([[0.0, 1.0]], {"n_boot": 0}, "n_boot"),
    ],
)
def test_validation(values, kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        cluster_bootstrap_ci(values, **kwargs)


estimate = st.sampled_from([0.0, 0.125, 1 / 3, 0.5, 0.75, 1.0]) | st.floats(0, 1)
row_lists = st.integers(1, 9).flatmap(
    lambda m: st.lists(st.lists(estimate, min_size=m, max_size=m), min_size=1, max_size=3)
)


@settings(max_examples=40, deadline=None)
@given(
    row_lists,
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
    st.integers(1, 300),
    st.integers(0, 2**40),
)
def test_matches_upstream_loop(rows, confidence: float, n_boot: int, seed: int) -> None:
    low, high, method = cluster_bootstrap_ci(np.array(rows), confidence, n_boot, seed)
    for r, row in enumerate(rows):
        want = _cluster_bootstrap_ci(row, confidence, n_boot, seed)
        assert abs(low[r] - want[0]) <= 1e-12 and abs(high[r] - want[1]) <= 1e-12
        assert method[r] == (METHOD_WILSON if min(row) == max(row) else METHOD_BOOTSTRAP)
        assert 0.0 <= low[r] <= high[r] <= 1.0


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 6),
    size=st.integers(1, 300),
    distinct=st.integers(1, 12),
    confidence=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]),
    seed=st.integers(0, 2**32 - 1),
)
def test_percentiles_equal_those_of_the_sorted_means(
    rows: int, size: int, distinct: int, confidence: float, seed: int
) -> None:
    """The order statistics the interval is read from, found by partitions, are those of
    the fully sorted rows, to the bit: with many equal values (as resampled means have)
    and with sizes small enough that the ranks meet. The partitions compare bit patterns:
    -0.0 (the smallest int64) must still count as equal to 0."""
    from dashboard.stats.bootstrap import _percentiles

    rng = np.random.default_rng(seed)
    means = rng.integers(0, distinct, size=(rows, size)) / distinct
    means[rng.random(means.shape) < 0.1] = -0.0  # a zero with its sign bit set
    ordered = np.sort(means, axis=1)
    alpha = 1 - confidence
    expected = []
    for q in (alpha / 2, 1 - alpha / 2):
        idx = q * (size - 1)
        lo = int(idx)
        hi, frac = min(lo + 1, size - 1), idx - lo
        expected.append(ordered[:, lo] * (1 - frac) + ordered[:, hi] * frac)
    low, high = _percentiles(means.copy(), confidence)
    assert np.array_equal(low, expected[0]) and np.array_equal(high, expected[1])


# --- whole numerators ---------------------------------------------------------------------


def _binomial_rows(draw: np.random.Generator, runs: int, m: int, k: int) -> np.ndarray:
    """Two rows of pass^k and pass@k estimates of m cases of `runs` trials each, as the
    estimators give them (fractions of C(runs, k))."""
    from math import comb

    passes = draw.integers(0, runs + 1, size=m)
    total = comb(runs, k)
    hat = [comb(int(c), k) / total for c in passes]
    at = [1 - comb(runs - int(c), k) / total for c in passes]
    return np.array([hat, at])


@settings(max_examples=60, deadline=None)
@given(
    runs=st.integers(1, 12),
    m=st.integers(2, 120),
    seed=st.integers(0, 2**32 - 1),
    n_boot=st.sampled_from([1, 7, 300, 2000]),
    confidence=st.sampled_from([0.8, 0.95, 0.99]),
)
def test_whole_numerators_match_upstream_loop(
    runs: int, m: int, seed: int, n_boot: int, confidence: float
) -> None:
    """Rows resampled as whole numerators over C(runs, k) (a 16-bit radix sort of the
    resample sums) give upstream's interval, and the float path's."""
    from math import comb

    draw = np.random.default_rng(seed)
    k = int(draw.integers(1, runs + 1))
    rows = _binomial_rows(draw, runs, m, k)
    denominators = [comb(runs, k)] * 2
    low, high, method = cluster_bootstrap_ci(
        rows, confidence, n_boot, seed, denominators=denominators
    )
    plain = cluster_bootstrap_ci(rows, confidence, n_boot, seed)
    for r, row in enumerate(rows.tolist()):
        want = _cluster_bootstrap_ci(row, confidence, n_boot, seed)
        assert abs(low[r] - want[0]) <= 1e-12 and abs(high[r] - want[1]) <= 1e-12
        assert abs(low[r] - plain[0][r]) <= 1e-15 and abs(high[r] - plain[1][r]) <= 1e-15
    assert method.tolist() == plain[2].tolist()


def test_whole_numerators_are_taken_only_where_they_hold() -> None:
    """A denominator the values are not fractions of, 0, or one whose sums would pass
    2**16, leaves its row to the float path (the same interval, to rounding); the rows that
    qualify are the ones _whole_rows returns."""
    from dashboard.stats.bootstrap import _whole_rows

    draw = np.random.default_rng(3)
    rows = np.concatenate([_binomial_rows(draw, 8, 40, 4)] * 2)  # fractions of C(8, 4) = 70
    denominators = [70, 7, 0, 2000]  # right; wrong; unknown; 40 * 2000 is over 2**16
    varied = rows.min(axis=1) < rows.max(axis=1)
    taken, numerators, scale = _whole_rows(rows, varied, denominators)
    assert taken.tolist() == [0]
    assert numerators[0].tolist() == (rows[0] * 70).round().tolist()
    assert scale.tolist() == [40 * 70]
    low, high, _ = cluster_bootstrap_ci(rows, denominators=denominators)
    plain_low, plain_high, _ = cluster_bootstrap_ci(rows)
    assert np.abs(low - plain_low).max() <= 1e-15 and np.abs(high - plain_high).max() <= 1e-15
    with pytest.raises(ValueError, match="denominators must have shape"):
        cluster_bootstrap_ci(rows, denominators=[70])
