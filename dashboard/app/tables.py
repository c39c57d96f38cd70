"""A table as the pages show one so that it fits 1280 px: the columns every row holds
alike said once in a caption, repeated UNKNOWN reasons as numbered notes under it.

Must not: hold SQL or arithmetic (dashboard/render/compact.py shapes the frame).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.app.widgets import data_table
from dashboard.render.compact import constant_note, drop_constant, unknown_notes
from dashboard.render.formatting import md


def compact_table(
    frame: pd.DataFrame,
    *,
    keep: Sequence[str],
    unknown: Sequence[str] = (),
    column_config: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    percent: Sequence[str] = (),
    wrap: bool = False,
) -> None:
    """Draw `frame` without its all-alike columns (but `keep`), the `unknown` columns'
    UNKNOWN reasons as notes; the notes and the alike values in a caption below.
    `wrap`: a small table drawn static, so a long cell (a comment) wraps, not cut."""
    shown, notes = unknown_notes(frame, unknown)
    shown, same = drop_constant(shown, keep)
    if wrap:
        data_table(shown)
    else:
        st.dataframe(shown, hide_index=True, width="stretch", column_config=column_config)
    said = [constant_note(same, labels, percent), *notes]
    if any(said):
        st.caption(md(" · ".join(s for s in said if s)))
