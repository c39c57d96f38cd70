"""Case: one case across every release of its suite, and its trials in any release."""

import streamlit as st

from dashboard.analysis.case_story import matched_ids_note
from dashboard.app import state as app_state
from dashboard.app.trials import TRIAL_PARAMS, show_trials
from dashboard.app.widgets import (
    chart,
    download,
    k_options,
    k_select,
    linked_select,
    report_page,
    suite_select,
)
from dashboard.render import charts
from dashboard.render.formatting import md, pct, short_case_id

version, suites, count_errors = report_page("Case")
c1, c2 = st.columns([1, 3])
with c1:
    suite = suite_select(suites, page="case")
choices = app_state.case_choices(version, suite, count_errors)
wanted = st.query_params.get("case")
if wanted is not None and wanted not in choices:  # an input, say: the case's own key
    found = app_state.case_link(version, suite, wanted, count_errors)
    if found is not None:
        st.query_params["case"] = found
with c2:
    case = linked_select(
        "case",
        "Case",
        list(choices),
        page="case",
        format_func=lambda key: f"{short_case_id(key)} · {choices.get(key, key)}",
        help="Type to search: cases are matched across releases by case id, else by input.",
        resets=TRIAL_PARAMS,  # another case's trial picks
    )
k = k_select(version, suite, count_errors, k_options(version, suite, count_errors), page="case")
story = app_state.case_story(version, suite, case, k, count_errors)
if story is None:
    st.warning(f"No release of {md(suite)} has the case “{md(case)}”.")
    st.stop()
present = story[story["status"].notna()]
latest = present.iloc[-1]
st.subheader(md(short_case_id(case)))
st.caption(md(" ".join(str(latest["input"] or "").split())[:300]))
id_note = matched_ids_note(story)
if id_note:
    st.info(md(id_note))
last = story["last_change"].iloc[0]
st.markdown(
    f"In **{len(present)}** of {len(story)} releases · latest {md(latest['release'])}: "
    f"**{md(latest['cell'])}** ({md(latest['change'])})"
    + (f" · last changed class in **{md(last)}**" if last else "")
)
chart(
    charts.case_chart(story),
    description="The case's pass rate in each release; the numbers are in the table below.",
    stretch=True,
)
shown = story.assign(
    pass_rate=[pct(v) for v in story["pass_rate"]],
    **{f"pass^{k}": [pct(v) if v is not None else "UNKNOWN" for v in story["pass_hat_k"]]},
)[["release", "cell", "status", "pass_rate", f"pass^{k}", "change"]].rename(
    columns={"cell": "passes/runs", "change": "against the release before"}
)
shown[f"pass^{k}"] = [
    "—" if s is None else v for s, v in zip(story["status"], shown[f"pass^{k}"], strict=True)
]
st.dataframe(shown, hide_index=True, width="stretch")
download(story, f"case-{suite}-{case}")

st.subheader("Trials in one release")
names = [str(r) for r in present["release"]]
release = linked_select("release", "Release", names, names[-1], page="case", resets=TRIAL_PARAMS)
row = present[present["release"] == release].iloc[0]
show_trials(version, f"{suite}-{release}", int(row["report_id"]), int(row["case_idx"]), "case")
