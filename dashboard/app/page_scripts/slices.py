"""Slices: pass^k per tag slice across releases, and which cases moved."""

import streamlit as st

from dashboard.analysis.slices import tag_dimensions
from dashboard.app import state as app_state
from dashboard.app.tables import compact_table
from dashboard.app.widgets import (
    chart,
    data_table,
    download,
    k_options,
    k_select,
    linked_select,
    release_window,
    report_page,
    suite_select,
)
from dashboard.render.formatting import md, slice_rows, with_case_links

version, suites, count_errors = report_page("Slices")
suite = suite_select(suites, page="slices")
releases = app_state.suite_releases(version, suite)
dims = tag_dimensions(app_state.suite_tags(version, suite))
if not dims:
    st.info("The cases of this suite carry no tags, so there are no slices.")
    st.stop()
c1, c2 = st.columns(2)
with c1:
    dim = linked_select(
        "dim", "Tag dimension", dims, "risk_tier" if "risk_tier" in dims else None, page="slices"
    )
with c2:
    k = k_select(
        version, suite, count_errors, k_options(version, suite, count_errors), page="slices"
    )

window = release_window([str(r) for r in releases["release"]], page="slices")
metrics = app_state.slice_metrics(version, suite, dim, k, count_errors, window)
order = list(releases["release"])
st.subheader(f"pass^{k} per {md(dim)} slice")
if metrics.empty:
    st.info("No cases in this suite.")
    st.stop()
chart(
    app_state.slice_chart(version, suite, dim, k, count_errors, window),
    description=f"pass^{k} of each {dim} slice across the releases shown, with 95% CI bands; "
    "the numbers are in the table below.",
)
counts = metrics.pivot_table(
    index="slice", columns="release", values="cases_evaluated", aggfunc="first"
)
counts = counts.reindex(columns=[r for r in order if r in counts.columns]).astype("Int64")
st.caption("Evaluated cases per slice and release")
data_table(counts, hide_index=False)
download(counts.reset_index(), f"slice-counts-{suite}-{dim}")
shown = slice_rows(metrics, k)
# the interval's method and an empty reason, the same in every row, are said once
compact_table(shown, keep=["slice", "release", f"pass^{k}"], wrap=True)
download(
    shown
    if window is None
    else lambda: slice_rows(app_state.slice_metrics(version, suite, dim, k, count_errors), k),
    f"slices-{suite}-{dim}-k{k}",
)

st.subheader("Cases of one slice across releases")
values = sorted(metrics["slice"].unique())
value = linked_select("slice", f"{md(dim)} slice", values, page="slices")
tag = None if value == "(untagged)" else (value if dim == "tag" else f"{dim}:{value}")
history = app_state.case_history(version, suite, tag, count_errors, window)
st.caption(
    "passes/runs of each case in each release; the last column says how it moved in the latest release."
)
data_table(with_case_links(history, suite), links={"case": "open"})
download(
    history
    if window is None
    else lambda: app_state.case_history(version, suite, tag, count_errors),
    f"cases-{suite}-{dim}-{value}",
)
