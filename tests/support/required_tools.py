"""Whether a test whose tool is missing skips or fails.

Some tests need more than the Python packages: Chromium, Node.js and Azurite, the
object-storage emulators, OpenSSH's ssh-keygen, and multivon-eval in its own venv (named by
RELIDASH_UPSTREAM_PYTHON). On a workstation without one, those tests skip. Where the whole
suite is meant to run, a missing tool fails the test instead, so a machine without it
cannot pass by skipping: `make test` sets RELIDASH_REQUIRE_TOOLS=1 (and names the
upstream Python), and CI sets CI.

Every such guard in tests/ goes through `unavailable` (tests/test_required_tools.py
checks that none reads CI or RELIDASH_UPSTREAM_PYTHON itself).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import NoReturn

import pytest

REQUIRE_TOOLS = "RELIDASH_REQUIRE_TOOLS"
UPSTREAM_PYTHON = "RELIDASH_UPSTREAM_PYTHON"
_OFF = ("", "0")  # values that leave the flag off
CHROMIUM = Path("/usr/bin/chromium")  # Debian's: test tools cannot download a browser here
BROWSER_TESTS = "the browser tests"
BROWSER_INSTALL = "Debian's chromium package; pip install -e '.[test]' for playwright"
SIGNING_TESTS = "the signed sign-off tests"
SIGNING_INSTALL = "Debian's openssh-client package (make test installs it)"


def tools_required() -> bool:
    """True under `make test` (RELIDASH_REQUIRE_TOOLS) and CI (CI), unless set to 0."""
    return any(os.environ.get(name, "").strip() not in _OFF for name in (REQUIRE_TOOLS, "CI"))


def unavailable(reason: str, *, tests: str, install: str) -> NoReturn:
    """Skip the test for want of a tool, or fail it where every tool is required."""
    if tools_required():
        pytest.fail(f"{reason}; {tests} must run under make test and CI ({install})", pytrace=False)
    pytest.skip(reason)


def upstream_python() -> str:
    """The Python with multivon-eval installed that the comparisons with it run."""
    python = os.environ.get(UPSTREAM_PYTHON, "").strip()
    if not python:
        unavailable(
            f"{UPSTREAM_PYTHON} is not set",
            tests="the comparisons with multivon-eval",
            install="make test sets it to .venv-upstream/bin/python",
        )
    return python


def require_command(command: str, *, tests: str, install: str) -> str:
    """The path of `command` on PATH, or unavailable()."""
    found = shutil.which(command)
    if found is None:
        unavailable(f"{command} is not on PATH", tests=tests, install=install)
    return found


def require_browser(chromium: Path = CHROMIUM) -> None:
    """unavailable() without the playwright package or an executable Chromium."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        unavailable(
            "the playwright package is not installed", tests=BROWSER_TESTS, install=BROWSER_INSTALL
        )
    if not (chromium.is_file() and os.access(chromium, os.X_OK)):
        unavailable(
            f"Chromium is not installed at {chromium}", tests=BROWSER_TESTS, install=BROWSER_INSTALL
        )
