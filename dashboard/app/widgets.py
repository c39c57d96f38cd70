"""Widgets shared by the pages: deep-linkable pickers, the policy note, CSV downloads.

Page state lives in query parameters (suite, release, k, dim, slice, case) so a copied
URL reopens the same view; a link naming something the catalog lacks gets a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from dashboard.analysis.estimates import policy_label
from dashboard.render.export import csv_bytes

T = TypeVar("T")


def linked_select(
    name: str,
    label: str,
    options: Sequence[T],
    default: T | None = None,
    *,
    page: str,
    format_func: Any = str,
    help: str | None = None,
) -> T | None:
    """A selectbox whose value is mirrored in the `name` query parameter."""
    if not options:
        return None
    as_text = [str(o) for o in options]
    wanted = st.query_params.get(name)
    key = f"{page}_{name}"
    if key not in st.session_state:
        if wanted is not None and wanted not in as_text:
            st.warning(
                f"The link asks for {name} “{wanted}”, which is not in the loaded reports; showing another."
            )
            wanted = None
        start = (
            wanted
            if wanted is not None
            else (
                str(default)
                if default is not None and str(default) in as_text
                else as_text[-1 if name == "release" else 0]
            )
        )
        st.session_state[key] = options[as_text.index(start)]
    elif st.session_state[key] not in options:
        st.session_state[key] = options[0]
    value = st.selectbox(label, options, key=key, format_func=format_func, help=help)
    st.query_params[name] = str(value)
    return value


def policy() -> bool:
    count = bool(st.session_state.get("count_agent_errors", False))
    st.caption("Policy: " + policy_label(count))
    return count


def download(frame: pd.DataFrame, name: str, label: str = "Download CSV") -> None:
    st.download_button(
        label, data=csv_bytes(frame), file_name=f"{name}.csv", mime="text/csv", key=f"dl_{name}"
    )


def report_page(title: str) -> tuple[int, pd.DataFrame, bool]:
    """A page over the reports: its heading, then (catalog version, report overview,
    whether agent errors count as failures), with the policy stated. Stops with a hint
    when nothing is loaded."""
    from dashboard.app import (
        state as app_state,  # the cache boundary; widgets stay importable alone
    )

    st.title(title)
    version = app_state.version()
    overview = app_state.overview(version)
    if overview.empty:
        no_reports()
    return version, overview, policy()


def no_reports() -> None:
    st.info(
        "No reports are loaded. Point relidash at a directory of multivon-eval report files; the Data page lists any files it could not use."
    )
    st.stop()
