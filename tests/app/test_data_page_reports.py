"""The Data page counts reports and the files they come from apart: a promptfoo eval holds
one report per prompt and provider, so a directory of evals lists more reports than files,
and the heading says both rather than calling every report a file."""

from __future__ import annotations

import shutil
from pathlib import Path

import app_env
import pytest
from page_tables import tables
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
PROMPTFOO = ROOT / "tests" / "fixtures" / "promptfoo"
TIMEOUT = 60


def data_page(reports: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    with app_env.app_serving(reports, reports.parent / "reviews", monkeypatch):
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.run(timeout=TIMEOUT)
        at.switch_page("page_scripts/data.py")
        at.run(timeout=TIMEOUT)
        assert not at.exception, [e.value for e in at.exception]
        return at


def test_an_eval_of_several_pairs_is_several_reports_of_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("ticket_routing_v1.json", "ticket_routing_v2.json"):
        shutil.copy(PROMPTFOO / name, reports / name)
    at = data_page(reports, monkeypatch)
    listed = tables(at)[0]
    files = set(listed["file"])
    assert files == {"ticket_routing_v1.json", "ticket_routing_v2.json"}
    assert len(listed) == 8  # two prompts x two providers in each eval
    assert [s.value for s in at.subheader][0] == "Reports (8, from 2 files)"


def test_one_report_a_file_keeps_the_files_heading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    shutil.copy(PROMPTFOO / "single_pair.json", reports / "single_pair.json")
    at = data_page(reports, monkeypatch)
    assert len(tables(at)[0]) == 1
    assert [s.value for s in at.subheader][0] == "Report files (1)"
