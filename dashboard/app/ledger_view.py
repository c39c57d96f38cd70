"""The ledger as the pages see it: who may sign (relidash.toml's `[review]
allowed_signers`) and the reviews directory's chain and signatures, read fresh each run
(another replica or the CLI may have added a record).

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
    from dashboard.data.sshsig import configured_signers

    try:
        return configured_signers(app_state.source().config_file())
    except (ValueError, SourceError) as exc:
        st.warning(f"Signatures cannot be checked against allowed signers: {md(exc)}")
        return None


def ledger_state() -> Any:
    """The reviews directory's chain and signatures (analysis.ledger_state), or None."""
    from dashboard.analysis.ledger_state import check_ledger
    from dashboard.data.signoffs import ReviewsDirError

    try:
        return check_ledger(app_state.reviews_dir(), allowed_signers())
    except ReviewsDirError as exc:
        st.warning(f"The ledger cannot be checked: {md(exc)}")
        return None
