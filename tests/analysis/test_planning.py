"""The trial planner (stats/planning.py, analysis/planning.py, `relidash plan`): each
recommendation is checked by simulating it again, independently: another random stream,
a plain percentile bootstrap written here, per-case estimates from math.comb."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from cli_run import run_cli
from report_files import case, write_report

from dashboard.stats import planning

# a release of 30 cases, 8 trials each: 18 reliable, 8 lottery, 4 failing
N = np.full(30, 8)
C = np.array([8] * 18 + [6, 5, 4, 4, 3, 2, 6, 7] + [0] * 4)
K = 4


def pass_hat(n: int, c: int, k: int) -> float:
    return math.comb(c, k) / math.comb(n, k)


def independent_half_widths(
    cases: int, trials: int, runs: int = 150, resamples: int = 1000, seed: int = 99
) -> np.ndarray:
    """Half-widths of a plain percentile bootstrap over simulated runs of a design."""
    rng = np.random.default_rng(seed)
    widths = []
    for _ in range(runs):
        picked = rng.integers(0, N.size, cases)
        rates = rng.beta(C[picked] + 0.5, N[picked] - C[picked] + 0.5)
        passes = rng.binomial(trials, rates)
        values = np.array([pass_hat(trials, int(p), K) for p in passes])
        if values.min() == values.max():
            widths.append(0.0)
            continue
        means = values[rng.integers(0, cases, (resamples, cases))].mean(axis=1)
        low, high = np.quantile(means, [0.025, 0.975])
        widths.append((high - low) / 2)
    return np.array(widths)


def test_a_recommended_design_holds_when_simulated_again() -> None:
    target = 0.12
    designs = [(m, t) for m in (30, 45, 60, 90, 120) for t in (4, 8)]
    results = planning.half_widths(N, C, K, "pass^k", designs, target=target)
    reached = [d for d in results if d.reached]
    assert reached, results
    best = min(reached, key=lambda d: d.total)
    widths = independent_half_widths(best.cases, best.trials)
    # 80% of runs within the target, give or take the two simulations' own noise
    assert np.mean(widths <= target * 1.03) >= 0.7
    # and a design with half the cases misses it, in both simulations
    smaller = planning.half_widths(
        N, C, K, "pass^k", [(best.cases // 2, best.trials)], target=target
    )
    assert not smaller[0].reached
    assert np.mean(independent_half_widths(best.cases // 2, best.trials) <= target) < 0.8


def test_more_cases_narrow_the_interval_more_than_more_trials() -> None:
    wide, more_trials, more_cases = planning.half_widths(
        N, C, K, "pass^k", [(30, 8), (30, 32), (120, 8)], target=0.1
    )
    assert more_cases.achieved < more_trials.achieved <= wide.achieved + 0.01


def test_power_to_show_a_drop_grows_with_cases_and_is_checked_again() -> None:
    small, large = planning.drop_power(N, C, K, "pass^k", [(15, 8), (120, 8)], drop=0.2)
    assert small.achieved < large.achieved and large.reached
    # independently: a 0.2 drop at 120 cases x 8 trials is shown in most simulated reviews
    rng = np.random.default_rng(7)
    shown = 0
    for _ in range(60):
        picked = rng.integers(0, N.size, 120)
        rates = rng.beta(C[picked] + 0.5, N[picked] - C[picked] + 0.5)
        factor = planning._drop_factor(rates, K, "pass^k", 0.2)
        assert np.mean((rates * factor) ** K) == pytest.approx(np.mean(rates**K) - 0.2, abs=1e-6)
        before = np.array([pass_hat(8, int(p), K) for p in rng.binomial(8, rates)])
        after = np.array([pass_hat(8, int(p), K) for p in rng.binomial(8, rates * factor)])
        diffs = after - before
        means = diffs[rng.integers(0, 120, (1000, 120))].mean(axis=1)
        shown += np.quantile(means, 0.975) < 0
    assert shown / 60 >= 0.7


def test_trials_to_decide_an_undecided_rule() -> None:
    # 40 cases: 30 reliable, 10 seen 4 of 8: pass^4 = (30 + 10 * 1/70) / 40 = 0.7536
    n = np.full(40, 8)
    c = np.array([8] * 30 + [4] * 10)
    plan = planning.trials_to_decide(n, c, K, "pass^k", 0.70, on_ci_low=False)
    assert plan.lottery and plan.cases == 10
    assert plan.extra is not None and plan.decided >= planning.POWER
    # a threshold at the estimate itself is never decided by trials on these cases alone
    stuck = planning.trials_to_decide(n, c, K, "pass^k", 0.7536, on_ci_low=True)
    assert stuck.extra is None and stuck.decided < planning.POWER


def test_relidash_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "reports"
    write_report(root, "s", "v1", [case(f"t{i}", int(p), runs=8) for i, p in enumerate(C)])
    argv = ["plan", str(root), "--suite", "s", "--k", "4", "--catalog", ":memory:"]
    code, out, _ = run_cli([*argv, "--half-width", "0.15"], capsys)
    assert code == 0, out
    assert "goal: a pass^4 95% interval no wider than ±0.150 in 80% of runs" in out
    assert "trials per case" in out and "Now: 30 cases × 8 trials." in out
    code, out, _ = run_cli([*argv, "--half-width", "0.001"], capsys)
    assert code == 1 and "No design tried reaches" in out
    code, _, err = run_cli([*argv, "--half-width", "0"], capsys)
    assert code == 2 and "--half-width must be in (0, 1]" in err


def test_an_undecided_gate_says_what_more_trials_would_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "reports"
    cases = [case(f"t{i}", 8, runs=8) for i in range(30)] + [
        case(f"l{i}", 4, runs=8) for i in range(10)
    ]
    write_report(root, "s", "v1", cases)
    argv = ["gate", str(root), "--suite", "s", "--k", "4", "--min-value", "0.76"]
    code, out, _ = run_cli([*argv, "--catalog", ":memory:"], capsys)
    assert code == 1
    assert "pass^4 gate UNDECIDED (fails)" in out
    assert "more trials on each of the 10 lottery cases" in out


def test_the_first_page_leaves_the_simulation_to_the_review(tmp_path: Path) -> None:
    from dashboard.analysis.gating import run_gate
    from dashboard.analysis.headline import latest_headline
    from dashboard.analysis.loading import refresh_catalog
    from dashboard.analysis.policy import Policy, parse_policy
    from dashboard.analysis.summary import report_overview
    from dashboard.data.catalog import open_catalog

    root = tmp_path / "reports"
    cases = [case(f"t{i}", 8, runs=8) for i in range(30)] + [
        case(f"l{i}", 4, runs=8) for i in range(10)
    ]
    write_report(root, "s", "v1", cases)
    con = open_catalog(":memory:")
    refresh_catalog(con, root)
    rules = parse_policy("[[rule]]\nk = 4\nmin_value = 0.76\n", "p.toml")
    head = latest_headline(con, report_overview(con), "s", 4, Policy("p.toml", "", tuple(rules)))
    assert head.gate is not None
    (shown,) = head.gate.results
    assert shown.verdict.verdict == "UNDECIDED" and shown.plan is None
    (reviewed,) = run_gate(con, "s", "v1", rules).results
    assert reviewed.verdict == shown.verdict and reviewed.plan is not None
