"""The Gates page ends with the suite's own policy on its latest release: every kind of
rule, with the cases a per-case rule names, as `relidash gate --policy` judges them."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_env import app_serving
from cli_run import run_cli
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
POLICY = """
[[rule]]
name = "every safety case"
slice = "risk_tier:safety"
min_case_rate = 0.8

[[rule]]
name = "no regression"
k = 4
max_drop = 0.02
"""


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[AppTest, Path, Path]]:
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports)
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY)
    with app_serving(reports, tmp_path / "reviews", monkeypatch):
        monkeypatch.setenv("RELIDASH_POLICY", str(policy))
        yield AppTest.from_file(str(APP), default_timeout=120), reports, policy


def test_the_gates_page_judges_the_suites_policy_as_the_cli_does(
    setup: tuple[AppTest, Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    at, reports, policy = setup
    at.query_params.update({"suite": "support-agent"})
    at.run()
    at.switch_page("page_scripts/gates.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [
        re.sub(r"\\(.)", r"\1", e.value).replace("\u2060", "")
        for e in (*at.error, *at.success, *at.info, *at.warning)
    ]
    argv = ["gate", str(reports), "--suite", "support-agent", "--policy", str(policy)]
    code, out, _ = run_cli([*argv, "--catalog", ":memory:"], capsys)
    assert code == 1
    rule_lines = [line for line in out.splitlines() if " gate " in line and "relidash" not in line]
    assert len(rule_lines) == 2
    for line in rule_lines:  # each rule's sentence, as the CLI prints it
        assert line in shown, (line, shown)
    (expander,) = [e for e in at.expander if "Cases below" in e.label]
    assert list(expander.dataframe[0].value["passes/runs"]) == ["0/5", "0/5", "1/5"]
