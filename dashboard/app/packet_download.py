"""The Review page's packet download: the same packet `relidash review` writes, with the
sign-offs recorded by the moment of the click, their signatures, whether the criteria
were registered before the results, the evidence files' trial digests checked, and the
ledger's last record.

Must not: write a file (the browser saves it) or cache the packet (a sign-off changes it
and the catalog version does not).
"""

from __future__ import annotations

from dashboard.app import ledger_view
from dashboard.app import state as app_state


def review_packet(
    version: int,
    suite: str,
    release: str,
    base: str | None,
    k: int | None,
    count_agent_errors: bool,
) -> bytes:
    """The review packet (one HTML file) for the review the page shows."""
    from dashboard.analysis.packet_ledger import ledger_head
    from dashboard.analysis.review import utc_now
    from dashboard.analysis.review_history import packet_signatures
    from dashboard.data.records.signoffs import ReviewsDirError
    from dashboard.render.packet import render_packet

    review = app_state.build_review(version, suite, release, base, k, count_agent_errors)
    entries, _ = app_state.review_history(
        ledger_view.allowed_signers(), suite=review.suite, release=review.release
    )
    criteria = ledger_view.criteria(review)
    try:
        head = ledger_head(app_state.reviews_dir())
    except ReviewsDirError:
        head = None  # the page said the sign-offs cannot be listed
    html = render_packet(
        review,
        signoffs=[dict(e.record) for e in entries],
        history=app_state.release_table(version, suite, review.k, count_agent_errors),
        generated_at=utc_now(),
        signatures=packet_signatures(entries),
        criteria=criteria.as_json() if criteria is not None else None,
        integrity=ledger_view.evidence_checks(review),
        ledger_head=head,
    )
    return html.encode("utf-8")
