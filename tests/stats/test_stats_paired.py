"""Paired and unpaired bootstrap intervals on head − base: hand values, a slow loop, properties."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from upstream_copy import quantile

from dashboard.stats import cluster_bootstrap_ci, cpython_choice_indices
from dashboard.stats.paired import (
    PairedDelta,
    UnpairedDelta,
    holm_adjusted,
    paired_bootstrap_ci,
    unpaired_bootstrap_ci,
)

# --- the slow, obvious loop: CPython's random.Random(seed).choice, as multivon-eval draws ---


def _resample_means(values: list[float], n_boot: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    means = []
    for _ in range(n_boot):
        sample = [rng.choice(values) for _ in range(len(values))]
        means.append(sum(sample) / len(sample))
    return means


def slow_paired(base: list[float], head: list[float], n_boot: int, seed: int = 0) -> PairedDelta:
    diffs = [h - b for b, h in zip(base, head, strict=True)]
    point = sum(diffs) / len(diffs)
    means = sorted(_resample_means(diffs, n_boot, seed))
    low, high = quantile(means, 0.025), quantile(means, 0.975)
    below, above = sum(m <= 0 for m in means), sum(m >= 0 for m in means)
    p = min(1.0, 2 * (min(below, above) + 1) / (n_boot + 1))
    return PairedDelta(point, min(low, point), max(high, point), len(diffs), p)


def slow_unpaired(
    base: list[float], head: list[float], n_boot: int, seed: int = 0
) -> UnpairedDelta:
    point = sum(head) / len(head) - sum(base) / len(base)
    b = _resample_means(base, n_boot, seed)
    h = _resample_means(head, n_boot, seed + 1)
    means = sorted(y - x for x, y in zip(b, h, strict=True))
    low, high = quantile(means, 0.025), quantile(means, 0.975)
    return UnpairedDelta(point, min(low, point), max(high, point), len(base), len(head))


def _close(a: PairedDelta | UnpairedDelta, b: PairedDelta | UnpairedDelta) -> None:
    assert type(a) is type(b)
    for field in ("delta", "ci_low", "ci_high"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), abs=1e-12), field
    if isinstance(a, PairedDelta) and isinstance(b, PairedDelta):
        assert a.p_value == pytest.approx(b.p_value, abs=1e-12)


# --- hand-computed values -----------------------------------------------------------------


def test_unchanged_cases_give_a_zero_width_interval_at_zero() -> None:
    base = [0.0, 0.2, 1.0, 0.6]
    # every resample mean is 0: nothing speaks against "no change"
    assert paired_bootstrap_ci(base, base) == PairedDelta(0.0, 0.0, 0.0, 4, 1.0)


def test_a_constant_shift_is_known_exactly() -> None:
    # every case moved by +0.25: every resample mean is 0.25 (to an ulp), and so is the CI
    base = np.array([0.0, 0.25, 0.5, 0.75])
    result = paired_bootstrap_ci(base, base + 0.25)
    assert result.delta == 0.25
    assert result.ci_low == pytest.approx(0.25, abs=1e-15)
    assert result.ci_high == pytest.approx(0.25, abs=1e-15)
    assert result.ci_low <= result.delta <= result.ci_high


def test_one_pair_resamples_to_itself() -> None:
    # m = 1: every draw is the single pair, so the interval is its difference
    # and no resample mean is at or below zero: p = 2 * (0 + 1) / (2000 + 1)
    assert paired_bootstrap_ci([0.25], [0.75]) == PairedDelta(0.5, 0.5, 0.5, 1, 2 / 2001)


def test_two_pairs_by_hand() -> None:
    # differences +1 and 0: a resample mean is 0 (both draws pick 0), 0.5 or 1 with
    # probabilities 1/4, 1/2, 1/4; with 2000 draws the 2.5% and 97.5% quantiles are 0 and 1
    result = paired_bootstrap_ci([0.0, 1.0], [1.0, 1.0])
    assert (result.delta, result.ci_low, result.ci_high, result.n_pairs) == (0.5, 0.0, 1.0, 2)
    # about a quarter of the resample means are 0, the rest above it: p near 2 * 1/4
    assert result.p_value == slow_paired([0.0, 1.0], [1.0, 1.0], 2000).p_value
    assert 0.4 < result.p_value < 0.6


# --- against the slow loop ----------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 12345])
def test_paired_matches_cpython_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    base = list(rng.random(17))
    head = list(np.clip(np.array(base) + rng.normal(0, 0.2, 17), 0, 1))
    _close(
        paired_bootstrap_ci(base, head, n_boot=300, seed=seed), slow_paired(base, head, 300, seed)
    )


def test_unpaired_matches_cpython_loop_with_two_streams() -> None:
    rng = np.random.default_rng(7)
    base, head = list(rng.random(11)), list(rng.random(14))
    _close(unpaired_bootstrap_ci(base, head, n_boot=300), slow_unpaired(base, head, 300))


def test_paired_against_zero_base_is_the_suite_interval_of_head() -> None:
    # one index stream: the paired delta against an all-zero base resamples like the
    # suite's own cluster-bootstrap CI (multivon-eval's) of head
    head = np.random.default_rng(3).random(25)
    low, high, method = cluster_bootstrap_ci(head[np.newaxis])
    result = paired_bootstrap_ci(np.zeros(25), head)
    assert method[0] == "cluster-bootstrap"
    assert result.ci_low == pytest.approx(low[0], abs=1e-12)
    assert result.ci_high == pytest.approx(high[0], abs=1e-12)


def test_deterministic_and_seed_dependent() -> None:
    rng = np.random.default_rng(5)
    base, head = rng.random(30), rng.random(30)
    assert paired_bootstrap_ci(base, head) == paired_bootstrap_ci(base, head)
    assert paired_bootstrap_ci(base, head, seed=1) != paired_bootstrap_ci(base, head, seed=2)


def test_large_suites_are_chunked_without_changing_the_result() -> None:
    # 2500 cases x 2000 resamples is more than one chunk of index cells
    rng = np.random.default_rng(11)
    base = rng.random(2500)
    head = np.clip(base + rng.normal(0, 0.1, 2500), 0, 1)
    result = paired_bootstrap_ci(base, head)
    diffs = head - base
    means = diffs[cpython_choice_indices(2500)].mean(axis=1)
    assert result.ci_low == pytest.approx(np.quantile(means, 0.025), abs=1e-12)
    assert result.ci_high == pytest.approx(np.quantile(means, 0.975), abs=1e-12)


@pytest.mark.parametrize(
    ("base", "head", "message"),
    [
        ([], [], "non-empty"),
        ([0.1, 0.2], [0.1], "one value per matched case"),
        ([[0.1]], [[0.2]], "1-D"),
        ([0.1, float("nan")], [0.1, 0.2], "finite"),
        ([0.1], [float("inf")], "finite"),
    ],
)
def test_paired_refuses_bad_input(base: list[float], head: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_bootstrap_ci(base, head)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"confidence": 1.0}, "confidence"), ({"n_boot": 0}, "n_boot"), ({"seed": 1.5}, "seed")],
)
def test_refuses_bad_settings(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        paired_bootstrap_ci([0.1], [0.2], **kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        unpaired_bootstrap_ci([0.1], [0.2], **kwargs)  # type: ignore[arg-type]


# --- properties ---------------------------------------------------------------------------

per_case = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(per_case, per_case), min_size=1, max_size=40))
def test_paired_interval_is_ordered_and_holds_the_delta(pairs: list[tuple[float, float]]) -> None:
    base, head = zip(*pairs, strict=True)
    result = paired_bootstrap_ci(base, head, n_boot=400)
    assert result.n_pairs == len(pairs)
    assert result.delta == pytest.approx(np.mean(head) - np.mean(base), abs=1e-12)
    assert -1.0 <= result.ci_low <= result.delta <= result.ci_high <= 1.0


@settings(max_examples=60, deadline=None)
@given(
    st.integers(6, 10).flatmap(
        lambda runs: st.tuples(
            st.just(runs),
            # hard and easy cases, so the per-case values spread out (difficulty varies)...
            st.lists(st.integers(0, 1), min_size=6, max_size=20),
            st.lists(st.integers(runs - 1, runs), min_size=6, max_size=20),
            # ...and each case moves by at most one passing run between the releases
            st.lists(st.integers(-1, 1), min_size=40, max_size=40),
        )
    )
)
def test_pairing_narrows_the_interval_on_correlated_data(
    drawn: tuple[int, list[int], list[int], list[int]],
) -> None:
    # hard cases pass 0-1 of `runs`, easy ones runs-1 to runs, about a third or more of
    # each: per-case values spread with sd >= 0.28, while a difference is at most 1/runs
    # <= 0.17, so an interval on the paired differences is well under half as wide
    runs, hard, easy, moves = drawn
    passes = np.array(hard + easy)
    moved = np.clip(passes + np.array(moves[: passes.size]), 0, runs)
    base, head = passes / runs, moved / runs
    paired = paired_bootstrap_ci(base, head)
    unpaired = unpaired_bootstrap_ci(base, head)
    assert paired.delta == pytest.approx(unpaired.delta, abs=1e-12)
    assert paired.ci_high - paired.ci_low < unpaired.ci_high - unpaired.ci_low


# --- Holm's adjustment --------------------------------------------------------------------


def test_holm_by_hand() -> None:
    # sorted 0.01, 0.02, 0.04, 0.5 times 4, 3, 2, 1: 0.04, 0.06, 0.08, 0.5, kept monotone
    adjusted = holm_adjusted([0.04, 0.01, 0.5, 0.02])
    assert adjusted.tolist() == pytest.approx([0.08, 0.04, 0.5, 0.06])
    # a large p early in the order cannot make a later adjusted value smaller
    assert holm_adjusted([0.03, 0.03]).tolist() == pytest.approx([0.06, 0.06])
    assert holm_adjusted([0.9, 0.6]).tolist() == pytest.approx([1.0, 1.0])


def test_holm_rejects_no_more_than_bonferroni_allows_more_than_it() -> None:
    rng = np.random.default_rng(3)
    for _ in range(200):
        p = rng.random(rng.integers(1, 20)) ** 3
        adjusted = holm_adjusted(p)
        bonferroni = np.minimum(1.0, p * p.size)
        assert (adjusted <= bonferroni + 1e-15).all() and (adjusted >= p - 1e-15).all()
