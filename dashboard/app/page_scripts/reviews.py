"""Reviews: every sign-off, newest first, with whether its evidence is still the same."""

import streamlit as st

from dashboard.app import ledger_view
from dashboard.app import state as app_state
from dashboard.app.tables import compact_table
from dashboard.app.widgets import download
from dashboard.render import review_tables
from dashboard.render.compact import signoff_rows
from dashboard.render.formatting import md

st.title("Reviews")
st.caption(
    f"Sign-offs in {md(app_state.reviews_dir())}. Evidence is checked now: unchanged (every "
    "report file has the digest it had when signed), changed (which files), or missing."
)
signers = ledger_view.allowed_signers()
entries, problems = app_state.review_history(allowed_signers=signers)
c1, c2, c3 = st.columns(3)
suites = sorted({str(e.record.get("suite")) for e in entries})
with c1:
    suite = st.selectbox("Suite", ["(all)", *suites], key="reviews_suite")
with c2:
    releases = sorted(
        {str(e.record.get("release")) for e in entries if suite in ("(all)", e.record.get("suite"))}
    )
    release = st.selectbox("Release", ["(all)", *releases], key="reviews_release")
with c3:
    decision = st.selectbox(
        "Decision", ["(all)", "approved", "conditional", "rejected"], key="reviews_decision"
    )
shown = [
    e
    for e in entries
    if suite in ("(all)", e.record.get("suite"))
    and release in ("(all)", e.record.get("release"))
    and decision in ("(all)", e.record.get("decision"))
]
if not entries:
    st.info("No sign-offs yet. Record one on the Review page or with `relidash signoff`.")
else:
    table = review_tables.signoffs_table(shown)
    changed = sum(e.evidence.status != "unchanged" for e in shown)
    if changed:
        st.warning(f"{changed} sign-off(s) rest on evidence that has changed or gone since.")
    compact_table(
        signoff_rows(table),
        keep=["time", "suite", "release", "decision", "by", "comment"],
        wrap=True,
    )
    download(table, "reviews")
ledger = ledger_view.ledger_state(signers)
if ledger is not None and ledger.chain.order:
    st.subheader("Ledger")
    (st.success if ledger.holds else st.error)(md(ledger.summary()))
    if not ledger.holds:
        st.dataframe(
            review_tables.ledger_breaks_table(ledger.breaks), hide_index=True, width="stretch"
        )
    if ledger.chain.head_sha256:
        st.caption(
            f"The last record's SHA-256 is {md(ledger.chain.head_sha256)}: noted elsewhere (a "
            "ticket, a packet), it shows later that no record was cut from the end."
        )
if problems:
    st.subheader(f"Problems ({len(problems)})")
    st.caption("Files in the reviews directory that are not sign-off records; left as they are.")
    st.dataframe(
        [{"file": p.file, "reason": p.reason} for p in problems], hide_index=True, width="stretch"
    )
