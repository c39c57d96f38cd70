"""Lottery cases: cases that pass sometimes but not reliably, ranked for debugging.

Role: find the cases behind the gap between pass@k and pass^k, and order them so the
cheapest reliability gains come first.

Which cases: multivon-eval's `EvalReport.lottery_cases(k)` set, the multi-run cases
with n >= k whose pass@k - pass^k is > 0. That gap is
(C(n, k) - C(n-c, k) - C(c, k)) / C(n, k), and by Vandermonde's identity the numerator
is the sum of the mixed terms C(c, j) C(n-c, k-j), 0 < j < k, so it is positive exactly
when 0 < c < n, k >= 2 and n >= k. Deciding it that way, in integers, keeps upstream's
set while dropping upstream's float noise: at k = 1 the gap is exactly 0, but upstream's
floats give about 1e-16 for n = 3 (1 - 2/3 versus 1/3) and list spurious cases.

Order (replaces upstream's, which sorts by gap: at the default k = n every flaky case
has gap exactly 1.0, so upstream's order is merely file order):
  1. highest pass rate c/n first. A nearly reliable case is the best debugging target:
     its failing trials are the anomaly, one fixed failure mode makes it reliable, so it
     is the cheapest pass^k gain;
  2. then more runs first (more evidence behind that rate);
  3. then file order (stable).

`rank_flakiest` is the other order a reader may want: the flakiest first, a pass rate
nearest 1/2 (|2c - n| / n smallest: the case whose next run is closest to a coin flip),
then more runs first, then file order.

Must not: read reports, compute suite averages, or import pandas, DuckDB or Streamlit.

References: Chen et al. 2021, arXiv:2107.03374 (pass@k); Yao et al. 2024,
arXiv:2406.12045 (pass^k).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .estimators import IntArray, check_cases, check_k

BoolArray = npt.NDArray[np.bool_]
IndexArray = npt.NDArray[np.intp]


def _lottery_mask(n: IntArray, c: IntArray, k: int) -> BoolArray:
    # the exact condition for C(n, k) > C(n-c, k) + C(c, k); see the module docstring
    return (k >= 2) & (n >= k) & (c > 0) & (c < n)


def lottery_mask(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> BoolArray:
    """Which cases are lottery cases at k: n >= k and pass@k - pass^k > 0, decided exactly.

    `n` and `c` are per-case trial and pass counts (1-D, one length). Never true at
    k = 1 or for single-run cases.
    """
    n_arr, c_arr = check_cases(n, c)
    return _lottery_mask(n_arr, c_arr, check_k(k))


def rank_lottery(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> IndexArray:
    """Indices of the lottery cases at k, best debugging targets first (see module doc)."""
    n_arr, c_arr = check_cases(n, c)
    index = np.flatnonzero(_lottery_mask(n_arr, c_arr, check_k(k)))
    # c/n is a correctly rounded quotient: equal rates are equal floats, and distinct
    # rates with n < 2**26 differ by more than an ulp, so the float sort is exact
    rate = c_arr[index] / n_arr[index]
    order = np.lexsort((index, -n_arr[index], -rate))
    return index[order].astype(np.intp)


def rank_flakiest(n: npt.ArrayLike, c: npt.ArrayLike, k: int) -> IndexArray:
    """Indices of the lottery cases at k, flakiest first: pass rate nearest 1/2, then
    more runs, then file order (see module doc)."""
    n_arr, c_arr = check_cases(n, c)
    index = np.flatnonzero(_lottery_mask(n_arr, c_arr, check_k(k)))
    # distance from 1/2 as |2c - n| / n: integers over integers, exact as in rank_lottery
    distance = np.abs(2 * c_arr[index] - n_arr[index]) / n_arr[index]
    order = np.lexsort((index, -n_arr[index], distance))
    return index[order].astype(np.intp)
