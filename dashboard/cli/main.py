"""The `relidash` command: one parser, one subcommand group per module of this folder.

Usage errors and a missing directory exit with status 2.
"""

from __future__ import annotations

import argparse
import sys

from dashboard.cli import ci, reports, review, simulate
from dashboard.cli.common import EXIT_OK, EXIT_USAGE, UsageError
from dashboard.data.catalog import CatalogError


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
    reports.register(sub)
    ci.register(sub)
    review.register(sub)
    simulate.register(sub)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
