"""Gates: a threshold on the pass^k CI lower bound per release, optionally per slice; then
the suite's own policy on its latest release, as `relidash gate --policy` judges it."""

import streamlit as st

from dashboard.app import state as app_state
from dashboard.app.tables import compact_table
from dashboard.app.widgets import (
    chart,
    data_table,
    download,
    k_options,
    k_select,
    release_window,
    report_page,
    suite_select,
)
from dashboard.render import charts, review_tables
from dashboard.render.formatting import md, with_case_links
from dashboard.render.gate_report import gate_table_shown, rule_detail

version, suites, count_errors = report_page("Gates")
st.caption(
    "As multivon-eval's assert_pass_hat_k(k, min_ci_low): a release passes when the lower bound "
    "of its 95% pass^k CI reaches the threshold, and fails when the whole CI is below it. "
    "UNDECIDED (the CI straddles the threshold: more trials would decide) and UNKNOWN (k beyond "
    "the recorded runs, or no evaluated cases) fail: an undecided or ungateable claim is never "
    "a pass."
)
c1, c2, c3 = st.columns([2, 1, 1])
with c1:
    suite = suite_select(suites, page="gates")
releases = app_state.suite_releases(version, suite)
with c2:
    k = k_select(
        version, suite, count_errors, k_options(version, suite, count_errors), page="gates"
    )
with c3:
    threshold = st.number_input("Min CI lower bound", 0.0, 1.0, 0.5, 0.05, key="gate_threshold")
tags = app_state.suite_tags(version, suite)
slice_rules = []
with st.expander("Per-slice rules"):
    chosen = st.multiselect("Slices with their own threshold", tags, key="gate_slices")
    for tag in chosen:
        slice_rules.append(
            (
                tag,
                st.number_input(
                    f"Min CI lower bound for {md(tag)}",
                    0.0,
                    1.0,
                    1.0 if "safety" in tag else threshold,
                    0.05,
                    key=f"gate_rule_{tag}",
                ),
            )
        )
rules = ((None, float(threshold)), *((t, float(v)) for t, v in slice_rules))
window = release_window([str(r) for r in releases["release"]], page="gates")
table = app_state.gate_table(version, suite, k, rules, count_errors, window)
shown = gate_table_shown(table)
latest = shown[table["release_rank"] == table["release_rank"].max()]
for verdict in latest.itertuples(index=False):
    line = f"{verdict.release} · {verdict.slice}: {verdict.detail}"
    banner = {"PASSED": st.success, "FAILED": st.error, "UNDECIDED": st.info}
    banner.get(verdict.verdict, st.warning)(md(line))
chart(
    charts.gate_chart(table, list(releases["release"]), k),
    description=f"pass^{k} CI of each release and slice against its rule's threshold; "
    "the verdicts are in the table below.",
)
data_table(shown)
holding = app_state.holding_table(version, suite, k, rules, count_errors)
if not holding.empty:
    st.subheader(
        f"Cases holding the failed or undecided rules down in {md(releases['release'].iloc[-1])}"
    )
    compact_table(
        with_case_links(holding, suite),
        keep=["case_id", "input", "passes/runs", "case"],
        percent=[f"pass^{k}"],
        column_config={
            "slice": st.column_config.TextColumn("slice", width=110),
            "case_id": st.column_config.TextColumn("case id", width=130),
            "input": st.column_config.TextColumn("input", width=320),
            "passes/runs": st.column_config.TextColumn("passes/runs", width=85),
            f"pass^{k}": st.column_config.NumberColumn(format="percent", width=70),
            "case": st.column_config.LinkColumn("case", display_text="its story", width=75),
        },
    )
download(
    shown
    if window is None
    else lambda: gate_table_shown(app_state.gate_table(version, suite, k, rules, count_errors)),
    f"gates-{suite}-k{k}",
)

# The suite's own policy (--policy, relidash.toml's rules, else the default rule) on its
# latest release: regression and per-case rules included, with the cases a per-case rule
# names, as `relidash gate --policy` and the Review page judge them.
st.subheader(f"The suite's policy on {md(releases['release'].iloc[-1])}")
head = app_state.headline(version, suite, k, count_errors)
if head.gate is None:
    st.warning(f"The suite's policy cannot be used: {md(head.policy_error)}")
else:
    st.caption(f"Policy: {md(head.policy.source if head.policy else '')}")
    banner = {"PASSED": st.success, "FAILED": st.error, "UNDECIDED": st.info}
    for result in head.gate.results:
        banner.get(result.verdict.verdict, st.warning)(md(rule_detail(result)))
        if result.rule.per_case and result.holding:
            with st.expander(f"Cases below: {md(result.rule.label())}"):
                st.dataframe(review_tables.cases_below(result), hide_index=True)
