"""Lottery cases: pass sometimes, never reliably. Diff a passing trial against a failing one."""

import json

import pandas as pd
import streamlit as st

from dashboard.analysis.cases import case_link_key, find_case
from dashboard.analysis.diffing import diff_lines, first_divergence
from dashboard.analysis.releases import suite_names, suite_releases
from dashboard.app import state as app_state
from dashboard.app.widgets import download, linked_select, report_page
from dashboard.data.transcripts import TranscriptUnavailable
from dashboard.render.diff import diff_html

version, overview, count_errors = report_page("Lottery cases")
c1, c2, c3 = st.columns([2, 2, 1])
with c1:
    suite = linked_select("suite", "Suite", suite_names(overview), page="lottery")
releases = suite_releases(overview, suite)
with c2:
    release = linked_select("release", "Release", list(releases["release"]), page="lottery")
row = releases[releases["release"] == release].iloc[0]
report_id = int(row["report_id"])
runs_max = int(row["runs_max"]) if pd.notna(row["runs_max"]) else 1
with c3:
    k = linked_select("k", "k", list(range(2, max(runs_max, 2) + 1)), runs_max, page="lottery")

table = app_state.lottery_table(version, suite, report_id, k, count_errors)
st.caption(
    "Ranked closest-to-reliable first (highest pass rate, then most runs): their failing trials are "
    "the anomaly, and fixing that failure mode makes the case reliable."
)
if table.empty:
    st.info(
        f"No lottery cases in {release} at k = {k}: every evaluated case passed all or none of its runs."
    )
    st.stop()
shown = table[
    ["rank", "input", "case_id", "passes", "runs", "pass_at_k", "pass_hat_k", "releases_as_lottery"]
]
st.dataframe(
    shown,
    hide_index=True,
    width="stretch",
    column_config={
        "pass_at_k": st.column_config.NumberColumn(f"pass@{k}", format="percent"),
        "pass_hat_k": st.column_config.NumberColumn(f"pass^{k}", format="percent"),
        "releases_as_lottery": st.column_config.NumberColumn("releases in a row as lottery"),
    },
)
download(shown, f"lottery-{suite}-{release}-k{k}")

wanted_case = st.query_params.get("case")
release_cases = app_state.suite_cases(version, suite, count_errors)
release_cases = release_cases[release_cases["report_id"] == report_id]
if wanted_case is not None and not any(
    case_link_key(cid, idx) == wanted_case
    for cid, idx in zip(table["case_id"], table["case_idx"], strict=True)
):
    known = not find_case(release_cases, wanted_case).empty
    st.warning(
        f"Case “{wanted_case}” "
        + (
            f"is in {release} but is not a lottery case at k = {k}"
            if known
            else f"is not in {release}"
        )
        + "; showing the top-ranked lottery case."
    )
    del st.query_params["case"]
labels = {
    case_link_key(
        r.case_id, r.case_idx
    ): f"#{r.rank} {r.passes}/{r.runs} · {' '.join(str(r.input).split())[:80]}"
    for r in table.itertuples()
}
case_key = linked_select(
    "case", "Case", list(labels), page="lottery", format_func=lambda key: labels.get(key, key)
)
match = find_case(table, case_key)
if match.empty:
    st.warning(f"Case “{case_key}” is not a lottery case of {release}.")
    st.stop()
case_idx = int(match.iloc[0]["case_idx"])
detail = app_state.case_detail(version, report_id, case_idx)
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
        st.warning(f"The trials of this case cannot be shown: {unavailable}.")
        st.stop()
    st.warning(
        f"This report was written by multivon-eval {detail['format']}, which keeps only the last "
        "run's output and no per-trial verdicts (trials are saved from 0.18 on). Passing and "
        "failing transcripts cannot be compared; here is what the file holds."
    )
    try:
        text = app_state.case_text(version, report_id, case_idx)
    except TranscriptUnavailable as exc:
        st.warning(f"Its output cannot be shown: {exc}.")
        st.stop()
    st.code(text["output"] or "", language=None, wrap_lines=True)
    graders = pd.DataFrame(json.loads(text["evaluators"] or "[]"))
    if not graders.empty:
        st.dataframe(graders, hide_index=True, width="stretch")
    st.stop()

st.subheader("Trials")
graders = []
for t in trials.itertuples(index=False):
    for e in json.loads(t.evaluators or "[]") or []:
        graders.append(
            {
                "run": t.run_index,
                "attempt": t.attempt,
                "grader": e.get("name"),
                "score": e.get("score"),
                "passed": e.get("passed"),
                "reason": e.get("reason"),
            }
        )
verdicts = trials[
    [
        "run_index",
        "attempt",
        "status",
        "latency_ms",
        "model_error",
        "judge_error",
        "evaluator_error",
    ]
]
st.dataframe(verdicts, hide_index=True, width="stretch")
download(verdicts, f"trials-{suite}-{release}-case{case_idx}")
if graders:
    st.dataframe(pd.DataFrame(graders), hide_index=True, width="stretch")
    download(pd.DataFrame(graders), f"graders-{suite}-{release}-case{case_idx}")

passing = trials[trials["status"] == "passed"]
failing = trials[trials["status"] != "passed"]
if passing.empty or failing.empty:
    st.info("This case needs at least one passing and one failing trial to diff.")
    st.stop()
runs = {int(t.run_index): t for t in trials.itertuples(index=False)}


def name(run: int) -> str:
    return f"run {run} ({runs[run].status})"


d1, d2 = st.columns(2)
# Keyed per case: a stored choice must never carry one case's trial over to another.
with d1:
    a = st.selectbox(
        "Passing trial",
        [int(r) for r in passing["run_index"]],
        format_func=name,
        key=f"lottery_a_{report_id}_{case_idx}",
    )
with d2:
    b = st.selectbox(
        "Failing trial",
        [int(r) for r in failing["run_index"]],
        format_func=name,
        key=f"lottery_b_{report_id}_{case_idx}",
    )
rows = diff_lines(runs[a].output or "", runs[b].output or "")
first = first_divergence(rows)
st.subheader("Passing vs failing transcript")
st.caption(
    "Changed lines are shaded, changed words highlighted; ▶ marks the first point where they diverge"
    + ("" if first is not None else " (the transcripts are identical)")
    + "."
)
st.html(diff_html(rows, name(a), name(b)))
