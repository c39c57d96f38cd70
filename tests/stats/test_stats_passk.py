"""Suite-level pass@k / pass^k against a literal copy of multivon-eval 0.20.0's loop."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import upstream_copy as upstream
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.stats import (
    METHOD_BOOTSTRAP,
    METHOD_UNKNOWN,
    METHOD_WILSON,
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    PassKResult,
    suite_pass_k,
    suites_pass_k,
)

# multivon-eval 0.20.0's passk.py and EvalReport._pass_k_result (tests/support/upstream_copy.py)
_norm_ppf = upstream.norm_ppf
_wilson_interval = upstream.wilson_interval
_pass_at_k = upstream.pass_at_k
_pass_hat_k = upstream.pass_hat_k
_quantile = upstream.quantile
_cluster_bootstrap_ci = upstream.cluster_bootstrap_ci
upstream_pass_k = upstream.pass_k_result


def assert_matches_upstream(
    stats: list[tuple[int, int]], ks: list[int], metric: str, **kwargs: float
) -> list[PassKResult]:
    n = [a for a, _ in stats]
    c = [b for _, b in stats]
    results = suite_pass_k(n, c, ks, metric, **kwargs)
    assert [r.k for r in results] == ks
    for r in results:
        value, low, high, runs, reason = upstream_pass_k(stats, r.k, metric, **kwargs)
        assert (r.runs, r.unknown_reason, r.n_cases, r.metric) == (runs, reason, len(stats), metric)
        if value is None:
            assert r.unknown and r.ci_low is None and r.ci_high is None
            assert r.method == METHOD_UNKNOWN
        else:
            assert not r.unknown and r.method in (METHOD_BOOTSTRAP, METHOD_WILSON)
            assert abs(r.value - value) <= 1e-9
            assert abs(r.ci_low - low) <= 1e-9, (r, low)
            assert abs(r.ci_high - high) <= 1e-9, (r, high)
    return results


# --- UNKNOWN ------------------------------------------------------------------------------


@pytest.mark.parametrize("metric", [METRIC_PASS_AT_K, METRIC_PASS_HAT_K])
def test_unknown_uniform(metric: str) -> None:
    (r,) = suite_pass_k([6, 6, 6], [1, 6, 3], [8], metric)
    assert r.unknown and r.value is None and r.method == ""
    assert (r.runs, r.n_cases) == (6, 3)
    assert r.unknown_reason == (
        "UNKNOWN — k=8 exceeds the 6 trials of each case; rerun with --runs >= 8 or pass "
        "k <= 6. multivon-eval does not extrapolate."
    )


@pytest.mark.parametrize("metric", [METRIC_PASS_AT_K, METRIC_PASS_HAT_K])
def test_unknown_heterogeneous(metric: str) -> None:
    results = suite_pass_k([8, 6, 8, 7], [4, 6, 0, 7], [6, 7, 8], metric)
    assert [r.unknown for r in results] == [False, True, True]
    assert results[2].unknown_reason == (
        "UNKNOWN — k=8 exceeds the 6 trials of the shortest-run case (early_stop); rerun "
        "with --runs >= 8 or pass k <= 6. multivon-eval does not extrapolate."
    )
    assert results[1].runs == results[0].runs == 6


def test_unknown_no_cases() -> None:
    results = suite_pass_k([], [], [1, 3], METRIC_PASS_HAT_K)
    assert [(r.k, r.unknown, r.n_cases, r.runs, r.method) for r in results] == [
        (1, True, 0, 0, ""),
        (3, True, 0, 0, ""),
    ]
    assert {r.unknown_reason for r in results} == {"UNKNOWN — no evaluated cases to estimate from."}


# --- known values -------------------------------------------------------------------------


def test_one_case_at_one() -> None:
    (r,) = suite_pass_k([1], [1], [1], METRIC_PASS_HAT_K)
    assert (r.value, round(r.ci_low, 4), r.ci_high, r.method) == (1.0, 0.2065, 1.0, "wilson")


def test_hand_value_and_fields() -> None:
    (r,) = suite_pass_k([5, 5], [3, 5], [2], METRIC_PASS_HAT_K)
    assert r.value == pytest.approx((0.3 + 1.0) / 2)
    assert (r.k, r.metric, r.n_cases, r.runs, r.method) == (2, "pass^k", 2, 5, "cluster-bootstrap")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 0.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("stats", "k", "metric"),
    [
        # equal exact ratios at different n: upstream's floats are equal (Wilson branch),
        # the product form's differ by an ulp; the row must still take the Wilson branch
        ([(6, 3), (15, 7)], 2, METRIC_PASS_HAT_K),
        ([(7, 3), (15, 6), (7, 3)], 2, METRIC_PASS_HAT_K),
        ([(6, 5), (10, 8)], 4, METRIC_PASS_HAT_K),
        ([(7, 4), (15, 9)], 2, METRIC_PASS_AT_K),
        ([(6, 1), (10, 2), (6, 1)], 4, METRIC_PASS_AT_K),
    ],
)
def test_ties_across_n_take_upstreams_branch(stats, k: int, metric: str) -> None:
    (r,) = assert_matches_upstream(stats, [k], metric)
    assert r.method == METHOD_WILSON


@pytest.mark.parametrize("metric", [METRIC_PASS_AT_K, METRIC_PASS_HAT_K])
@pytest.mark.parametrize(
    "stats",
    [
        [(8, 8)] * 10,
        [(8, 0)] * 3 + [(8, 8)] * 2,
        [(8, c) for c in (8, 7, 0, 3, 8, 8, 5, 1, 8, 6, 8, 2)],
        [(8, 5), (6, 6), (8, 8), (7, 2), (6, 0), (8, 8)],
        [(1, 1), (1, 0), (1, 1), (1, 1)],
        [(3, 1)],
    ],
)
def test_full_default_against_upstream(stats, metric: str) -> None:
    assert_matches_upstream(stats, list(range(1, 10)), metric)


def test_other_confidence_and_seed() -> None:
    stats = [(4, 1), (4, 4), (4, 3), (4, 0), (4, 2)]
    assert_matches_upstream(stats, [1, 2, 4], METRIC_PASS_AT_K, confidence=0.8, seed=7)


def test_order_of_ks_kept_and_duplicates_allowed() -> None:
    results = suite_pass_k([4, 4], [1, 3], [3, 1, 9, 3], METRIC_PASS_AT_K)
    assert [r.k for r in results] == [3, 1, 9, 3]
    assert results[0] == results[3]


def test_case_order_changes_the_interval_but_not_the_value() -> None:
    stats = [(10, c) for c in (0, 10, 3, 1, 5, 9, 7)]
    (a,) = assert_matches_upstream(stats, [2], METRIC_PASS_HAT_K)
    (b,) = assert_matches_upstream(stats[::-1], [2], METRIC_PASS_HAT_K)
    assert a.value == pytest.approx(b.value)
    assert abs(a.ci_low - b.ci_low) > 1e-3 and abs(a.ci_high - b.ci_high) > 1e-3


def test_whole_float_counts_from_the_data_layer() -> None:
    assert suite_pass_k(np.array([4.0, 4.0]), np.array([1.0, 4.0]), [2], METRIC_PASS_HAT_K) == (
        suite_pass_k([4, 4], [1, 4], [2], METRIC_PASS_HAT_K)
    )


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([4, 4], [1], [1], METRIC_PASS_AT_K), {}, "one length"),
        (([4, 0], [1, 0], [1], METRIC_PASS_AT_K), {}, r"n must be >= 1, got 0 \(at index 1\)"),
        (([4, 4], [1, 5], [1], METRIC_PASS_AT_K), {}, r"c must be in \[0, 4\], got 5"),
        (([4], [1.5], [1], METRIC_PASS_AT_K), {}, "whole numbers"),
        (([4], [1], [0], METRIC_PASS_AT_K), {}, "k must be >= 1"),
        (([4], [1], [2.0], METRIC_PASS_AT_K), {}, "k must be an integer"),
        (([4], [1], 2, METRIC_PASS_AT_K), {}, "ks must be a sequence"),
        (([4], [1], [1], "pass^K"), {}, "metric must be one of"),
        (([4], [1], [1], METRIC_PASS_AT_K), {"confidence": 1.0}, "confidence"),
        (([4], [1], [1], METRIC_PASS_AT_K), {"n_boot": 0}, "n_boot must be >= 1"),
    ],
)
def test_validation(args, kwargs, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        suite_pass_k(*args, **kwargs)


# --- properties ---------------------------------------------------------------------------


def case_lists(max_cases: int) -> st.SearchStrategy[list[tuple[int, int]]]:
    case = st.integers(1, 10).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))
    uniform = st.integers(1, 8).flatmap(
        lambda n: st.lists(st.integers(0, n).map(lambda c: (n, c)), max_size=max_cases)
    )
    return st.lists(case, max_size=max_cases) | uniform


@settings(max_examples=60, deadline=None)
@given(case_lists(8), st.sampled_from([METRIC_PASS_AT_K, METRIC_PASS_HAT_K]))
def test_matches_upstream_loop(stats: list[tuple[int, int]], metric: str) -> None:
    assert_matches_upstream(stats, [1, 2, 3, 5, 8], metric, n_boot=150)


@settings(max_examples=60, deadline=None)
@given(case_lists(12), st.sampled_from([METRIC_PASS_AT_K, METRIC_PASS_HAT_K]))
def test_interval_ordered_and_holds_estimate(stats: list[tuple[int, int]], metric: str) -> None:
    n = [a for a, _ in stats]
    c = [b for _, b in stats]
    for r in suite_pass_k(n, c, range(1, 11), metric, n_boot=200):
        if r.unknown:
            assert r.k > min(n, default=0)
            continue
        assert 0.0 <= r.ci_low <= r.value <= r.ci_high <= 1.0


def stacked_suites() -> st.SearchStrategy[list[tuple[list[tuple[int, int]], list[int], str]]]:
    """Suites that share a number of cases, metric and ks (computed as one stack), mixed
    with others that do not."""
    case = st.integers(1, 6).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))
    ks = st.lists(st.integers(1, 7), min_size=1, max_size=5)
    metric = st.sampled_from([METRIC_PASS_AT_K, METRIC_PASS_HAT_K])
    shared = st.tuples(st.integers(1, 5), ks, metric).flatmap(
        lambda key: st.lists(
            st.lists(case, min_size=key[0], max_size=key[0]).map(lambda c: (c, key[1], key[2])),
            min_size=2,
            max_size=8,
        )
    )
    others = st.lists(st.tuples(case_lists(6), ks, metric), max_size=6)
    return st.tuples(shared, others).flatmap(lambda p: st.permutations(p[0] + p[1]))


@settings(max_examples=40, deadline=None)
@given(stacked_suites())
def test_suites_together_equal_each_alone(
    suites: list[tuple[list[tuple[int, int]], list[int], str]],
) -> None:
    """A load's reports are computed as stacks of suites (by number of cases, metric and
    supported ks): each suite's results equal its own suite_pass_k, in its ks' order,
    UNKNOWNs, reasons and values exactly; the interval bounds to a few ulps (the
    bootstrap's matrix product sums in an order that depends on how many rows it holds:
    0.2 came out as 0.20000000000000004 against 0.19999999999999998)."""
    args = [([n for n, _ in cases], [c for _, c in cases], ks, m) for cases, ks, m in suites]
    together = suites_pass_k(args, n_boot=120)
    alone = [suite_pass_k(*a, n_boot=120) for a in args]
    assert [len(r) for r in together] == [len(r) for r in alone]
    for got, want in zip(sum(together, []), sum(alone, []), strict=True):
        assert dataclasses.replace(got, ci_low=None, ci_high=None) == dataclasses.replace(
            want, ci_low=None, ci_high=None
        )
        for a, b in ((got.ci_low, want.ci_low), (got.ci_high, want.ci_high)):
            assert (a is None and b is None) or abs(a - b) <= 1e-12, (got, want)
