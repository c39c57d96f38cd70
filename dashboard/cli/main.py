"""The `relidash` command: one parser, one subcommand group per module of this folder.

Usage errors and a missing directory exit with status 2; Ctrl-C with 130.
"""

from __future__ import annotations

import argparse
import sys

import duckdb

from dashboard.cli import ci, reports, review, simulate
from dashboard.cli.common import EXIT_OK, EXIT_USAGE, UsageError
from dashboard.data.catalog import CatalogError

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


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
    except (KeyboardInterrupt, duckdb.InterruptException, RuntimeError) as exc:
        # Ctrl-C: DuckDB stops the running statement and raises (from a numpy fetch, a
        # RuntimeError saying so); a load stopped midway is redone at the next one
        if not isinstance(exc, KeyboardInterrupt) and "interrupted" not in str(exc).lower():
            raise
        print("relidash: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relidash",
        description="Reliability dashboard for multivon-eval reports: pass@k, pass^k, lottery cases.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    reports.register(sub)
    ci.register(sub)
    review.register(sub)
    simulate.register(sub)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
