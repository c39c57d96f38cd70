"""The app loads its source as every command does (analysis/opening.py): `relidash serve`'s
load options reach the app as the same LoadOptions a command builds from its flags, and the
app's served catalog and a command's catalog hold the same reports and problems."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from dashboard.analysis import opening
from dashboard.analysis.summary import every_problem, report_overview
from dashboard.app import state
from dashboard.cli import common, main, reports
from dashboard.data.sources.reports import catalog_location, open_source

ROOT = Path(__file__).resolve().parents[2]


def served_environment(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment `relidash serve` hands the Streamlit server it becomes."""
    seen: dict[str, Any] = {}

    def execve(path: str, command: list[str], env: dict[str, str]) -> None:
        seen["env"] = env

    monkeypatch.setattr(reports.os, "execve", execve)
    assert main.main(["serve", *argv]) == 0
    return dict(seen["env"])


def command_args(argv: list[str]) -> argparse.Namespace:
    return main.build_parser().parse_args(["summary", *argv])


def test_serve_hands_the_app_the_options_a_command_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flags = [str(ROOT / "sample_reports"), "--catalog", str(tmp_path / "c.duckdb")]
    flags += ["--max-file-mb", "0.25"]
    for name, value in served_environment(flags, monkeypatch).items():
        if name.startswith("RELIDASH_"):
            monkeypatch.setenv(name, value)
    served, command = state.load_options(), common.load_options(command_args(flags))
    source = open_source(flags[0])
    assert served.max_bytes == command.max_bytes == int(0.25 * 1024 * 1024)
    assert catalog_location(source, served.catalog) == catalog_location(source, command.catalog)


def test_the_app_without_serve_reads_the_commands_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (state.ENV_CATALOG, state.ENV_MAX_MB):
        monkeypatch.delenv(name, raising=False)
    defaults = common.load_options(command_args([str(ROOT / "sample_reports")]))
    assert state.load_options() == defaults


def test_served_and_opened_catalogs_load_the_same(tmp_path: Path) -> None:
    """A file over the limit is the same problem to both, and the rest the same reports."""
    reports_dir = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports_dir)
    big = next(p for p in sorted(reports_dir.rglob("*.json")) if p.stat().st_size > 20_000)
    limit = big.stat().st_size - 1

    opened = opening.open_loaded(
        open_source(str(reports_dir)),
        opening.LoadOptions(catalog=str(tmp_path / "command.duckdb"), max_bytes=limit),
        on_wait=lambda *_: None,
    )
    options = opening.LoadOptions(catalog=str(tmp_path / "served.duckdb"), max_bytes=limit)
    served = opening.served_catalog(open_source(str(reports_dir)), options)
    try:
        result = opening.refresh_served(served, options)
        assert result is not None and result.problems == opened.result.problems >= 1
        problems = every_problem(served.cursor())
        assert problems == every_problem(opened.con)
        assert any(p.file.endswith(big.name) for p in problems)
        columns = ["file", "suite", "release", "cases_evaluated"]
        assert (
            report_overview(served.cursor())[columns]
            .sort_values("file")
            .reset_index(drop=True)
            .equals(report_overview(opened.con)[columns].sort_values("file").reset_index(drop=True))
        )
    finally:
        served.release()
        opened.con.close()
    assert os.path.exists(tmp_path / "served.duckdb")
