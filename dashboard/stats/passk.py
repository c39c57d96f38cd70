"""Suite-level pass@k and pass^k with cluster-bootstrap intervals, or an honest UNKNOWN.

Role: average the per-case estimators over a suite's evaluated cases for several k at
once, attach multivon-eval's interval (seeded cluster bootstrap, Wilson when every case
has the same value), and say UNKNOWN, with multivon-eval's own words, when k exceeds
the trials some case recorded. The numbers equal multivon-eval 0.20.0's
`EvalReport.pass_at_k` / `pass_hat_k` to float rounding.

Must not: choose which cases are evaluated (the data layer passes evaluated cases only,
in file order), extrapolate past the recorded trials, or import pandas, DuckDB or
Streamlit.

References: Chen et al. 2021, arXiv:2107.03374 (pass@k); Yao et al. 2024,
arXiv:2406.12045 (pass^k); Wilson 1927 (the degenerate-sample fallback).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Final

import numpy as np
import numpy.typing as npt

from .bootstrap import WHOLE_SUM_LIMIT, cluster_bootstrap_ci
from .estimators import (
    METRIC_PASS_AT_K,
    FloatArray,
    IntArray,
    check_cases,
    check_k,
    check_metric,
    pass_k_tables,
)
from .intervals import check_confidence

METHOD_UNKNOWN: Final = ""
NO_CASES_REASON: Final = "UNKNOWN — no evaluated cases to estimate from."

# Per-case values that upstream's exact binomial ratios make equal can differ by a few
# ulps in the product form, which would flip the all-equal (Wilson) branch of the
# interval. Rows whose spread is this small are re-decided with upstream's arithmetic.
_TIE_SPREAD: Final = 1e-9


@dataclass(frozen=True)
class PassKResult:
    """One suite-level estimate at one k; `value is None` means honestly UNKNOWN."""

    k: int
    metric: str  # "pass@k" | "pass^k"
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_cases: int
    runs: int  # min n over the cases: the largest k the data supports (0 when none)
    method: str  # "cluster-bootstrap" | "wilson" | "" (UNKNOWN)
    unknown_reason: str = ""

    @property
    def unknown(self) -> bool:
        return self.value is None


# --- validation -------------------------------------------------------------------------


def _check_suite_args(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    ks: Sequence[int],
    metric: str,
    confidence: float,
    n_boot: int,
    seed: int,
) -> tuple[IntArray, IntArray, list[int]]:
    n_arr, c_arr = check_cases(n, c)
    if isinstance(ks, str | bytes) or not isinstance(ks, Sequence | np.ndarray):
        raise ValueError(f"ks must be a sequence of integers, got {ks!r}")
    k_list = [check_k(k) for k in ks]
    check_metric(metric)
    check_confidence(confidence)
    check_k(n_boot, "n_boot")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return n_arr, c_arr, k_list


# --- computation ------------------------------------------------------------------------


def _unknown_reasons(n: IntArray, runs: int) -> Callable[[int], str]:
    """multivon-eval's UNKNOWN text for a k above `runs`, the fewest trials of these cases."""
    where = "the shortest-run case (early_stop)" if (n != runs).any() else "each case"

    def reason(k: int) -> str:
        return (
            f"UNKNOWN — k={k} exceeds the {runs} trials of {where}; "
            f"rerun with --runs >= {k} or pass k <= {runs}. "
            f"multivon-eval does not extrapolate."
        )

    return reason


def _upstream_estimate(n: int, c: int, k: int, metric: str) -> float:
    """One case's value exactly as multivon-eval computes it (exact binomials, one division)."""
    if metric == METRIC_PASS_AT_K:
        if c == 0:
            return 0.0
        if n - c < k:
            return 1.0
        return 1.0 - comb(n - c, k) / comb(n, k)
    if c < k:
        return 0.0
    return comb(c, k) / comb(n, k)


def _match_upstream_ties(
    rows: FloatArray, ks: IntArray, n: IntArray, c: IntArray, metric: str
) -> FloatArray:
    """Replace nearly-flat rows by upstream's own per-case floats.

    Upstream's ratios of exact binomials are correctly rounded, so equal ratios are equal
    floats (pass^2 of 3/6 and of 7/15 are both 0.2) and the row takes the Wilson branch;
    the product form gives 0.2 and 0.19999999999999998 and would bootstrap instead. The
    product form is within a few ulps of the exact ratio, so any row upstream calls flat
    has a spread far below _TIE_SPREAD; the rare rows under it are recomputed once per
    distinct (n, c) with upstream's arithmetic, which settles the branch as upstream does.
    """
    nearly_flat = _nearly_flat(rows)
    if nearly_flat.size == 0:
        return rows
    rows = rows.copy()
    pairs, inverse = np.unique(np.stack([n, c], axis=1), axis=0, return_inverse=True)
    for r in nearly_flat:
        k = int(ks[r])
        exact = np.array([_upstream_estimate(int(a), int(b), k, metric) for a, b in pairs])
        rows[r] = exact[inverse.ravel()]
    return rows


def _nearly_flat(rows: FloatArray) -> npt.NDArray[np.intp]:
    """The rows whose values differ, but by no more than _TIE_SPREAD."""
    spread = rows.max(axis=1) - rows.min(axis=1)
    return np.flatnonzero((spread > 0) & (spread <= _TIE_SPREAD))


def _suite_pass_k(
    n: IntArray,
    c: IntArray,
    ks: list[int],
    metric: str,
    confidence: float,
    n_boot: int,
    seed: int,
) -> list[PassKResult]:
    return _suites_pass_k([(n, c, ks, metric)], confidence, n_boot, seed)[0]


# one suite's checked arguments: n, c, ks, metric
_Suite = tuple[IntArray, IntArray, list[int], str]


def _suites_pass_k(
    suites: Sequence[_Suite], confidence: float, n_boot: int, seed: int
) -> list[list[PassKResult]]:
    """Every suite's results, computed a stack of suites at a time.

    Suites with the same number of cases, metric and supported ks share one table of
    per-case estimates (the arithmetic is elementwise, so each suite's rows are the ones it
    would get alone), and the rows of all suites with the same number of cases share one
    bootstrap call (the resample draws depend only on that number and the seed, and each
    row's interval only on its own values). A load's reports are thousands of small
    suites: per suite, numpy's fixed cost per call would be most of the time.
    """
    results: list[list[PassKResult]] = [[] for _ in suites]
    runs_of = [int(n.min()) if n.size else 0 for n, _, _, _ in suites]
    stacks: dict[tuple[int, str, tuple[int, ...]], list[int]] = {}
    for i, (n, _, ks, metric) in enumerate(suites):
        if not n.size:
            results[i] = [
                PassKResult(k, metric, None, None, None, 0, 0, METHOD_UNKNOWN, NO_CASES_REASON)
                for k in ks
            ]
            continue
        known = tuple(sorted({k for k in ks if k <= runs_of[i]}))
        stacks.setdefault((n.size, metric, known), []).append(i)
    by_cases: dict[int, list[tuple[list[int], tuple[int, ...], FloatArray, IntArray]]] = {}
    for (m, metric, known), members in stacks.items():
        rows, denominators = (
            _stacked_rows([suites[i] for i in members], known, metric)
            if known
            else (np.empty((0, m)), np.empty(0, dtype=np.int64))
        )
        by_cases.setdefault(m, []).append((members, known, rows, denominators))
    for m, stacked in by_cases.items():
        rows = np.concatenate([rows for _, _, rows, _ in stacked])
        if rows.shape[0]:
            low, high, method = cluster_bootstrap_ci(
                rows,
                confidence,
                n_boot,
                seed,
                denominators=np.concatenate([d for _, _, _, d in stacked]),
            )
            means = rows.mean(axis=1)
            # the percentile interval of a skewed resample can miss the point estimate
            columns: tuple[np.ndarray, ...] = (
                means, np.minimum(low, means), np.maximum(high, means), method
            )  # fmt: skip
        else:  # no suite of this size supports any k asked for
            columns = (np.empty(0),) * 4
        estimates = zip(*(column.tolist() for column in columns), strict=True)
        for members, known, _, _ in stacked:
            for i in members:
                n, _, ks, metric = suites[i]
                runs = runs_of[i]
                mine = {
                    k: PassKResult(k, metric, v, lo, hi, m, runs, how)
                    for k, (v, lo, hi, how) in zip(known, estimates, strict=False)
                }
                if all(k in mine for k in ks):
                    results[i] = [mine[k] for k in ks]
                    continue
                reason = _unknown_reasons(n, runs)
                results[i] = [
                    mine.get(k)
                    or PassKResult(k, metric, None, None, None, m, runs, METHOD_UNKNOWN, reason(k))
                    for k in ks
                ]
    return results


def _stacked_rows(
    suites: list[_Suite], known: tuple[int, ...], metric: str
) -> tuple[FloatArray, IntArray]:
    """The per-case rows of suites with one number of cases, at the ks they all support:
    suite by suite, each suite's ks in order (shape (len(suites) * len(known), m)), and
    each row's denominator for the bootstrap: C(n, k) where every case of its suite has
    n trials (its estimates are fractions of it), else 0 (also where it is too large to
    help: the bootstrap takes whole numerators below 2**16 only)."""
    n = np.stack([suite[0] for suite in suites])
    c = np.stack([suite[1] for suite in suites])
    ks = np.array(known, dtype=np.int64)
    table = pass_k_tables(n, c, int(ks[-1]), metric)[ks - 1]  # (len(known), suites, m)
    rows = np.ascontiguousarray(table.transpose(1, 0, 2)).reshape(-1, n.shape[1])
    for r in _nearly_flat(rows):  # rare: see _match_upstream_ties
        s, j = divmod(int(r), ks.size)
        rows[r] = _match_upstream_ties(rows[r : r + 1], ks[j : j + 1], n[s], c[s], metric)[0]
    runs = n[:, 0]
    uniform = (n == runs[:, None]).all(axis=1)
    denominators = np.array(
        [
            min(comb(int(r), int(k)), WHOLE_SUM_LIMIT) if same else 0
            for r, same in zip(runs, uniform, strict=True)
            for k in ks
        ],
        dtype=np.int64,
    )
    return rows, denominators


def suites_pass_k(
    suites: Sequence[tuple[npt.ArrayLike, npt.ArrayLike, Sequence[int], str]],
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[list[PassKResult]]:
    """`suite_pass_k(n, c, ks, metric)` for each (n, c, ks, metric), with equal results
    (interval bounds to a few ulps: the bootstrap's matrix product sums in an order that
    depends on how many rows it holds), at a fraction of the cost for many small suites
    (a catalog load's reports): one bootstrap per distinct number of cases instead of one
    per suite."""
    checked = [
        (*_check_suite_args(n, c, ks, metric, confidence, n_boot, seed), metric)
        for n, c, ks, metric in suites
    ]
    return _suites_pass_k(checked, confidence, n_boot, int(seed))


def suite_pass_k(
    n: npt.ArrayLike,
    c: npt.ArrayLike,
    ks: Sequence[int],
    metric: str,
    *,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> list[PassKResult]:
    """Suite pass@k or pass^k (`metric`) at each k of `ks`, in the order given.

    `n` and `c` are each evaluated case's trial and pass counts, in case (file) order:
    the bootstrap draws cases by position, so another order gives another interval.
    Each case uses its own n. A k above min(n) is UNKNOWN with multivon-eval's reason
    text, as is every k when there are no cases. Known ks share one table of per-case
    estimates and one bootstrap call.
    """
    n_arr, c_arr, k_list = _check_suite_args(n, c, ks, metric, confidence, n_boot, seed)
    return _suite_pass_k(n_arr, c_arr, k_list, metric, confidence, n_boot, int(seed))
