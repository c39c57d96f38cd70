"""The Review, Case and Data pages (AppTest) on a history whose files name releases and
cases two ways (tests/fixtures/release_identity/, see tests/analysis/test_release_identity.py): the
Review page defaults to the latest earlier release with a computable Δ and says why, says
when cases were matched by input, and the Data page says how the suite names releases.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
HISTORY = ROOT / "tests" / "fixtures" / "release_identity"
TIMEOUT = 60
SUITE = "support-agent"


@pytest.fixture(autouse=True)
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    reports = tmp_path / "reports"
    shutil.copytree(HISTORY, reports)
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(tmp_path / "reviews"))
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield reports
    st.cache_data.clear()
    st.cache_resource.clear()


def open_page(script: str, title: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page(f"page_scripts/{script}")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == [title]
    return at


def test_review_defaults_to_a_base_with_a_delta() -> None:
    at = open_page("review.py", "Release review", suite=SUITE, k="3")
    assert at.selectbox(key="review_release").value == "v1.10.0"
    # v1.7.0 is just before, but ran 2 trials: no Δ at k=3
    assert at.selectbox(key="review_base").value == "v1.6.0"
    notes = [i.value for i in at.info]
    assert any("latest earlier release with a computable Δ" in n for n in notes), notes
    # at the suite's k (2, limited by v1.7.0), the page's default, v1.7.0 has a Δ
    at = open_page("review.py", "Release review", suite=SUITE)
    assert at.selectbox(key="review_base").value == "v1.7.0"
    notes = [i.value for i in at.info]
    assert not any("latest earlier release with a computable Δ" in n for n in notes), notes


def test_review_says_cases_were_matched_by_input_and_flags_a_newer_base() -> None:
    at = open_page(
        "review.py", "Release review", suite=SUITE, release="v1.5.0", base="v1.7.0", k="2"
    )
    assert at.selectbox(key="review_base").value == "v1.7.0"
    warnings = " ".join(w.value for w in at.warning)
    assert "newer than the release" in warnings
    at = open_page(
        "review.py", "Release review", suite=SUITE, release="v1.7.0", base="v1.4.0", k="2"
    )
    assert any("Cases matched by input" in i.value for i in at.info)


def test_data_page_says_how_releases_are_named() -> None:
    at = open_page("data.py", "Data")
    notes = " ".join(i.value for i in at.info).replace("\\", "")  # markdown escapes
    assert "names its releases two ways" in notes
    assert "v1.6.0 has 2 files" in notes
