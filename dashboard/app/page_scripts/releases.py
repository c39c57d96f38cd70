"""Releases: pass@k and pass^k across the releases of a suite, with CI bands."""

from urllib.parse import urlencode

import streamlit as st

from dashboard.app import state as app_state
from dashboard.app.widgets import (
    chart,
    data_table,
    download,
    linked_select,
    release_window,
    report_page,
)
from dashboard.render.formatting import display_release_table, md, unknown_notes

version, suites, count_errors = report_page("Releases")
left, right = st.columns([3, 1])
with left:
    suite = linked_select("suite", "Suite", suites, page="releases")
releases = app_state.suite_releases(version, suite)
k_max = max(8, int(releases["runs_max"].max()) if releases["runs_max"].notna().any() else 1)
default_k = int(releases["runs_max"].iloc[-1]) if releases["runs_max"].notna().iloc[-1] else 1
with right:
    k = linked_select(
        "k", "k (trials a user meets)", list(range(1, k_max + 1)), default_k, page="releases"
    )

window = release_window([str(r) for r in releases["release"]], page="releases")
table = app_state.release_table(version, suite, k, count_errors, window)
for (flag_suite, flag_release), status in app_state.approved_but_changed().items():
    if flag_suite == suite:
        st.error(
            f"{md(flag_release)} was approved, and its evidence has {status.status} since: "
            + "; ".join(md(f["path"]) for f in status.changed_files)
            + f" (see [the review](/review?{urlencode({'suite': suite, 'release': flag_release})}))"
        )
shown = display_release_table(table)
data_table(shown)
for note in unknown_notes(table):
    st.caption(f"⚠ {md(note)}")
download(
    (lambda: display_release_table(app_state.release_table(version, suite, k, count_errors)))
    if window
    else shown,
    f"releases-{suite}-k{k}",
)
st.caption(
    "Envelope = pass@k − pass^k: over 50 points is a gambler (capable, unreliable), under 20 is steady. "
    "Δ is the paired change over the cases both releases evaluated (paired cluster bootstrap, 95%); "
    "◆ marks a change whose interval excludes zero."
)

st.subheader(f"pass@{k} and pass^{k} across releases")
chart(
    app_state.releases_chart(version, suite, k, count_errors, window),
    description=f"pass@{k} and pass^{k} of each release shown, with 95% CI bands; "
    "the numbers are in the table above.",
    stretch=True,
)

st.subheader("pass^k against k for one release")
release = linked_select("release", "Release", list(releases["release"]), page="releases")
row = releases[releases["release"] == release].iloc[0]
curve = app_state.passk_curve(version, int(row["report_id"]), k_max, count_errors)
chart(
    app_state.curve_chart(version, int(row["report_id"]), k_max, count_errors),
    description=f"pass@k and pass^k of {release} for k = 1 to {k_max}; the numbers are in its CSV.",
    stretch=True,
)
unknown = curve[curve["value"].isna()]
if not unknown.empty:
    st.caption(f"k ≥ {int(unknown['k'].min())}: {md(unknown['unknown_reason'].iloc[0])}")
download(curve, f"curve-{suite}-{release}")
