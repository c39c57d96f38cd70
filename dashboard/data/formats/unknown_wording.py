"""Why a number is UNKNOWN, in the words of the harness that wrote the report.

One place for every harness's terms: what a trial is called (multivon-eval: a run of a
case; Inspect: a scored epoch of a sample), which option of the harness records more of
them (`--runs`, `--epochs`), and who declines to extrapolate. The stats floor words its
reasons as multivon-eval does (its numbers and texts mirror multivon-eval's own); the
analysis floor rewords them here for a report of another harness, and the Inspect loader
words its per-report reasons here too.

Must not: touch DuckDB, import Streamlit or Altair, or compute a number.
"""

from __future__ import annotations

from typing import Any

from dashboard.data.formats import INSPECT, MULTIVON, harness_named
from dashboard.data.formats.protocol import RunTerms

TERMS = {
    MULTIVON: RunTerms(
        trials="trials",
        trial="trials",
        case="case",
        shortest="the shortest-run case (early_stop)",
        matched="the shortest-run matched case",
        option="--runs",
        declines="multivon-eval does not extrapolate.",
        no_cases="UNKNOWN — no evaluated cases to estimate from.",
    ),
    INSPECT: RunTerms(
        trials="scored epochs",
        trial="scored epoch",
        case="sample",
        shortest="the shortest sample",
        matched="the shortest matched sample",
        option="--epochs",
        declines="relidash does not extrapolate.",
        no_cases="UNKNOWN — no sample has a scored epoch to estimate from (each epoch was "
        "left unscored, NaN, or errored).",
    ),
}


def terms(harness: Any) -> RunTerms:
    """The harness's terms (multivon-eval's for a report that names no known harness)."""
    return harness_named(harness).terms


def k_beyond_runs(harness: Any, k: int, runs: int, uneven: bool) -> str:
    """UNKNOWN at a k above `runs`, the fewest trials of the cases estimated from
    (`uneven`: not every case has that many). multivon-eval's text for its reports."""
    words = terms(harness)
    noun = words.trial if runs == 1 else words.trials
    where = words.shortest if uneven else f"each {words.case}"
    return (
        f"UNKNOWN — k={k} exceeds the {runs} {noun} of {where}; rerun with "
        f"{words.option} >= {k} or pass k <= {runs}. {words.declines}"
    )


def no_cases(harness: Any) -> str:
    """UNKNOWN when no case (sample) is evaluated."""
    return terms(harness).no_cases


def k_beyond_matched(harness: Any, k: int, shortest: int) -> str:
    """UNKNOWN for a change at a k above the fewest trials of a matched pair of cases."""
    words = terms(harness)
    return (
        f"UNKNOWN — k={k} exceeds the {shortest} {words.trials} of {words.matched}; pass "
        f"k <= {shortest} or rerun with {words.option} >= {k}. {words.declines}"
    )


def inspect_short_samples(
    k: int, samples: int, shortest: int, short: int, errored: int, missing: int, planned: Any
) -> str:
    """UNKNOWN at k for an Inspect log, with how many samples fall short of k and why.

    `errored` and `missing` count the short samples with errored epochs and with fewer
    epochs recorded than the log planned (a sample can have both).
    """
    words = terms(INSPECT)
    epochs = "epoch" if shortest == 1 else "epochs"
    if short == samples and errored == 0 and missing == 0 and planned is not None:
        return (
            f"UNKNOWN — k={k} exceeds the {shortest} scored {epochs} of each sample (the log "
            f"ran {planned}); rerun with {words.option} >= {k} or pass k <= {shortest}. "
            + words.declines
        )
    causes = []
    if errored:
        causes.append(f"{errored} have errored epochs")
    if missing:
        causes.append(f"{missing} have epochs the log never recorded (it stopped early)")
    return (
        f"UNKNOWN — k={k} exceeds the {shortest} scored {epochs} of the shortest sample; "
        f"{short} of {samples} samples have fewer than {k}"
        + (": " + ", ".join(causes) if causes else "")
        + f". Pass k <= {shortest}: relidash does not extrapolate from the samples that have "
        f"{k}, as Inspect's pass_at / pass_k averages do."
    )


def inspect_nothing_scored(scorer: str, unscored: int, errored: int) -> str:
    """UNKNOWN for an Inspect log none of whose samples has a scored epoch."""
    parts = []
    if unscored:
        parts.append(
            f"{unscored} {'epoch was' if unscored == 1 else 'epochs were'} left unscored "
            "(NaN, Inspect's sentinel for a sample its scorer did not score)"
        )
    if errored:
        parts.append(f"{errored} errored")
    how = " and ".join(parts) if parts else "the log recorded no epoch"
    return (
        f"UNKNOWN — no sample has an epoch scored by {scorer!r}: {how}. Inspect's own "
        "metrics for this scorer are NaN too; score the samples (or name another scorer "
        "with [inspect] scorer in relidash.toml) and load again."
    )
