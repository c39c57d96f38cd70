"""The app pointed at a reports directory for AppTest: its environment, and Streamlit's
caches cleared on both sides of a test, so no catalog or result leaks between tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import streamlit as st


def point_app_at(reports: Path, reviews: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment `relidash serve` gives the app, with an in-memory catalog."""
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(reviews))
    monkeypatch.delenv("RELIDASH_MAX_FILE_MB", raising=False)
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)


def clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


@contextmanager
def app_serving(reports: Path, reviews: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The app pointed at `reports`, its caches cleared before and after."""
    point_app_at(reports, reviews, monkeypatch)
    clear_caches()
    try:
        yield reports
    finally:
        clear_caches()
