"""A page that fails shows its viewer a short message with a reference, never a
traceback (source paths, cache paths, process ids); the server's log gets the traceback
under the same reference (dashboard/app/errors.py). `relidash serve` tells Streamlit to
show no details of an exception itself either (client.showErrorDetails)."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.util import patch_config_options

from dashboard.app import state as app_state
from dashboard.cli.reports import streamlit_flags

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
SECRET = f"/var/cache/relidash-secret/catalog.duckdb held by pid {os.getpid()}"
# each page, and what it reads first from the cache boundary
PAGES = {
    "releases": "suite_releases",
    "slices": "suite_releases",
    "lottery": "suite_releases",
    "case": "case_choices",
    "gates": "suite_releases",
    "review": "suite_releases",
    "reviews": "review_history",
    "data": "overview",
}


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[AppTest]:
    monkeypatch.setenv("RELIDASH_REPORTS", str(SAMPLE))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(tmp_path / "reviews"))
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield AppTest.from_file(str(APP), default_timeout=90)
    st.cache_data.clear()
    st.cache_resource.clear()


def fail(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError(f"cannot read {SECRET}")


def everything_shown(at: AppTest) -> str:
    """Every text of the page, from every element's message."""
    texts = []

    def walk(node: Any) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "ListFields"):
            texts.extend(str(value) for _, value in proto.ListFields())
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)  # noqa: SLF001 (AppTest's element tree)
    return "\n".join(texts)


def open_failing(at: AppTest, page: str, monkeypatch: pytest.MonkeyPatch, details: str) -> None:
    with patch_config_options({"client.showErrorDetails": details}):
        at.run()
        monkeypatch.setattr(app_state, PAGES[page], fail)
        at.switch_page(f"page_scripts/{page}.py")
        at.run()


@pytest.mark.parametrize("page", PAGES)
def test_a_failing_page_shows_a_reference_and_logs_the_traceback(
    app: AppTest, page: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="relidash.app")
    open_failing(app, page, monkeypatch, "none")
    assert not app.exception, [e.value for e in app.exception]
    (shown,) = [e.value for e in app.error if "reference" in e.value]
    ref = re.search(r"reference ([0-9a-f]{8})", shown)
    assert ref is not None, shown
    page_text = everything_shown(app)
    for leak in (SECRET, "relidash-secret", "Traceback", "RuntimeError", str(ROOT), ".py"):
        assert leak not in page_text, leak
    (record,) = [r for r in caplog.records if r.name == "relidash.app"]
    assert ref.group(1) in record.getMessage() and page in record.getMessage()
    assert record.exc_info is not None and SECRET in str(record.exc_info[1])
    assert "Traceback" in caplog.text and "page_scripts" in caplog.text


def test_full_details_leave_the_exception_to_streamlit(
    app: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A developer who asks Streamlit for every detail gets the exception as Streamlit
    shows it."""
    open_failing(app, "releases", monkeypatch, "full")
    assert [e.message for e in app.exception] == [f"cannot read {SECRET}"]
    assert not [e.value for e in app.error if "reference" in e.value]


def test_serve_tells_streamlit_to_show_no_exception_details() -> None:
    flags = streamlit_flags()
    given = [
        flags[i + 1] for i, flag in enumerate(flags[:-1]) if flag == "--client.showErrorDetails"
    ]
    assert given == ["none"]
