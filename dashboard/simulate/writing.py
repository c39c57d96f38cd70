"""Writing a simulated history to disk: arguments checked, every path kept inside the
output directory, each file written whole (temp name, then rename).

Must not: import DuckDB or Streamlit, or write outside the output directory.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from dashboard.simulate.agent import release_label, reliabilities, suite_name, suite_tasks
from dashboard.simulate.records import ReportSpec
from dashboard.simulate.report import build_report
from dashboard.simulate.settings import DEFAULTS, FIRST_RUN, FORMATS, MASK32

# --- writing -----------------------------------------------------------------------------------


class SimulateError(Exception):
    """The arguments or the output directory cannot be used."""


def _check(
    suites: int, releases: int, cases: int, runs: int, p: float, seed: int, fmt: str
) -> None:
    for name, value in (
        ("suites", suites),
        ("releases", releases),
        ("cases", cases),
        ("runs", runs),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SimulateError(f"--{name} must be a whole number of at least 1, got {value!r}")
    if not (isinstance(p, int | float) and 0.0 <= p <= 1.0):
        raise SimulateError(f"--p must be a probability in [0, 1], got {p!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MASK32:
        raise SimulateError(f"--seed must be a whole number in [0, 2**32), got {seed!r}")
    if fmt not in FORMATS:
        raise SimulateError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _inside(root: Path, path: Path) -> Path:
    """`path`, after checking that nothing (a `..`, a symlink) takes it outside `root`."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root):
        raise SimulateError(f"{path} resolves outside the output directory {root}; not writing it")
    return resolved


def _write(root: Path, path: Path, text: str, mtime: float) -> None:
    target = _inside(root, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _inside(root, target.parent)
    # write then rename, so a dashboard loading the directory never sees half a file
    partial = target.with_name(f".{target.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    mtime = min(mtime, time.time() - 10.0)
    os.utime(partial, (mtime, mtime))
    os.replace(partial, target)


def simulate_reports(
    out_dir: Path | str,
    suites: int = DEFAULTS["suites"],
    releases: int = DEFAULTS["releases"],
    cases: int = DEFAULTS["cases"],
    runs: int = DEFAULTS["runs"],
    p: float = DEFAULTS["p"],
    seed: int = DEFAULTS["seed"],
    fmt: str = DEFAULTS["format"],
    *,
    first_suite: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write suites × releases report files under out_dir/<suite>/; return their paths.

    Each file is `<date>_<release>.json`, one release a week from FIRST_RUN, with its
    modification time set to the end of its simulated run (never later than now: a file
    from the future would look like one still being written). Existing files of the same
    name are replaced; nothing else in out_dir is touched. `first_suite` starts the suite
    numbering later, so that corpora written in several calls get distinct suites.
    """
    _check(suites, releases, cases, runs, p, seed, fmt)
    if isinstance(first_suite, bool) or not isinstance(first_suite, int) or first_suite < 0:
        raise SimulateError(f"first_suite must be a whole number >= 0, got {first_suite!r}")
    root = Path(out_dir)
    if root.exists() and not root.is_dir():
        raise SimulateError(f"{root} exists and is not a directory")
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    written: list[Path] = []
    total = suites * releases
    for s in range(first_suite, first_suite + suites):
        name = suite_name(s)
        tasks = suite_tasks(name, cases, seed)
        table = reliabilities(tasks, releases, p, seed, name)
        for r in range(releases):
            label = release_label(r)
            started = FIRST_RUN + timedelta(days=7 * r, minutes=37 * s)
            spec = ReportSpec(name, s, label, r, name.split("-")[0] + "-bot", fmt, started)
            report, finished = build_report(spec, tasks, runs, table[r], seed)
            path = root / name / f"{started:%Y-%m-%d}_{label}.json"
            _write(root, path, json.dumps(report, indent=2), finished.timestamp())
            written.append(path)
            if progress:
                progress(len(written), total)
    return written
