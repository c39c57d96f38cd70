"""One case's trials in one release, shown the same way on the Lottery and Case pages:
its input, the trials' verdicts and graders' reasons, and the diff of a passing trial
against a failing one, with which failing trials share a first divergence.

Everything comes from the report file on demand (app/state.py's cached readers). Must
not: hold SQL or arithmetic.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.analysis.diffing import (
    diff_lines,
    divergence_groups,
    first_divergence,
    separating_row,
)
from dashboard.analysis.graders import case_graders, grader_rows
from dashboard.app import state as app_state
from dashboard.app.tables import compact_table
from dashboard.app.widgets import download, linked_select
from dashboard.data.load.transcripts import TranscriptUnavailable
from dashboard.render.compact import trial_rows
from dashboard.render.diff import diff_html
from dashboard.render.formatting import md

# The URL's trial picks (run numbers): with `volatile=off` when volatile differences count,
# a copied link opens the same diff. The picks belong to one case of one release: a page
# drops them from the URL when its case or release changes (linked_select's `resets`).
TRIAL_PARAMS = ("pass", "fail")
VOLATILE_PARAM = "volatile"


def show_trials(version: int, name: str, report_id: int, case_idx: int, key: str) -> None:
    """The case's trials; `name` names downloads, `key` keeps widget state per case."""
    detail = app_state.case_detail(version, report_id, case_idx)
    if detail is None:
        st.warning("This case is not in the loaded report any more; reload the reports.")
        return
    st.subheader("Input")
    st.code(detail["input"] or "", language=None, wrap_lines=True)
    trials = pd.DataFrame()
    unavailable = None
    if detail["n_trials"]:
        try:
            trials = app_state.case_trials(version, report_id, case_idx)
        except TranscriptUnavailable as exc:
            unavailable = str(exc)
    if trials.empty:
        if unavailable:
            st.warning(f"The trials of this case cannot be shown: {md(unavailable)}.")
            return
        st.warning(
            f"This report was written by multivon-eval {md(detail['format'])}, which keeps only "
            "the last run's output and no per-trial verdicts (trials are saved from 0.18 on). "
            "Passing and failing transcripts cannot be compared; here is what the file holds."
        )
        try:
            text = app_state.case_text(version, report_id, case_idx)
        except TranscriptUnavailable as exc:
            st.warning(f"Its output cannot be shown: {md(exc)}.")
            return
        st.code(text["output"] or "", language=None, wrap_lines=True)
        graders = case_graders(text["evaluators"])
        if not graders.empty:
            st.dataframe(graders, hide_index=True, width="stretch")
        return

    st.subheader("Trials")
    columns = [
        "run_index", "attempt", "status", "latency_ms", "model_error", "judge_error",
        "evaluator_error",
    ]  # fmt: skip
    verdicts = trials[columns]
    compact_table(
        trial_rows(trials, columns),
        keep=["run_index", "status"],
        column_config={
            "run_index": st.column_config.NumberColumn("run", width="small"),
            "latency_ms": st.column_config.NumberColumn("latency", format="%d ms"),
        },
    )
    download(verdicts, f"trials-{name}-case{case_idx}")
    graders = grader_rows(trials)
    if not graders.empty:
        compact_table(
            graders,
            keep=["run", "grader", "verdict", "reason"],
            column_config={"score": st.column_config.NumberColumn("score", format="%.2f")},
        )
        download(graders, f"graders-{name}-case{case_idx}")
        if (graders["verdict"] == "skipped").any():
            st.caption("A skipped grader did not judge this trial and is left out of its verdict.")

    passing = trials[trials["status"] == "passed"]
    failing = trials[trials["status"] != "passed"]
    if passing.empty or failing.empty:
        st.info("This case needs at least one passing and one failing trial to diff.")
        return
    runs = {int(t.run_index): t for t in trials.itertuples(index=False)}

    def label(run: int) -> str:
        return f"run {run} ({runs[run].status})"

    d1, d2, d3 = st.columns([2, 2, 1])
    # Keyed per case: a stored choice must never carry one case's trial over to another.
    per_case = f"{key}_{report_id}_{case_idx}"
    with d1:
        a = linked_select(
            "pass",
            "Passing trial",
            [int(r) for r in passing["run_index"]],
            page=per_case,
            format_func=label,
        )
    with d2:
        b = linked_select(
            "fail",
            "Failing trial",
            [int(r) for r in failing["run_index"]],
            page=per_case,
            format_func=label,
        )
    assert a is not None and b is not None  # both lists hold a trial (checked above)
    volatile = f"{key}_volatile"
    if volatile not in st.session_state:
        st.session_state[volatile] = st.query_params.get(VOLATILE_PARAM) != "off"
    with d3:
        ignore = st.toggle(
            "Ignore volatile differences",
            key=volatile,
            help="Durations, timestamps, UUIDs, hex digests, memory addresses, temporary paths "
            "and run counters do not count when finding where the transcripts diverge; the "
            "text shown is the original.",
        )
    if not ignore:
        st.query_params[VOLATILE_PARAM] = "off"
    elif VOLATILE_PARAM in st.query_params:
        del st.query_params[VOLATILE_PARAM]
    rows = diff_lines(runs[a].output or "", runs[b].output or "", ignore_volatile=ignore)
    first = first_divergence(rows)
    separating = separating_row(
        rows,
        [t.output or "" for t in passing.itertuples(index=False)],
        [t.output or "" for t in failing.itertuples(index=False)],
        ignore_volatile=ignore,
    )
    st.subheader("Passing vs failing transcript")
    if first is None:
        where = "the transcripts are identical"
    elif separating is not None:
        where = (
            "▶ marks the first line that separates passing from failing trials (every passing "
            "trial has it and no failing one, or the other way round)"
        )
    else:
        where = (
            "no line separates all passing from all failing trials, so ▶ marks the first point "
            "where these two diverge"
        )
    st.caption(
        f"Changed lines are shaded, changed words highlighted; {md(where)}"
        + (" (lines that differ only in volatile tokens are marked faintly)" if ignore else "")
        + "."
    )
    st.html(diff_html(rows, label(a), label(b), separating))
    if len(failing) > 1:
        groups = divergence_groups(
            runs[a].output or "",
            {int(t.run_index): t.output or "" for t in failing.itertuples(index=False)},
            ignore_volatile=ignore,
            all_passing=[t.output or "" for t in passing.itertuples(index=False)],
        )
        st.caption(
            f"Where each failing trial first parts from what the passing trials share, "
            f"by {md(label(a))}'s lines: "
            + ("one failure mode." if len(groups) == 1 else f"{len(groups)} different points.")
        )
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "passing line": g.line if g.line is not None else "end",
                        "failing trial says": g.text,
                        "failing trials": ", ".join(f"run {r}" for r in g.trials),
                        "count": len(g.trials),
                    }
                    for g in groups
                ]
            ),
            hide_index=True,
            width="stretch",
        )
