"""`relidash summary` and `relidash serve`: the numbers per suite and release in a
terminal or as JSON, and the dashboard.

Every number printed comes from dashboard/analysis, the code path the pages use.
Exit codes: 0 when it ran (even with load problems), 2 on a usage error or a missing
directory.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from dashboard.cli.common import EXIT_OK, add_load_options, load, reports_dir
from dashboard.data.catalog import resolve_catalog_path, settle_catalog

APP = Path(__file__).resolve().parents[1] / "app" / "main.py"


def register(subparsers: Any) -> None:
    """Add `summary` and `serve` to `relidash`'s subcommands."""
    summary = subparsers.add_parser("summary", help="print pass@k / pass^k per suite and release")
    summary.add_argument("directory", type=Path, help="directory of multivon-eval report files")
    summary.add_argument("--json", action="store_true", help="print one JSON document")
    summary.add_argument("--by", choices=("file", "release"), default="file")
    add_load_options(summary)
    summary.set_defaults(handler=cmd_summary)

    serve = subparsers.add_parser("serve", help="start the dashboard")
    serve.add_argument("directory", type=Path, nargs="?", default=Path("sample_reports"))
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument("--host", default="127.0.0.1")
    add_load_options(serve)
    serve.set_defaults(handler=cmd_serve)


def cmd_summary(args: argparse.Namespace) -> int:
    con = load(args, settle=False)
    from dashboard.analysis.summary import summary_text

    text = summary_text(con, by=args.by)
    settle_catalog(con)  # the load and the entries it stored, in one checkpoint
    if args.json and not sys.stdout.isatty():
        sys.stdout.write(text + "\n")  # compact in a pipe: what tools read
        return EXIT_OK
    document = json.loads(text)
    if args.json:
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    else:
        from dashboard.render.terminal import render_summary

        sys.stdout.write(render_summary(document, by=args.by))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    directory = reports_dir(args.directory)
    catalog = resolve_catalog_path(directory, args.catalog)
    command = [
        sys.executable, "-m", "streamlit", "run", str(APP),
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
