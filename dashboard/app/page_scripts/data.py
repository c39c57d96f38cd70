"""Data: every report (a file holds one, or several: a promptfoo eval one per prompt and
provider) and every problem from the load."""

import streamlit as st

from dashboard.analysis.releases import naming_notes
from dashboard.app import state as app_state
from dashboard.app.widgets import download
from dashboard.render.formatting import md

st.title("Data")
version = app_state.version()
overview = app_state.overview(version)
problems = app_state.problems(version)
st.caption(f"Reports: {md(app_state.reports_label())}")
if len(set(overview["file"])) == len(overview):
    st.subheader(f"Report files ({len(overview)})")
else:  # a promptfoo eval holds a report per prompt and provider, a Harbor job one per agent
    st.subheader(f"Reports ({len(overview)}, from {len(set(overview['file']))} files)")
files = overview[
    [
        "file",
        "suite",
        "release",
        "release_source",
        "harness",
        "format",
        "upgraded",
        "log_status",
        "cases_total",
        "cases_evaluated",
        "cases_errored",
        "cases_skipped",
        "cases_excluded",
        "runs_min",
        "runs_max",
        "cases_with_trials",
    ]
]
for note in naming_notes(overview):
    st.info(md(note))
st.dataframe(files, hide_index=True, width="stretch")
download(files, "report-files")
st.subheader(f"Problems ({len(problems)})")
if problems.empty:
    st.success("Every file loaded.")
else:
    st.caption(
        "scope: file = nothing loaded from it; case = that case is left out of every metric; report = loaded, with a warning."
    )
    st.dataframe(problems, hide_index=True, width="stretch")
    download(problems, "problems")
