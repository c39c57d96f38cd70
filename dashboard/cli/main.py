"""The `relidash` command: serve the dashboard, print summaries, emit JSON.

Every number printed here comes from dashboard/service.py, the same code path as the
pages. Usage errors and a missing directory exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from dashboard import service, simulate
from dashboard.cli_ci import register as register_ci_commands
from dashboard.data.catalog import (
    CatalogError,
    open_catalog,
    resolve_catalog_path,
    settle_catalog,
)

EXIT_OK = 0
EXIT_USAGE = 2
DEFAULT_MAX_FILE_MB = 256


class UsageError(Exception):
    pass


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except (UsageError, CatalogError) as exc:
        print(f"relidash: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relidash",
        description="Reliability dashboard for multivon-eval reports: pass@k, pass^k, lottery cases.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    summary = sub.add_parser("summary", help="print pass@k / pass^k per suite and release")
    summary.add_argument("directory", type=Path, help="directory of multivon-eval report files")
    summary.add_argument("--json", action="store_true", help="print one JSON document")
    summary.add_argument("--by", choices=("file", "release"), default="file")
    _add_load_options(summary)
    summary.set_defaults(handler=cmd_summary)

    serve = sub.add_parser("serve", help="start the dashboard")
    serve.add_argument("directory", type=Path, nargs="?", default=Path("sample_reports"))
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument("--host", default="127.0.0.1")
    _add_load_options(serve)
    serve.set_defaults(handler=cmd_serve)
    register_ci_commands(sub)
    simulate.register(sub)
    return parser


def _add_load_options(parser: argparse.ArgumentParser) -> None:
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


def _reports_dir(path: Path) -> Path:
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
    directory = _reports_dir(args.directory)
    con = open_catalog(resolve_catalog_path(directory, args.catalog))
    bar = ProgressBar(stream or sys.stderr)
    result = service.refresh_catalog(
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


def cmd_summary(args: argparse.Namespace) -> int:
    con = load(args, settle=False)
    text = service.summary_text(con, by=args.by)
    settle_catalog(con)  # the load and the entries it stored, in one checkpoint
    if args.json and not sys.stdout.isatty():
        sys.stdout.write(text + "\n")  # compact in a pipe: what tools read
        return EXIT_OK
    document = json.loads(text)
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        from dashboard.terminal import render_summary

        sys.stdout.write(render_summary(document, by=args.by))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    directory = _reports_dir(args.directory)
    catalog = resolve_catalog_path(directory, args.catalog)
    app = Path(__file__).with_name("app.py")
    command = [
        sys.executable, "-m", "streamlit", "run", str(app),
        "--server.headless", "true",
        "--server.port", str(args.port),
        "--server.address", args.host,
        "--server.enableXsrfProtection", "true",
        "--browser.gatherUsageStats", "false",
        "--runner.magicEnabled", "false",
    ]  # fmt: skip
    env = dict(os.environ)
    env.update(
        {
            "RELIDASH_REPORTS": str(directory.resolve()),
            "RELIDASH_CATALOG": catalog,
            "RELIDASH_MAX_FILE_MB": str(args.max_file_mb),
        }
    )
    print(f"relidash: serving {directory} on http://{args.host}:{args.port}", file=sys.stderr)
    sys.stderr.flush()
    # Become the server process, so a signal meant for `relidash serve` reaches Streamlit.
    os.execve(sys.executable, command, env)
    return EXIT_OK  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
