"""Calculator: pass@k and pass^k from a per-attempt success rate, or from your own runs."""

import streamlit as st

from dashboard.analysis.calculator import rate_curves, runs_estimates
from dashboard.app.widgets import chart, download
from dashboard.render import charts
from dashboard.render.formatting import pct

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
