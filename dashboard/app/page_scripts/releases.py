"""Releases: the latest release's verdict and change first, then pass@k and pass^k across
the releases of a suite (newest first), with CI bands."""

from urllib.parse import urlencode

import streamlit as st

from dashboard.app import state as app_state
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
from dashboard.render import headline as headline_text
from dashboard.render.formatting import display_release_table, md, unknown_notes

version, suites, count_errors = report_page("Releases")
left, right = st.columns([3, 1])
with left:
    suite = suite_select(suites, page="releases")
releases = app_state.suite_releases(version, suite)
options = k_options(version, suite, count_errors)
k_max = max(options)
with right:
    k = k_select(
        version, suite, count_errors, options, page="releases", label="k (trials a user meets)"
    )

# The answer first: is the latest release reliable, and did it get better or worse?
head = app_state.headline(version, suite, k, count_errors)
verdict, first, second = st.columns([2, 1, 1])
with verdict:
    banner = {"success": st.success, "error": st.error, "info": st.info}.get(
        headline_text.verdict_kind(head), st.warning
    )
    banner(
        f"**{md(headline_text.verdict_text(head))}**  \n"
        + "  \n".join(md(line) for line in headline_text.verdict_reasons(head))
        + f"  \n[Open its review](/review?{urlencode({'suite': suite, 'release': head.release, 'k': k})})"
    )
for column, number in zip((first, second), headline_text.numbers(head), strict=True):
    with column:
        st.metric(
            md(number.label),
            number.value,
            number.change,
            delta_color="normal" if number.significant else "off",
            delta_arrow="off" if number.direction == headline_text.FLAT else "auto",
            delta_description=None if head.base is None else f"vs {md(head.base)}",
            border=True,
        )
        st.caption(md(number.detail))
st.caption(md(headline_text.base_line(head, app_state.suite_k(version, suite, count_errors))))

window = release_window([str(r) for r in releases["release"]], page="releases")
table = app_state.release_table(version, suite, k, count_errors, window)
for (flag_suite, flag_release), status in app_state.approved_but_changed().items():
    if flag_suite == suite:
        st.error(
            f"{md(flag_release)} was approved, and its evidence has {status.status} since: "
            + "; ".join(md(f["path"]) for f in status.changed_files)
            + f" (see [the review](/review?{urlencode({'suite': suite, 'release': flag_release})}))"
        )
# newest first: the latest release at the top, in view without scrolling
shown = display_release_table(table).iloc[::-1]
data_table(shown)
for note in unknown_notes(table):
    st.caption(f"⚠ {md(note)}")
download(
    (
        lambda: display_release_table(
            app_state.release_table(version, suite, k, count_errors)
        ).iloc[::-1]
    )
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
