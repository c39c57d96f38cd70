"""Run `relidash ARGV` in-process for the tests: (exit code, stdout, stderr)."""

from __future__ import annotations

import pytest

from dashboard.cli import main as cli


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's own usage errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
