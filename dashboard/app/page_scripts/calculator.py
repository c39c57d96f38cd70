"""Calculator: pass@k and pass^k from a per-attempt success rate, or from your own runs."""

import streamlit as st

from dashboard.analysis.calculator import rate_curves, runs_estimates
from dashboard.app import state as app_state
from dashboard.app.widgets import chart, download, policy
from dashboard.render import charts
from dashboard.render.formatting import md, pct
from dashboard.render.plan_report import goal_text, plan_table, recommendation

st.title("Calculator")
st.subheader("From a per-attempt success rate")
c1, c2 = st.columns(2)
with c1:
    p = st.slider("Per-attempt success rate p", 0.0, 1.0, 0.9, 0.01, format="%.2f", key="calc_p")
with c2:
    k_max = st.slider("Largest k", 2, 50, 20, key="calc_kmax")
curves = rate_curves(p, k_max)
chart(
    charts.calculator_chart(curves),
    description=f"pass@k and pass^k against k for p = {p:.2f}, with the envelope between.",
    stretch=True,
)
table = rate_curves(p, 10)
table = table[table["k"].isin([5, 10])]
shown = table.assign(
    pass_at_k=table["pass_at_k"].map(pct),
    pass_hat_k=table["pass_hat_k"].map(pct),
    envelope=[
        f"{w:.1f} pts ({r})"
        for w, r in zip(table["envelope_points"], table["reading"], strict=True)
    ],
)[["k", "pass_at_k", "pass_hat_k", "envelope"]]
st.dataframe(shown.rename(columns={"pass_at_k": "pass@k", "pass_hat_k": "pass^k"}), hide_index=True)
download(curves, "calculator-rate")

st.subheader("From your own runs")
st.caption(
    "n trials of one case with c passes: the unbiased estimators beside the plug-in closed forms, which are biased upward."
)
d1, d2 = st.columns(2)
with d1:
    n = st.number_input("Trials n", 1, 1000, 20, key="calc_n")
with d2:
    c = st.number_input("Passes c", 0, int(n), min(17, int(n)), key="calc_c")
estimates = runs_estimates(int(n), int(c), int(n))
st.dataframe(
    estimates,
    hide_index=True,
    width="stretch",
    column_config={
        col: st.column_config.NumberColumn(label, format="percent")
        for col, label in [
            ("pass_at_k", "pass@k (unbiased)"),
            ("plug_in_pass_at_k", "1−(1−c/n)^k (plug-in)"),
            ("pass_hat_k", "pass^k (unbiased)"),
            ("plug_in_pass_hat_k", "(c/n)^k (plug-in)"),
        ]
    },
)
st.caption(f"pass^k is exactly 0 for k > c = {int(c)}: no k-subset of the trials is all passes.")
download(estimates, "calculator-runs")

st.subheader("Plan trials for a release")
st.caption(
    "From one release's own cases, designs (cases × trials per case) are simulated with the "
    "estimator and interval relidash reports, each case's success rate drawn from its "
    "observed passes; the cheapest design that reaches the goal in 80% of runs is shown. "
    "The same plan as `relidash plan`."
)
version = app_state.version()
suites = app_state.suite_names(version)
if not suites:
    st.info("No reports are loaded: a plan starts from a release's own cases.")
    st.stop()
p1, p2, p3 = st.columns([2, 2, 1])
with p1:
    plan_suite = st.selectbox("Suite", suites, key="plan_suite")
releases = [str(r) for r in app_state.suite_releases(version, plan_suite)["release"]]
with p2:
    # newest first: the release a plan is usually for
    plan_release = st.selectbox("Release", releases[::-1], key="plan_release")
with p3:
    plan_k = st.number_input("k", 1, 32, 4, key="plan_k")
g1, g2 = st.columns(2)
with g1:
    goal = st.radio(
        "Goal", ["interval half-width", "power to show a drop"], horizontal=True, key="plan_goal"
    )
with g2:
    target = st.number_input("Half-width or drop", 0.01, 1.0, 0.05, 0.01, key="plan_target")
# a plan takes seconds: it runs when asked, not at every change of a widget above
asked = st.button("Simulate", key="plan_go")
if asked:
    wants_width = goal == "interval half-width"
    plan = app_state.trial_plan(
        version,
        plan_suite,
        plan_release,
        int(plan_k),
        float(target) if wants_width else None,
        None if wants_width else float(target),
        policy(),
    )
    (st.success if plan.recommended is not None else st.warning)(md(recommendation(plan)))
    st.caption(f"Goal: {md(goal_text(plan))}. Designs tried, cheapest first:")
    st.dataframe(plan_table(plan), hide_index=True)
