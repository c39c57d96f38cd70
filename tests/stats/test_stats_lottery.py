"""Lottery cases: the exact set, no float noise at k = 1, and the debugging order."""

from __future__ import annotations

from fractions import Fraction
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.stats import lottery_mask, rank_lottery


def exact_gap(n: int, c: int, k: int) -> Fraction:
    """pass@k - pass^k in rationals: 1 - C(n-c,k)/C(n,k) - C(c,k)/C(n,k)."""
    return 1 - Fraction(comb(n - c, k), comb(n, k)) - Fraction(comb(c, k), comb(n, k))


def brute_force_lottery(n: list[int], c: list[int], k: int) -> list[int]:
    return [
        i
        for i, (a, b) in enumerate(zip(n, c, strict=True))
        if a > 1 and k <= a and exact_gap(a, b, k) > 0
    ]


def upstream_float_gap(n: int, c: int, k: int) -> float:
    """multivon-eval's gap, with its float arithmetic (passk.pass_at_k - passk.pass_hat_k)."""
    at = 0.0 if c == 0 else 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)
    hat = 0.0 if c < k else comb(c, k) / comb(n, k)
    return at - hat


def test_k1_has_no_lottery_cases_despite_upstream_float_noise() -> None:
    n, c = [3, 3, 3, 5, 8], [1, 2, 0, 4, 7]
    assert upstream_float_gap(3, 1, 1) > 0  # ~5.6e-17: upstream lists this case at k=1
    assert exact_gap(3, 1, 1) == 0
    assert not lottery_mask(n, c, 1).any()
    assert rank_lottery(n, c, 1).size == 0


def test_exact_set_against_brute_force_grid() -> None:
    n = [a for a in range(1, 13) for _ in range(a + 1)]
    c = [b for a in range(1, 13) for b in range(a + 1)]
    for k in range(1, 14):
        want = brute_force_lottery(n, c, k)
        assert np.flatnonzero(lottery_mask(n, c, k)).tolist() == want, k
        assert sorted(rank_lottery(n, c, k).tolist()) == want, k


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.integers(1, 25).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))),
    st.integers(1, 26),
)
def test_set_matches_brute_force(cases: list[tuple[int, int]], k: int) -> None:
    n, c = [a for a, _ in cases], [b for _, b in cases]
    mask = lottery_mask(n, c, k)
    assert mask.dtype == np.bool_ and mask.shape == (len(cases),)
    assert np.flatnonzero(mask).tolist() == brute_force_lottery(n, c, k)
    ranked = rank_lottery(n, c, k)
    assert sorted(ranked.tolist()) == np.flatnonzero(mask).tolist()


def test_single_run_and_short_cases_excluded() -> None:
    n, c = [1, 1, 4, 8, 8], [0, 1, 2, 4, 8]
    assert lottery_mask(n, c, 2).tolist() == [False, False, True, True, False]
    assert lottery_mask(n, c, 5).tolist() == [False, False, False, True, False]


@pytest.mark.parametrize(
    ("k", "expected"),
    [
        # rate 7/8 at n=8 (idx 1, 5: file order), 6/8 (idx 4) ties 3/4 at n=4 (idx 3): more
        # runs first, then 1/2 (idx 0, 7 at n=8 before idx 2 at n=4), then 1/8 (idx 6)
        (2, [1, 5, 4, 3, 0, 7, 2, 6]),
        # at k = 8 the n=4 cases drop out; every remaining gap is exactly 1.0 upstream
        (8, [1, 5, 4, 0, 7, 6]),
    ],
)
def test_ranking_order(k: int, expected: list[int]) -> None:
    n = [8, 8, 4, 4, 8, 8, 8, 8, 8, 4, 1]
    c = [4, 7, 2, 3, 6, 7, 1, 4, 8, 0, 1]
    assert rank_lottery(n, c, k).tolist() == expected


def test_ranking_with_array_inputs_and_float_counts() -> None:
    got = rank_lottery(np.array([6.0, 6.0, 6.0]), np.array([1.0, 5.0, 3.0]), 6)
    assert got.dtype == np.intp and got.tolist() == [1, 2, 0]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([4], [1], 0), "k must be >= 1"),
        (([4], [5], 2), r"c must be in \[0, 4\]"),
        (([4, 4], [1], 2), "one length"),
        (([4], [1], 2.0), "k must be an integer"),
    ],
)
@pytest.mark.parametrize("fn", [lottery_mask, rank_lottery])
def test_validation(fn, args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fn(*args)
