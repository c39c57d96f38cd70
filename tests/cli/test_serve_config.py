"""`relidash serve` applies the project's Streamlit settings from whatever directory it
runs: Streamlit itself reads .streamlit/config.toml only from the current
directory and ~/.streamlit, so the settings go to it as flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

from servers import STOP_BEFORE_EXEC

ROOT = Path(__file__).resolve().parents[2]


def test_serve_from_another_directory_carries_the_project_settings(tmp_path: Path) -> None:
    elsewhere, home, reports = tmp_path / "elsewhere", tmp_path / "home", tmp_path / "reports"
    for d in (elsewhere, home, reports):
        d.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            STOP_BEFORE_EXEC,
            "serve",
            str(reports),
            "--catalog",
            str(tmp_path / "c.duckdb"),
            "--reviews",
            str(tmp_path / "r"),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
        cwd=elsewhere,
        env=dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT)),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    argv = json.loads(done.stdout.strip().splitlines()[-1])
    flags = {argv[i]: argv[i + 1] for i in range(len(argv) - 1) if argv[i].startswith("--")}
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    for section, table in config.items():
        for key, value in table.items():
            want = str(value).lower() if isinstance(value, bool) else str(value)
            given = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == f"--{section}.{key}"]
            assert want in given, (section, key, given)
    # the ones a user sees: no Deploy button, the theme, no usage statistics
    assert flags["--client.toolbarMode"] == "minimal"
    assert flags["--theme.base"] == "light"
    assert flags["--theme.primaryColor"] == config["theme"]["primaryColor"]
    assert flags["--browser.gatherUsageStats"] == "false"
    # a served app's source does not change under it: no watcher resolving every module's
    # path at each script run
    assert flags["--server.fileWatcherType"] == "none"
    assert flags["--server.runOnSave"] == "false"
    # nor a full garbage collection after each script run, before its last messages go
    assert flags["--runner.postScriptGC"] == "false"
