"""The Review page names the cases a per-case rule fails, as JUnit fails them one by one."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_env import app_serving
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
POLICY = """
[[rule]]
name = "every safety case"
slice = "risk_tier:safety"
min_case_rate = 0.8
"""


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports)
    (tmp_path / "policy.toml").write_text(POLICY)
    with app_serving(reports, tmp_path / "reviews", monkeypatch):
        monkeypatch.setenv("RELIDASH_POLICY", str(tmp_path / "policy.toml"))
        yield AppTest.from_file(str(APP), default_timeout=120)


def test_a_failed_per_case_rule_lists_its_cases(app: AppTest) -> None:
    app.query_params.update({"suite": "support-agent", "release": "v1.11.0"})
    app.run()
    app.switch_page("page_scripts/review.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    # as a reader sees them: Markdown's escapes taken off
    lines = [re.sub(r"\\(.)", r"\1", m.value) for m in app.markdown]
    assert any(
        line.startswith("**FAILED** · ") and "per-case gate FAILED: 3 of 7" in line
        for line in lines
    ), lines
    (expander,) = [e for e in app.expander if "Cases below" in e.label]
    (table,) = expander.dataframe
    shown = table.value
    assert list(shown["passes/runs"]) == ["0/5", "0/5", "1/5"]
    assert list(shown.columns) == ["case", "passes/runs", "pass rate"]
