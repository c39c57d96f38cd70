"""Coverage of the intervals a verdict reads: how often the 95% interval holds the true
value, by simulation on a realistic mix of case success rates.

    python benchmarks/bench_coverage.py [--runs 400] [--seed 0]

Cases are drawn from a mix: 55% near-reliable (rate 0.95-1.0), 30% lottery (0.3-0.85) and
15% hard (0-0.1). The true suite value is the mix's expected per-case value (E[p^k] for
pass^k, E[1 - (1-p)^k] for pass@k); a paired change with no true change is 0. For each
size (10-100 cases, 3-8 trials) the script simulates `--runs` evaluations and prints the
share whose interval holds the truth: the suite interval relidash reports (the cluster
bootstrap over cases, Wilson when every case has one value), the verdict interval
(analysis/estimates.verdict_interval: the same, widened to hold the Wilson interval of the
mean at 20 cases or fewer), the paired interval of a change (on the same cases twice), and a
slice (a quarter of the cases). Target: 93% or more for every interval a verdict reads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from figures import keep  # noqa: E402

from dashboard.analysis.estimates import verdict_interval  # noqa: E402
from dashboard.analysis.review import SliceDelta, holm_flagged  # noqa: E402
from dashboard.stats import pass_hat_k, suite_pass_k  # noqa: E402
from dashboard.stats.paired import paired_bootstrap_ci  # noqa: E402

MIX = ((0.55, 0.95, 1.0), (0.30, 0.3, 0.85), (0.15, 0.0, 0.1))
TARGET = 0.93
N_BOOT = 500  # fewer resamples than a report's 2000: coverage is a share over many runs


def draw_rates(rng: np.random.Generator, m: int) -> np.ndarray:
    kinds = rng.choice(len(MIX), size=m, p=[w for w, _, _ in MIX])
    low = np.array([MIX[i][1] for i in kinds])
    high = np.array([MIX[i][2] for i in kinds])
    return rng.uniform(low, high)


def true_value(metric: str, k: int) -> float:
    """E over the mix of the per-case value, by quadrature on each uniform part."""
    grid = np.linspace(0, 1, 20001)
    total = 0.0
    for weight, low, high in MIX:
        p = low + (high - low) * grid
        values = p**k if metric == "pass^k" else 1 - (1 - p) ** k
        total += weight * float(np.trapezoid(values, grid))
    return total


def coverage(
    rng: np.random.Generator, m: int, n: int, k: int, metric: str, runs: int
) -> tuple[float, float]:
    """(reported interval, verdict interval) coverage of the suite value."""
    truth = true_value(metric, k)
    held = held_verdict = 0
    for _ in range(runs):
        c = rng.binomial(n, draw_rates(rng, m))
        runs_arr = np.full(m, n)
        (r,) = suite_pass_k(runs_arr, c, [k], metric, n_boot=N_BOOT)
        held += r.ci_low <= truth <= r.ci_high
        low, high = verdict_interval(runs_arr, c, k, metric, r.ci_low, r.ci_high)
        held_verdict += low <= truth <= high
    return held / runs, held_verdict / runs


def paired_coverage(rng: np.random.Generator, m: int, n: int, k: int, runs: int) -> float:
    """The paired interval of pass^k's change holds 0 when nothing changed."""
    held = 0
    for _ in range(runs):
        rates = draw_rates(rng, m)
        before = np.atleast_1d(pass_hat_k(np.full(m, n), rng.binomial(n, rates), k))
        after = np.atleast_1d(pass_hat_k(np.full(m, n), rng.binomial(n, rates), k))
        d = paired_bootstrap_ci(before, after, 0.95, N_BOOT, 0)
        held += d.ci_low <= 0.0 <= d.ci_high
    return held / runs


def false_slice_flags(rng: np.random.Generator, reviews: int) -> tuple[float, float]:
    """With no true change (the same agent twice), the share of reviews that show a slice
    whose paired interval lies wholly below zero, and the share that flag one after Holm's
    adjustment (analysis/review.holm_flagged): 8-20 slices of 8-25 cases, 4-8 trials."""
    raw = flagged = 0
    for _ in range(reviews):
        slices = []
        trials = int(rng.integers(4, 9))
        for s in range(int(rng.integers(8, 21))):
            m = int(rng.integers(8, 26))
            rates = draw_rates(rng, m)
            n = np.full(m, trials)
            before = np.atleast_1d(pass_hat_k(n, rng.binomial(trials, rates), 4))
            after = np.atleast_1d(pass_hat_k(n, rng.binomial(trials, rates), 4))
            d = paired_bootstrap_ci(before, after, 0.95, N_BOOT, 0)
            slices.append(
                SliceDelta(f"s{s}", m, None, None, d.delta, d.ci_low, d.ci_high, "", d.p_value)
            )
        raw += any(s.ci_high is not None and s.ci_high < 0 for s in slices)
        flagged += any(s.flag for s in holm_flagged(slices))
    return raw / reviews, flagged / reviews


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    rows = []
    worst: dict[str, float] = {}
    print(
        f"coverage of 95% intervals, {args.runs} simulated evaluations each (target >= {TARGET:.0%})"
    )
    print(
        f"{'cases':>5} {'trials':>6} {'k':>2}  {'pass^k':>7} {'verdict':>7}  {'pass@k':>7} {'verdict':>7}  {'paired':>7}"
    )
    for m in (10, 20, 50, 100):
        for n in (3, 5, 8):
            for k in sorted({1, 2, n - 1, n} - {0}):
                hat, hat_v = coverage(rng, m, n, k, "pass^k", args.runs)
                at, at_v = coverage(rng, m, n, k, "pass@k", args.runs)
                paired = paired_coverage(rng, m, n, k, args.runs // 2)
                print(
                    f"{m:>5} {n:>6} {k:>2}  {hat:>7.1%} {hat_v:>7.1%}  {at:>7.1%} {at_v:>7.1%}  {paired:>7.1%}"
                )
                for name, value in (
                    ("suite pass^k, reported", hat),
                    ("suite pass^k, verdict", hat_v),
                    ("suite pass@k, reported", at),
                    ("suite pass@k, verdict", at_v),
                    ("paired Δpass^k, no change", paired),
                ):
                    worst[name] = min(worst.get(name, 1.0), value)
    # a slice is a suite of fewer cases: the 10- and 20-case rows above are its coverage
    print()
    for name, value in worst.items():
        # the reported intervals are multivon-eval's, kept as they are; verdicts read others
        judged = "reported" not in name
        verdict = ("met" if value >= TARGET else "MISSED") if judged else "(not a verdict's)"
        target = f">= {TARGET:.0%}" if judged else ""
        print(f"lowest coverage, {name}: {value:.1%} {verdict} {target}".rstrip())
        measure = f"coverage, {name} (lowest over 10-100 cases, 3-8 trials)"
        rows.append((measure, f"{value:.1%}", target, verdict))
    raw, flagged = false_slice_flags(rng, args.runs // 2)
    print(
        f"with no true change, reviews showing a slice wholly below zero: {raw:.1%} "
        f"uncorrected, {flagged:.1%} flagged after Holm (target <= 5%)"
    )
    rows.append(
        (
            "reviews flagging a slice with no true change (Holm, 8-20 slices)",
            f"{flagged:.1%} (uncorrected {raw:.1%})",
            "<= 5%",
            "met" if flagged <= 0.05 else "MISSED",
        )
    )
    keep(
        "bench_coverage",
        "python benchmarks/bench_coverage.py",
        rows,
        setting=f"{args.runs} simulated evaluations per size; mix 55% near-reliable, 30% lottery, 15% hard",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
