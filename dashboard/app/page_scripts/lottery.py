"""Lottery cases: pass sometimes, never reliably. Diff a passing trial against a failing one."""

import pandas as pd
import streamlit as st

from dashboard.analysis.cases import case_link_key, find_case
from dashboard.app import state as app_state
from dashboard.app.tables import compact_table
from dashboard.app.trials import TRIAL_PARAMS, show_trials
from dashboard.app.widgets import download, k_select, linked_select, report_page, suite_select
from dashboard.render.compact import lottery_rows
from dashboard.render.formatting import md, with_case_links

version, suites, count_errors = report_page("Lottery cases")
c1, c2, c3, c4 = st.columns([2, 2, 1, 2])
with c1:
    suite = suite_select(suites, page="lottery")
releases = app_state.suite_releases(version, suite)
with c2:
    release = linked_select(
        "release", "Release", list(releases["release"]), page="lottery", resets=TRIAL_PARAMS
    )
row = releases[releases["release"] == release].iloc[0]
report_id = int(row["report_id"])
runs_max = int(row["runs_max"]) if pd.notna(row["runs_max"]) else 1
with c3:
    # the suite's k where this release ran enough trials (a lottery case needs k >= 2)
    k = k_select(
        version,
        suite,
        count_errors,
        list(range(2, max(runs_max, 2) + 1)),
        page="lottery",
        otherwise=runs_max,
    )
orders = {"flakiest": "flakiest first", "reliable": "closest to reliable first"}
with c4:
    order = linked_select(
        "order",
        "Order",
        list(orders),
        "flakiest",
        page="lottery",
        format_func=lambda o: orders.get(o, o),
        help="Flakiest first: the pass rate nearest 50%, where the next run is closest to a "
        "coin flip. Closest to reliable first: the highest pass rate, whose failing trials "
        "are the anomaly. Ties: more runs first.",
    )

table = app_state.lottery_table(version, suite, report_id, k, count_errors, order or "flakiest")
st.caption(
    "Ranked flakiest first (pass rate nearest 50%, then most runs): the cases whose outcome is "
    "most a coin flip."
    if order == "flakiest"
    else "Ranked closest-to-reliable first (highest pass rate, then most runs): their failing "
    "trials are the anomaly, and fixing that failure mode makes the case reliable."
)
if table.empty:
    st.info(
        f"No lottery cases in {md(release)} at k = {k}: every evaluated case passed all or none of its runs."
    )
    st.stop()
columns = ["rank", "input", "case_id", "passes", "runs", "pass_at_k", "pass_hat_k"]
shown = table[[*columns, "releases_as_lottery"]]
compact_table(
    lottery_rows(with_case_links(table[[*columns, "releases_as_lottery", "link_key"]], suite)),
    keep=["rank", "input", "case_id", "passes_runs", "case"],
    labels={"pass_at_k": f"pass@{k}", "pass_hat_k": f"pass^{k}", "releases_as_lottery": "streak"},
    percent=["pass_at_k", "pass_hat_k"],
    column_config={
        "rank": st.column_config.NumberColumn("#", width=40),
        "input": st.column_config.TextColumn("input", width=300),
        "case_id": st.column_config.TextColumn("case id", width=130),
        "passes_runs": st.column_config.TextColumn("passes/runs", width=85),
        "pass_at_k": st.column_config.NumberColumn(f"pass@{k}", format="percent", width=70),
        "pass_hat_k": st.column_config.NumberColumn(f"pass^{k}", format="percent", width=70),
        "releases_as_lottery": st.column_config.NumberColumn(
            "streak",
            width=60,
            help="Releases in a row (up to this one) in which the case was a lottery case",
        ),
        "case": st.column_config.LinkColumn("case", display_text="its story", width=75),
    },
)
download(shown, f"lottery-{suite}-{release}-k{k}")

wanted_case = st.query_params.get("case")
release_cases = app_state.report_cases(version, suite, report_id, count_errors)
if wanted_case is not None and not any(
    case_link_key(cid, idx) == wanted_case
    for cid, idx in zip(table["case_id"], table["case_idx"], strict=True)
):
    known = not find_case(release_cases, wanted_case).empty
    st.warning(
        f"Case “{md(wanted_case)}” "
        + (
            f"is in {md(release)} but is not a lottery case at k = {k}"
            if known
            else f"is not in {md(release)}"
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
    "case",
    "Case",
    list(labels),
    page="lottery",
    format_func=lambda key: labels.get(key, key),
    resets=TRIAL_PARAMS,  # another case's trial picks
)
match = find_case(table, case_key)
if match.empty:
    st.warning(f"Case “{md(case_key)}” is not a lottery case of {md(release)}.")
    st.stop()
case_idx = int(match.iloc[0]["case_idx"])
show_trials(version, f"{suite}-{release}", report_id, case_idx, "lottery")
