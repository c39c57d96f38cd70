"""The Calculator page's trial planner (AppTest): the same plan as `relidash plan`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_env import app_serving
from cli_run import run_cli
from streamlit.testing.v1 import AppTest

from dashboard.render.formatting import md

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"


@pytest.fixture
def reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    copy = tmp_path / "reports"
    shutil.copytree(SAMPLE, copy)
    with app_serving(copy, tmp_path / "reviews", monkeypatch):
        yield copy


def test_the_calculator_plans_trials_as_the_cli_does(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("page_scripts/calculator.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.selectbox(key="plan_suite").set_value("support-agent")
    at.run()
    at.selectbox(key="plan_release").set_value("v1.11.0")
    at.number_input(key="plan_target").set_value(0.1)
    at.button(key="plan_go").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [s.value for s in at.success] + [w.value for w in at.warning]
    code, out, _ = run_cli(
        ["plan", str(reports), "--suite", "support-agent", "--release", "v1.11.0",
         "--half-width", "0.1", "--catalog", ":memory:"],
        capsys,
    )  # fmt: skip
    assert code == 0
    # the page draws the CLI's sentence as md() text: its characters, Markdown escaped
    assert md(out.strip().splitlines()[-1]) in shown
