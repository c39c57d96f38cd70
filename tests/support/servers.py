"""Servers the tests start and stop: a free port on 127.0.0.1, a health check, and a
process group stopped whole (`relidash serve` runs Streamlit as a child that outlives a
plain SIGTERM of its parent); and `relidash serve` stopped just before it would become
the server, to read the command it would run; and the wait for a Streamlit page's script
to go quiet, shared by the browser tests and benchmarks/bench_pages.py."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

# serve up to the moment it would become the Streamlit server: os.execve prints the
# command instead, so nothing listens anywhere
STOP_BEFORE_EXEC = (
    "import json, os, sys\n"
    "def execve(path, argv, env):\n"
    "    print(json.dumps(argv))\n"
    "    sys.exit(0)\n"
    "os.execve = execve\n"
    "from dashboard.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def relidash_command() -> list[str]:
    """The relidash command of the Python running the tests."""
    script = Path(sys.executable).with_name("relidash")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dashboard.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except (OSError, urllib.error.URLError):
        return False


def proc_stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state, ppid, pgrp, ...,
    utime and stime at 11 and 12), or None for a process that is gone (Linux)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (zombies awaiting their reaper do not)."""
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        return True
    for entry in proc_dir.glob("[0-9]*"):
        fields = proc_stat(entry.name)
        if fields is not None and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the server's process group, then SIGKILL whatever is left after 15 s."""
    for sig, grace in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            proc.poll()
            if not group_alive(proc.pid):
                break
            time.sleep(0.2)
        else:
            continue
        break
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)


def quiet_since(page: Any, quiet: float, timeout: float) -> float | None:
    """Wait until a Streamlit page's script has not run for `quiet` seconds; the
    time.monotonic() at which that quiet began, or None when `timeout` passed first.

    The caller has waited for the app to connect. Running: the app's script state is not
    "notRunning", or its status widget (the running indicator) is shown.
    """
    deadline = time.monotonic() + timeout
    since: float | None = None
    while True:
        state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
        running = (
            state != "notRunning" or page.locator('[data-testid="stStatusWidget"]').count() > 0
        )
        now = time.monotonic()
        if running:
            since = None
        elif since is None:
            since = now
        elif now - since >= quiet:
            return since
        if now > deadline:
            return None
        page.wait_for_timeout(50)
