"""What every `relidash` command shares: usage errors and exit codes, the load options,
loading a reports directory with a progress bar, and listing load problems.

Must not: compute or format a number (analysis and render do), or import Streamlit.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from dashboard.data.catalog import open_catalog, resolve_catalog_path, settle_catalog

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
DEFAULT_MAX_FILE_MB = 256


class UsageError(Exception):
    pass


def add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        help="catalog file (default: one per directory under $XDG_CACHE_HOME/relidash; "
        "':memory:' keeps nothing)",
    )
    parser.add_argument(
        "--max-file-mb",
        type=float,
        default=DEFAULT_MAX_FILE_MB,
        help=f"skip report files larger than this (default {DEFAULT_MAX_FILE_MB})",
    )


def add_policy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--count-agent-errors",
        action="store_true",
        help="count model errors and timeouts as failed trials (default: leave them out, "
        "as multivon-eval does)",
    )


def reports_dir(path: Path) -> Path:
    if not path.exists():
        raise UsageError(f"{path}: no such directory")
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory")
    return path


def load(args: argparse.Namespace, stream: TextIO | None = None, *, settle: bool = True) -> Any:
    """Open the catalog for args.directory and refresh it, drawing progress on stderr.

    Without `settle` the caller checkpoints a large log itself, once it has written
    everything (`relidash summary` stores its per-report entries after the load).
    """
    directory = reports_dir(args.directory)
    con = open_catalog(resolve_catalog_path(directory, args.catalog))
    bar = ProgressBar(stream or sys.stderr)
    from dashboard.analysis.loading import refresh_catalog  # numpy and the stats: not at parse

    result = refresh_catalog(
        con, directory, max_bytes=int(args.max_file_mb * 1024 * 1024), progress=bar.update
    )
    if settle:
        settle_catalog(con)
    bar.finish(
        f"{result.files} report files: {result.parsed} parsed, {result.unchanged} unchanged, "
        f"{result.removed} removed, {result.problems} problems ({result.seconds:.2f} s)"
    )
    return con


class ProgressBar:
    """A one-line progress bar on a terminal; a single closing line elsewhere."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.tty = stream.isatty()
        self.last = 0.0

    def update(self, done: int, total: int) -> None:
        if not self.tty or total == 0:
            return
        now = time.monotonic()
        if done < total and now - self.last < 0.1:
            return
        self.last = now
        filled = int(self.width * done / total)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\rloading reports [{bar}] {done}/{total} files")
        self.stream.flush()

    def finish(self, message: str) -> None:
        if self.tty:
            self.stream.write("\r\033[K")
        self.stream.write(f"relidash: {message}\n")
        self.stream.flush()


def report_problems(con: Any, files: dict[str, str], stream: TextIO | None = None) -> int:
    """Print every load problem on `stream`, marking those of `files` (path -> role)."""
    from dashboard.analysis.summary import load_problems

    stream = stream or sys.stderr  # looked up per call: tests and callers swap sys.stderr
    problems = load_problems(con)
    for p in problems.itertuples(index=False):
        role = f" [{files[p.file]}]" if p.file in files else ""
        stream.write(f"relidash: problem{role}: {p.file} ({p.scope}): {p.reason}\n")
    return len(problems)
