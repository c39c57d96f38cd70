"""What every `relidash` command shares: usage errors and exit codes, the load options,
the reports source (a directory or an s3://, gs://, az:// prefix), loading it with a
progress bar, and listing load problems.

Must not: compute or format a number (analysis and render do), or import Streamlit.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dashboard.data.names import CATALOG_WAIT_SECONDS, DEFAULT_MAX_BYTES
from dashboard.data.sources import SourceError

if TYPE_CHECKING:
    from dashboard.analysis.opening import LoadOptions
    from dashboard.data.sources.reports import ReportSource

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it
DEFAULT_MAX_FILE_MB = DEFAULT_MAX_BYTES // (1024 * 1024)


class UsageError(Exception):
    pass


SOURCE_HELP = (
    "directory of report files, or a prefix in object storage: s3://bucket/prefix "
    "(AWS_ENDPOINT_URL for S3-compatible stores), gs://bucket/prefix, az://container/prefix"
)


def add_source_argument(parser: argparse.ArgumentParser, **kwargs: Any) -> None:
    """The DIR argument every command takes: a directory or an object-storage URL."""
    parser.add_argument("directory", metavar="DIR", help=SOURCE_HELP, **kwargs)


def add_load_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--catalog",
        metavar="PATH",
        help="catalog file (default: one per directory or URL under $XDG_CACHE_HOME/relidash; "
        "':memory:' keeps nothing)",
    )
    parser.add_argument(
        "--anon",
        action="store_true",
        help="read a public bucket without credentials (unsigned requests)",
    )
    parser.add_argument(
        "--catalog-wait",
        type=float,
        default=CATALOG_WAIT_SECONDS,
        metavar="SECONDS",
        help="while another relidash process holds the catalog, wait this long for it "
        f"(default {CATALOG_WAIT_SECONDS:g}; 0: do not wait)",
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


def reports_dir(path: Path | str) -> Path:
    path = Path(path)
    if not path.exists():
        raise UsageError(f"{path}: no such directory")
    if not path.is_dir():
        raise UsageError(f"{path}: not a directory")
    return path


def reports_source(args: argparse.Namespace) -> ReportSource:
    """The source args.directory names (built once per command, so one listing serves the
    load and what follows): a directory that must exist, or an object-storage prefix."""
    from dashboard.data.sources.reports import open_source  # numpy: not at parse

    source = getattr(args, "_reports_source", None)
    if source is None:
        try:
            source = open_source(str(args.directory), anon=bool(getattr(args, "anon", False)))
        except SourceError as exc:
            raise UsageError(str(exc)) from exc
        if source.local_root is not None:
            reports_dir(args.directory)
        args._reports_source = source
    return source


def load(args: argparse.Namespace, stream: TextIO | None = None, *, settle: bool = True) -> Any:
    """Open the catalog for args.directory and refresh it (analysis/opening.py), drawing
    progress on stderr.

    Without `settle` the caller settles the log through analysis once it has written
    everything (`relidash summary` stores its per-report entries after the load). A
    source that cannot be listed or fetched is a usage error (exit 2) naming the URL; the
    catalog keeps every row it had.
    """
    from dashboard.analysis.opening import open_loaded
    from dashboard.data.sources.reports import BucketSource

    source = reports_source(args)
    options = load_options(args)
    bar = ProgressBar(stream or sys.stderr)
    try:
        loaded = open_loaded(
            source,
            options,
            on_wait=_say_waiting,
            progress=bar.update,
            settle=settle,
        )
    except SourceError as exc:
        raise UsageError(str(exc)) from exc
    args._fresh_catalog = loaded.fresh
    result = loaded.result
    fetched = ""
    if isinstance(source, BucketSource):
        fetched = (
            f"; {source.downloaded} objects downloaded "
            f"({source.downloaded_bytes / 1e6:.1f} MB) to {source.mirror.root}"
        )
    bar.finish(
        f"{result.files} report files: {result.parsed} parsed, {result.unchanged} unchanged, "
        f"{result.removed} removed, {result.problems} problems ({result.seconds:.2f} s)" + fetched
    )
    return loaded.con


def load_options(args: argparse.Namespace) -> LoadOptions:
    """The load options (add_load_options) as analysis takes them."""
    from dashboard.analysis.opening import LoadOptions

    return LoadOptions(
        catalog=args.catalog,
        max_bytes=int(args.max_file_mb * 1024 * 1024),
        wait_seconds=float(getattr(args, "catalog_wait", CATALOG_WAIT_SECONDS)),
    )


def _say_waiting(location: str, seconds: float) -> None:
    print(
        f"relidash: the catalog {location} is in use by another relidash process; "
        f"waiting for it (up to {seconds:g} s)",
        file=sys.stderr,
        flush=True,
    )


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
    from dashboard.render.visible import visible

    stream = stream or sys.stderr  # looked up per call: tests and callers swap sys.stderr
    problems = load_problems(con)
    for p in problems.itertuples(index=False):
        role = f" [{files[p.file]}]" if p.file in files else ""
        stream.write(
            f"relidash: problem{role}: {visible(p.file)} ({visible(p.scope)}): "
            f"{visible(p.reason)}\n"
        )
    return len(problems)
