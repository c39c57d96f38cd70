"""The ledger as the pages see it: who may sign (relidash.toml's `[review]
allowed_signers`) and the reviews directory's chain and signatures, read fresh each run
(another replica or the CLI may have added a record); whether a review's evidence files
are as their writer left them (trial digests), and its criteria's registration.

Must not: write a record, or format (render.review_tables does).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.app import state as app_state
from dashboard.data.sources import SourceError
from dashboard.render.formatting import md


def allowed_signers() -> Path | None:
    """relidash.toml's `[review] allowed_signers`, or None (a warning when unusable)."""
    from dashboard.data.records.sshsig import configured_signers

    try:
        return configured_signers(app_state.source().config_file())
    except (ValueError, SourceError) as exc:
        st.warning(f"Signatures cannot be checked against allowed signers: {md(exc)}")
        return None


def server_signer() -> Any:
    """A function signing a page sign-off's bytes with the server's own key (`[review]
    sign_key` in .streamlit/secrets.toml: a private key file's path), or None. The
    signature attests that this server recorded the record, with the signed-in identity
    it holds."""
    from dashboard.data.records.sshsig import sign_bytes

    try:
        named = st.secrets.get("review", {}).get("sign_key")
    except Exception:  # no secrets file at all
        return None
    if not named:
        return None
    key = Path(str(named)).expanduser()
    return lambda data: sign_bytes(data, key)


def ledger_state(signers: Path | None) -> Any:
    """The reviews directory's chain and signatures (analysis.ledger_state) checked against
    `signers` (allowed_signers()), or None."""
    from dashboard.analysis.ledger_state import check_ledger
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        return check_ledger(app_state.reviews_dir(), signers)
    except ReviewsDirError as exc:
        st.warning(f"The ledger cannot be checked: {md(exc)}")
        return None


def edited_evidence(review: Any) -> list[str]:
    """The sentences of the review's evidence files whose trial records do not match their
    digests: cached by the files' SHA-256, since the same bytes give the same answer."""
    key = tuple((e.path, e.role, e.sha256) for e in review.evidence)
    return _edited_evidence(key, review)


@st.cache_data(show_spinner=False, max_entries=64)
def _edited_evidence(key: tuple[tuple[str, str, str], ...], _review: Any) -> list[str]:
    from dashboard.analysis.evidence_integrity import evidence_integrity

    try:
        files = evidence_integrity(_review, app_state.source())
    except SourceError:
        return []
    return [f.sentence() for f in files if f.edited]


def evidence_checks(review: Any) -> list[dict[str, Any]]:
    """Every evidence file's trial records against their digests, as a packet carries them."""
    from dashboard.analysis.evidence_integrity import evidence_integrity, integrity_json

    try:
        return integrity_json(evidence_integrity(review, app_state.source()))
    except SourceError:
        return []


def criteria(review: Any) -> Any:
    """Whether the review's policy was registered before its results
    (analysis.preregistration.Preregistration), or None when the reviews directory
    cannot be read."""
    from dashboard.analysis.preregistration import preregistration
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        found = preregistration(
            app_state.reviews_dir(),
            app_state.overview(app_state.version()),
            review.suite,
            review.release,
            review.policy.sha256,
        )
    except ReviewsDirError:
        return None
    return found
