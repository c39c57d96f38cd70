"""Review: the release-review meeting's page. The verdict first, big numbers, then what
changed, the lottery cases, the evidence; a sign-off bound to that evidence."""

import streamlit as st

from dashboard.app import ledger_view, packet_download
from dashboard.app import state as app_state
from dashboard.app.auth import signed_in_identity
from dashboard.app.tables import compact_table
from dashboard.app.widgets import (
    chart,
    download,
    k_select,
    linked_select,
    report_page,
    suite_select,
)
from dashboard.render import review_tables
from dashboard.render.compact import sha_lines, short_sha, signoff_rows
from dashboard.render.formatting import md

SIGNOFF_RECORDED = "signoff_recorded"  # the confirmation shown on the run after a sign-off
SIGNOFF_FIELDS = ("signoff_decision", "signoff_comment", "signoff_name")

version, suites, count_errors = report_page("Release review")
c1, c2, c3, c4 = st.columns([3, 2, 2, 1])
with c1:
    suite = suite_select(suites, page="review")
releases = app_state.suite_releases(version, suite)
names = [str(r) for r in releases["release"]]
with c2:
    release = linked_select("release", "Release", names, names[-1], page="review")
row = releases[releases["release"] == release].iloc[0]
k_max = max(8, int(row["runs_max"]) if row["runs_max"] == row["runs_max"] else 1)
default_k = int(row["runs_max"]) if row["runs_max"] == row["runs_max"] else 1
with c4:  # the suite's k, as on every page
    k = k_select(
        version, suite, count_errors, list(range(1, k_max + 1)), page="review", otherwise=default_k
    )
bases = ["(none)", *[n for n in names if n != release]]
# the latest earlier release with a computable Δ at k, not merely the one before
default_base = app_state.review_base(version, suite, release, k, count_errors).release
with c3:
    base = linked_select("base", "Compared with", bases, default_base or "(none)", page="review")

try:
    review = app_state.build_review(
        version, suite, release, None if base in ("(none)", default_base) else base, k, count_errors
    )
except (LookupError, ValueError) as exc:  # an unusable policy file or an impossible choice
    st.error(f"The review cannot be built: {md(exc)}")
    st.stop()

verdict = review.verdict
banner = {"PASSED": st.success, "FAILED": st.error, "UNDECIDED": st.info}.get(verdict, st.warning)
banner(f"## {verdict}: {md(review.suite)} {md(review.release)}")
flagged = app_state.approved_but_changed().get((review.suite, review.release))
if flagged is not None:
    st.error(
        f"This release was approved, and its evidence has {flagged.status} since: "
        + "; ".join(md(f["path"]) for f in flagged.changed_files)
    )
for result in review_tables.rules_table(review).itertuples(index=False):
    st.markdown(f"**{result.verdict}** · {md(result.detail)}")
for judged_rule in review.gate.results:  # a per-case rule names each case below it
    if judged_rule.rule.per_case and judged_rule.holding:
        with st.expander(f"Cases below: {md(judged_rule.rule.label())}"):
            st.dataframe(review_tables.cases_below(judged_rule), hide_index=True)
judged = sorted({r.rule.k for r in review.gate.results} - {review.k})
if judged:  # both ks shown: the verdict's and the numbers'
    st.caption(
        f"The verdict is judged at k = {md(', '.join(map(str, judged)))} (the policy's rules); "
        f"the numbers below are at k = {review.k}."
    )

numbers = st.columns(4)
for column, cell in zip(numbers, review_tables.headline(review), strict=True):
    column.metric(md(cell["label"]), cell["value"], help=md(cell["detail"]))
    column.caption(md(cell["detail"]))
st.caption(md(review_tables.counts_line(review)))

st.subheader("What changed")
if review.base_note:
    (st.warning if review.base_newer else st.info)(md(review.base_note))
if review.comparison is not None and review.comparison.matching_note:
    (st.error if review.comparison.no_match else st.info)(md(review.comparison.matching_note))
if review.comparison is None:
    st.info("This is the suite's first release: there is nothing to compare with.")
else:
    st.caption(md(review_tables.ledger_counts(review)))
    compact_table(
        review_tables.deltas_table(review),
        keep=["metric", "base", "head"],
        unknown=["Δ (paired, 95% CI)"],
    )
    ledger = review_tables.ledger_table(review)
    st.dataframe(
        ledger,
        hide_index=True,
        width="stretch",
        column_config={
            "change": st.column_config.TextColumn("change", width=160),
            "case": st.column_config.TextColumn("case", width=330),
            "base": st.column_config.TextColumn("base", width=90),
            "head": st.column_config.TextColumn("head", width=90),
            "link": st.column_config.LinkColumn("open", display_text="its story", width=80),
        },
    )
    download(ledger, f"ledger-{suite}-{release}")
    st.caption(f"Δ pass^{review.k} per slice (paired, over the cases both releases evaluated)")
    st.caption(md(review_tables.slices_note(review)))
    compact_table(
        review_tables.slices_table(review), keep=["slice"], unknown=[f"Δ pass^{review.k}"]
    )

st.subheader("Lottery cases of this release")
lottery = review_tables.lottery_shown(review)
if lottery.empty:
    st.info(f"No lottery cases at k = {max(review.k, 2)}.")
else:
    st.dataframe(
        lottery,
        hide_index=True,
        width="stretch",
        column_config={"link": st.column_config.LinkColumn("open", display_text="diff")},
    )

st.subheader(f"pass@{review.k} and pass^{review.k} across releases")
chart(
    app_state.releases_chart(version, suite, review.k, count_errors),
    description=f"pass@{review.k} and pass^{review.k} across the suite's releases, "
    "with 95% CI bands.",
    stretch=True,
)

st.subheader("Load problems")
problems = review_tables.problems_table(review)
if problems.empty:
    st.caption("None in the release's or the base's report file.")
else:
    st.dataframe(problems, hide_index=True, width="stretch")

st.subheader("Provenance")
provenance = review_tables.provenance_table(review)
compact_table(
    provenance.assign(**{"SHA-256": [short_sha(v) for v in provenance["SHA-256"]]}),
    keep=list(provenance.columns),
    wrap=True,
)
with st.expander("SHA-256 in full"):
    st.code(sha_lines(provenance), language=None)
st.caption(
    f"Policy: {md(review.policy.source)} · SHA-256 {review.policy.sha256} · "
    f"relidash {md(review.relidash_version)}"
)
for edited in ledger_view.edited_evidence(review):
    st.error(md(edited))
criteria = ledger_view.criteria(review)
if criteria is not None:
    st.caption(md(criteria.sentence()))

st.subheader("Sign-off")
entries, record_problems = app_state.review_history(
    ledger_view.allowed_signers(), suite=review.suite, release=review.release
)
if entries:
    compact_table(
        signoff_rows(review_tables.signoffs_table(entries)),
        keep=["time", "decision", "by", "comment"],
        wrap=True,
    )
if record_problems:
    st.warning(
        f"{len(record_problems)} file(s) in the reviews directory are not sign-off records "
        "and are left out; the Reviews page lists them with the reason."
    )
recorded = st.session_state.pop(SIGNOFF_RECORDED, None)
if recorded is not None:  # the sign-off just made: said once, with the form cleared
    done, suite_name, release_name, by, file_name = recorded
    st.success(
        f"Recorded: {md(done)} of {md(suite_name)} {md(release_name)} by {md(by)} ({md(file_name)})"
    )
identity = signed_in_identity()
with st.form("signoff", clear_on_submit=False):
    decision = st.radio(
        "Decision", ["approved", "conditional", "rejected"], horizontal=True, key="signoff_decision"
    )
    comment = st.text_area("Comment", key="signoff_comment")
    if identity is None:
        name = st.text_input(
            "Your name", key="signoff_name", help="Without sign-in the name is recorded unverified."
        )
    else:
        name = str(identity.get("email") or identity.get("subject") or "")
        st.caption(f"Signing as {md(name)} (verified by the sign-in provider)")
    submitted = st.form_submit_button("Record the sign-off")
if submitted:
    from dashboard.analysis.review import signoff_record
    from dashboard.data.records.signoffs import (
        AlreadyRecorded,
        ReviewsDirError,
        check_reviews_dir,
        write_signoff,
    )
    from dashboard.data.records.sshsig import SigningError

    try:
        record = signoff_record(
            review, decision=decision, by=name, comment=comment, identity=identity
        )
        check_reviews_dir(app_state.reviews_dir(), app_state.reports_dir())
        path = write_signoff(app_state.reviews_dir(), record, sign=ledger_view.server_signer())
    except AlreadyRecorded as exc:
        st.info(f"Nothing new recorded: {md(exc)}.")
    except (ValueError, ReviewsDirError, OSError, SigningError) as exc:
        st.error(
            f"The sign-off was not recorded: {md(exc)}. What you entered: {decision}, "
            f"by {md(name) or '(no name)'}, comment: {md(comment) or '(none)'}"
        )
    else:
        st.session_state[SIGNOFF_RECORDED] = (
            decision,
            review.suite,
            review.release,
            record["by"],
            path.name,
        )
        for key in SIGNOFF_FIELDS:  # the next run draws the form empty
            st.session_state.pop(key, None)
        st.rerun()

st.download_button(
    "Download the review packet (HTML)",
    # built when clicked, with the sign-offs recorded by then
    data=lambda: packet_download.review_packet(
        version, suite, release, None if base in ("(none)", default_base) else base, k, count_errors
    ),
    file_name=f"review-{suite}-{release}.html",
    mime="text/html",
    key="dl_packet",
)
