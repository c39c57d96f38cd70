"""`relidash summary` and `relidash serve`: the numbers per suite and release in a
terminal or as JSON, and the dashboard.

Every number printed comes from dashboard/analysis, the code path the pages use.
Exit codes: 0 when it ran (even with load problems), 2 on a usage error or a missing
directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.cli.common import (
    EXIT_OK,
    UsageError,
    add_load_options,
    add_source_argument,
    load,
    reports_source,
)

if TYPE_CHECKING:
    from dashboard.data.sources.reports import ReportSource

APP = Path(__file__).resolve().parents[1] / "app" / "server.py"
# The project's Streamlit settings: the checkout's .streamlit/config.toml, or the copy the
# wheel ships. Passed as flags, because Streamlit reads config.toml only from the
# current directory and ~/.streamlit, and `relidash serve` runs from anywhere.
STREAMLIT_CONFIGS = (
    Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml",
    Path(__file__).resolve().parents[1] / "_streamlit" / "config.toml",
)
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def register(subparsers: Any) -> None:
    """Add `summary` and `serve` to `relidash`'s subcommands."""
    summary = subparsers.add_parser("summary", help="print pass@k / pass^k per suite and release")
    add_source_argument(summary)
    summary.add_argument("--json", action="store_true", help="print one JSON document")
    summary.add_argument("--by", choices=("file", "release"), default="file")
    summary.add_argument(
        "--suite", action="append", metavar="S", help="only this suite (repeatable)"
    )
    summary.add_argument("--release", metavar="R", help="only this release")
    add_load_options(summary)
    summary.set_defaults(handler=cmd_summary, walk_ahead=True)

    serve = subparsers.add_parser("serve", help="start the dashboard")
    add_source_argument(serve, nargs="?", default="sample_reports")
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument(
        "--policy", type=Path, metavar="FILE.toml", help="the gate policy the Review page uses"
    )
    serve.add_argument(
        "--reviews",
        type=Path,
        metavar="RDIR",
        help="directory of sign-off records (default: $XDG_DATA_HOME/relidash/reviews)",
    )
    serve.add_argument(
        "--seed-catalog",
        metavar="PATH_OR_URL",
        help="on a first start (no local catalog yet), copy this catalog built elsewhere "
        "(a path, or an object URL such as s3://bucket/reports/relidash.duckdb), then "
        "refresh it incrementally; one of another schema or relidash version is ignored",
    )
    add_load_options(serve)
    serve.set_defaults(handler=cmd_serve)


def cmd_summary(args: argparse.Namespace) -> int:
    """The summary, written as it is built: output begins within one batch's time and
    memory stays flat however many reports the directory holds."""
    con = load(args, settle=False)  # first: it imports numpy while the catalog opens
    from dashboard.analysis.summary import (
        loaded_suites,
        suite_releases,
        summary_entries,
        summary_problems,
        summary_session,
    )

    suites, release = args.suite, args.release
    known = loaded_suites(con)
    unknown = sorted(set(suites or []) - known)
    ks = {}
    if not args.json and not unknown:  # one k per suite, the pages' (the document: every k)
        from dashboard.analysis.suite_k import suite_ks

        ks = {
            suite: (chosen.k, chosen.reason)
            for suite, chosen in suite_ks(
                con, suites or sorted(known), reports_source(args)
            ).items()
        }
    out = sys.stdout
    # a mistyped suite still settles the load: every later open would replay its log
    with summary_session(con, fresh_catalog=bool(args._fresh_catalog)) as keep:
        if unknown:
            pass
        elif args.json:
            from dashboard.render.summary_json import write_summary

            write_summary(out, con, args.by, suites, release, keep)
        else:
            from dashboard.render.terminal import render_summary_lines

            rows = summary_entries(con, args.by, suites, release)
            problems = summary_problems(con, args.by, suites, release)
            labels = suite_releases(con, suites)
            for text in render_summary_lines(rows, problems, args.by, ks, labels):
                out.write(text)
    if unknown:
        raise UsageError(
            f"no suite named {unknown[0]!r} (suites: {', '.join(sorted(map(str, known))) or 'none loaded'})"
        )
    return EXIT_OK


def streamlit_flags() -> list[str]:
    """The project's .streamlit/config.toml as `--section.key value` flags."""
    import tomllib

    path = next((p for p in STREAMLIT_CONFIGS if p.is_file()), None)
    if path is None:
        return []
    flags = []
    for section, table in tomllib.loads(path.read_text(encoding="utf-8")).items():
        for key, value in table.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags += [f"--{section}.{key}", text]
    return flags


def auth_configured(cwd: Path) -> bool:
    """Whether Streamlit will find an [auth] section in a secrets file it reads."""
    import tomllib

    for path in (cwd / ".streamlit" / "secrets.toml", Path.home() / ".streamlit" / "secrets.toml"):
        try:
            if "auth" in tomllib.loads(path.read_text(encoding="utf-8")):
                return True
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
    return False


def seed(seed_text: str, catalog: str, source: ReportSource, *, anon: bool) -> None:
    """`--seed-catalog`: copy the seed into place when there is no local catalog yet;
    a seed that cannot be read or does not fit is ignored with a notice on stderr."""
    from dashboard.data.catalog.seed import seed_catalog

    print(f"relidash: {seed_catalog(seed_text, catalog, source.ident, anon=anon)}", file=sys.stderr)


def cmd_serve(args: argparse.Namespace) -> int:
    from dashboard.cli.review import reviews_dir_of
    from dashboard.data.sources.reports import catalog_location

    source = reports_source(args)
    catalog = catalog_location(source, args.catalog)
    reviews = reviews_dir_of(args)
    if args.seed_catalog:
        seed(args.seed_catalog, catalog, source, anon=args.anon)
    if args.policy is not None and not args.policy.is_file():
        raise UsageError(f"{args.policy}: no such policy file")
    command = [
        # Streamlit's command line, with TCP_NODELAY on its server's connections (launch.py)
        sys.executable, "-m", "dashboard.app.launch", "run", str(APP),
        *streamlit_flags(),
        "--server.headless", "true",
        "--server.port", str(args.port),
        "--server.address", args.host,
        "--server.enableXsrfProtection", "true",
        "--browser.gatherUsageStats", "false",
        "--runner.magicEnabled", "false",
        # A served dashboard's source does not change under it: without a watcher,
        # Streamlit neither resolves every imported module's path at each script run
        # (a noticeable part of each page visit with many modules loaded) nor polls files.
        "--server.fileWatcherType", "none",
        "--server.runOnSave", "false",
        # Streamlit runs a full garbage collection after every script run, holding the
        # interpreter lock while the run's last messages wait to be sent: with a large
        # catalog served, most of a light page's script time. Python's own collections
        # still run.
        "--runner.postScriptGC", "false",
    ]  # fmt: skip
    env = dict(os.environ)
    env.update(
        {
            "RELIDASH_REPORTS": str(source.local_root or source.label),
            "RELIDASH_ANON": "1" if args.anon else "",
            "RELIDASH_CATALOG": catalog,
            "RELIDASH_MAX_FILE_MB": str(args.max_file_mb),
            "RELIDASH_REVIEWS": str(reviews.resolve()),
            "RELIDASH_POLICY": str(args.policy.resolve()) if args.policy else "",
        }
    )
    if args.host not in LOOPBACK and not auth_configured(Path.cwd()):
        print(
            f"relidash: WARNING: serving on {args.host} with no [auth] configured in "
            ".streamlit/secrets.toml: anyone who can reach this port can read every report "
            "(README, Access)",
            file=sys.stderr,
        )
    print(f"relidash: serving {source.label} on http://{args.host}:{args.port}", file=sys.stderr)
    sys.stderr.flush()
    # Become the server process, so a signal meant for `relidash serve` reaches Streamlit.
    os.execve(sys.executable, command, env)
    return EXIT_OK  # not reached
