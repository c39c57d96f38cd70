"""Ctrl-C during a load: `relidash` says "interrupted" on one line and exits 130, without a
traceback from itself or its metrics worker, and the next load is whole again."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from report_files import is_report

from dashboard.cli import main as cli_main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
COPIES = 2500  # enough files for a load of a few seconds, and for the metrics worker


def test_ctrl_c_during_a_load_exits_130_in_one_line(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    small = [p for p in sorted(FIXTURES.glob("*.json")) if is_report(p)]
    small = [p for p in small if p.stat().st_size < 60_000]
    for i in range(COPIES):
        source = small[i % len(small)]
        shutil.copyfile(source, reports / f"r{i:05d}-{source.name}")
    catalog = tmp_path / "catalog.duckdb"
    command = [sys.executable, "-m", "dashboard.cli", "summary", str(reports), "--json"]
    proc = subprocess.Popen(
        [*command, "--catalog", str(catalog)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    deadline = time.monotonic() + 60
    while not catalog.exists():  # past the imports: the load has begun
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        assert time.monotonic() < deadline, "the catalog was never opened"
        time.sleep(0.05)
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    _, err = proc.communicate(timeout=120)
    text = err.decode()
    assert proc.returncode == 130, text
    assert text.strip().splitlines()[-1] == "relidash: interrupted", text
    assert "Traceback" not in text, text

    done = subprocess.run(
        [*command, "--catalog", str(catalog)],
        capture_output=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr.decode()
    assert len(json.loads(done.stdout)["reports"]) == COPIES


STOPPED_IMPORT = r"""
import sys
class CtrlC:  # a Ctrl-C while the command's modules are being imported
    def find_spec(self, name, path=None, target=None):
        if name == "dashboard.cli.main":
            raise KeyboardInterrupt
sys.meta_path.insert(0, CtrlC())
from dashboard.cli.entry import run
sys.exit(run())
"""


def test_ctrl_c_during_the_imports_exits_130_in_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STOPPED_IMPORT, "summary", "."],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        timeout=60,
        check=False,
    )
    assert done.returncode == 130
    assert done.stderr == "relidash: interrupted\n"


def _command(handler: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relidash")
    parser.set_defaults(handler=handler)
    return parser


def _released_under_a_ctrl_c(args: argparse.Namespace) -> int:
    """What a Ctrl-C inside `Condition.wait` leaves: the `with` releases a released lock."""
    lock = threading.Lock()
    with lock:
        lock.release()
        raise KeyboardInterrupt


def _released_twice(args: argparse.Namespace) -> int:
    lock = threading.Lock()
    with lock:
        lock.release()
    return 0


def test_an_error_raised_while_a_ctrl_c_unwinds_is_the_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli_main, "build_parser", lambda: _command(_released_under_a_ctrl_c))
    assert cli_main.main([]) == 130
    assert capsys.readouterr().err == "relidash: interrupted\n"


def test_the_same_error_without_a_ctrl_c_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_main, "build_parser", lambda: _command(_released_twice))
    with pytest.raises(RuntimeError, match="release"):
        cli_main.main([])
