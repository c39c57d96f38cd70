"""Per-case estimators and Wilson intervals: hand values, slow loops, properties."""

from __future__ import annotations

import subprocess
import sys
from math import comb

import numpy as np
import pytest
import upstream_copy as upstream
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    norm_ppf,
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    wilson_bounds,
    wilson_interval,
)

Z95 = 1.959963984540054


# slow, obvious references: upstream's formulas (tests/support/upstream_copy.py)
slow_pass_at_k = upstream.pass_at_k
slow_pass_hat_k = upstream.pass_hat_k
upstream_norm_ppf = upstream.norm_ppf
upstream_wilson = upstream.wilson_interval


# --- hand-computed values ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("fn", "n", "c", "k", "expected"),
    [
        (pass_at_k, 5, 3, 2, 0.9),
        (pass_hat_k, 5, 3, 2, 0.3),
        (pass_hat_k, 20, 17, 5, comb(17, 5) / comb(20, 5)),
        (pass_at_k, 20, 17, 5, 1.0),  # n - c = 3 < 5: every 5-subset holds a pass
        (pass_at_k, 20, 3, 5, 1 - comb(17, 5) / comb(20, 5)),
        (pass_at_k, 5, 0, 3, 0.0),
        (pass_hat_k, 5, 2, 3, 0.0),
        (pass_hat_k, 8, 8, 8, 1.0),
        (pass_at_k, 8, 1, 8, 1.0),
        (pass_hat_k, 8, 7, 8, 0.0),
        (pass_at_k, 1, 1, 1, 1.0),
        (pass_hat_k, 10, 5, 1, 0.5),
    ],
)
def test_hand_computed(fn, n: int, c: int, k: int, expected: float) -> None:
    value = fn(n, c, k)
    assert isinstance(value, float)
    assert value == pytest.approx(expected, abs=1e-15)


def test_big_n_does_not_overflow() -> None:
    # C(2000, 1000) is ~1e600: no float64 holds it; the product form never forms it
    assert pass_hat_k(2000, 1999, 1000) == pytest.approx(slow_pass_hat_k(2000, 1999, 1000))
    assert pass_at_k(2000, 1, 1000) == pytest.approx(slow_pass_at_k(2000, 1, 1000))


def test_broadcasts_against_slow_loop() -> None:
    ns, cs, ks = [], [], []
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                ns.append(n), cs.append(c), ks.append(k)
    n_arr, c_arr, k_arr = np.array(ns), np.array(cs), np.array(ks)
    at = pass_at_k(n_arr, c_arr, k_arr)
    hat = pass_hat_k(n_arr, c_arr, k_arr)
    assert isinstance(at, np.ndarray) and at.shape == n_arr.shape
    want_at = [slow_pass_at_k(n, c, k) for n, c, k in zip(ns, cs, ks, strict=True)]
    want_hat = [slow_pass_hat_k(n, c, k) for n, c, k in zip(ns, cs, ks, strict=True)]
    np.testing.assert_allclose(at, want_at, rtol=0, atol=1e-14)
    np.testing.assert_allclose(hat, want_hat, rtol=0, atol=1e-14)


def test_broadcasts_scalar_with_arrays() -> None:
    got = pass_hat_k(np.array([[4], [6]]), 3, np.array([1, 2, 3]))
    assert got.shape == (2, 3)
    want = [[slow_pass_hat_k(n, 3, k) for k in (1, 2, 3)] for n in (4, 6)]
    np.testing.assert_allclose(got, want, atol=1e-15)


@pytest.mark.parametrize("metric", [METRIC_PASS_AT_K, METRIC_PASS_HAT_K])
def test_table_against_slow_loop(metric: str) -> None:
    n = np.array([1, 3, 8, 8, 6, 10, 2, 8])
    c = np.array([1, 1, 0, 8, 5, 3, 1, 4])
    slow = slow_pass_at_k if metric == METRIC_PASS_AT_K else slow_pass_hat_k
    table = pass_k_table(n, c, 12, metric)
    assert table.shape == (12, n.size)
    for k in range(1, 13):
        for j in range(n.size):
            if k > n[j]:
                assert np.isnan(table[k - 1, j])
            else:
                assert table[k - 1, j] == pytest.approx(slow(n[j], c[j], k), abs=1e-15)


@pytest.mark.parametrize("metric", [METRIC_PASS_AT_K, METRIC_PASS_HAT_K])
def test_table_rows_equal_scalar_function(metric: str) -> None:
    n, c = np.array([9, 9, 12, 7]), np.array([4, 9, 11, 0])
    fn = pass_at_k if metric == METRIC_PASS_AT_K else pass_hat_k
    table = pass_k_table(n, c, 7, metric)
    for k in range(1, 8):
        np.testing.assert_array_equal(table[k - 1], fn(n, c, k))


def test_whole_floats_accepted_fractions_refused() -> None:
    assert pass_at_k(5.0, 3.0, 2) == pytest.approx(0.9)
    with pytest.raises(ValueError, match="whole numbers"):
        pass_at_k(5.5, 3, 2)
    with pytest.raises(ValueError, match="whole numbers"):
        pass_k_table([4.0, np.nan], [1, 1], 2, METRIC_PASS_AT_K)
    with pytest.raises(ValueError, match="integers"):
        pass_hat_k("5", 3, 2)


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (5, 3, 0, r"^k must be >= 1, got 0$"),
        (0, 0, 1, r"^n must be >= 1, got 0$"),
        (5, 6, 1, r"^c must be in \[0, 5\], got 6$"),
        (5, -1, 1, r"^c must be in \[0, 5\], got -1$"),
        (
            5,
            3,
            6,
            r"^k=6 exceeds the 5 recorded trials — cannot estimate without extrapolating$",
        ),
        ([5, 4], [3, 4], [2, 5], r"k=5 exceeds the 4 recorded trials .* \(at index 1\)$"),
    ],
)
@pytest.mark.parametrize("fn", [pass_at_k, pass_hat_k])
def test_validation_messages(fn, n, c, k, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fn(n, c, k)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([3, 4], [1], 2, METRIC_PASS_AT_K), "one length"),
        (([[3]], [[1]], 2, METRIC_PASS_AT_K), "1-D"),
        (([3], [1], 0, METRIC_PASS_AT_K), "k_max must be >= 1"),
        (([3], [1], 2, "pass@K"), "metric must be one of"),
        (([3], [4], 2, METRIC_PASS_HAT_K), r"c must be in \[0, 3\]"),
    ],
)
def test_table_validation(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        pass_k_table(*args)


# --- properties ---------------------------------------------------------------------------

trials = st.integers(1, 60).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))
)


@settings(max_examples=150, deadline=None)
@given(trials)
def test_estimators_bracket_the_pass_rate(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    hat, at = pass_hat_k(n, c, k), pass_at_k(n, c, k)
    assert 0.0 <= hat <= c / n + 1e-12
    assert c / n <= at + 1e-12
    assert at <= 1.0


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_monotone_in_k(nc: tuple[int, int]) -> None:
    n, c = nc
    at = pass_k_table([n], [c], n, METRIC_PASS_AT_K)[:, 0]
    hat = pass_k_table([n], [c], n, METRIC_PASS_HAT_K)[:, 0]
    assert (np.diff(at) >= 0).all()
    assert (np.diff(hat) <= 0).all()


@settings(max_examples=150, deadline=None)
@given(trials)
def test_pass_at_k_is_complement_of_pass_hat_k_of_failures(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert abs(pass_at_k(n, c, k) - (1 - pass_hat_k(n, n - c, k))) <= 1e-12


@settings(max_examples=150, deadline=None)
@given(trials)
def test_matches_exact_binomials(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(slow_pass_at_k(n, c, k), rel=1e-12, abs=1e-15)
    assert pass_hat_k(n, c, k) == pytest.approx(slow_pass_hat_k(n, c, k), rel=1e-12, abs=1e-15)


# --- Wilson and the normal quantile -----------------------------------------------------


@pytest.mark.parametrize("p", [0.5, 0.8, 0.9, 0.95, 0.975, 0.995, 0.9995, 1e-12, 0.0, 1.0])
def test_norm_ppf_matches_upstream(p: float) -> None:
    assert abs(norm_ppf(p) - upstream_norm_ppf(p)) <= 1e-12


def test_norm_ppf_value() -> None:
    assert norm_ppf(0.975) == pytest.approx(Z95, abs=1e-12)
    assert norm_ppf(0.5) == 0.0


@pytest.mark.parametrize("n", [1, 10, 50])
def test_wilson_zero_successes_upper_bound(n: int) -> None:
    z2 = norm_ppf(0.975) ** 2
    low, high = wilson_interval(0, n)
    assert low == pytest.approx(0.0, abs=1e-15)  # upstream's float noise: 2.8e-17 at n=10
    assert high == pytest.approx(z2 / (n + z2), abs=1e-15)


def test_wilson_one_case_at_one() -> None:
    low, high = wilson_interval(1.0, 1)
    assert (round(low, 4), high) == (0.2065, 1.0)


def test_wilson_no_cases_is_uninformative() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
@pytest.mark.parametrize(("s", "n"), [(0, 1), (1, 1), (3, 10), (7.5, 10), (49, 50), (0.3 * 7, 7)])
def test_wilson_matches_upstream(s: float, n: int, confidence: float) -> None:
    got = wilson_interval(s, n, confidence)
    assert got == pytest.approx(upstream_wilson(s, n, confidence), abs=1e-15)


def test_wilson_bounds_vectorised() -> None:
    s, n = np.array([0, 3, 10, 0]), np.array([10, 10, 10, 0])
    low, high = wilson_bounds(s, n, 0.9)
    want = [upstream_wilson(a, b, 0.9) for a, b in zip(s.tolist(), n.tolist(), strict=True)]
    np.testing.assert_allclose(np.stack([low, high], axis=1), want, atol=1e-15)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((1, 2, 1.0), "confidence"),
        ((1, 2, 0.0), "confidence"),
        ((3, 2), "successes"),
        ((1, -1), "n must be"),
        ((1, 2.5), "n must be"),
    ],
)
def test_wilson_validation(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_interval(*args)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_ordered_and_holds_estimate(sn: tuple[int, int]) -> None:
    s, n = sn
    low, high = wilson_interval(s, n)
    assert 0.0 <= low <= high <= 1.0
    if n:
        assert low - 1e-12 <= s / n <= high + 1e-12


def test_stats_layer_imports_no_data_or_ui_libraries() -> None:
    code = (
        "import sys, dashboard.stats; "
        "print(sorted(m for m in ('pandas', 'duckdb', 'altair', 'streamlit') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
