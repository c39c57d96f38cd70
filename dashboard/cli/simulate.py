"""`relidash simulate`: write simulated multivon-eval reports for benchmarks and demos.

Argument parsing and exit codes only; the generator is dashboard/simulate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from dashboard.simulate import DEFAULTS, FORMATS


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    d = DEFAULTS
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="directory to write reports into"
    )
    parser.add_argument(
        "--suites", type=int, default=d["suites"], metavar="N", help=f"default {d['suites']}"
    )
    parser.add_argument(
        "--releases", type=int, default=d["releases"], metavar="N", help=f"default {d['releases']}"
    )
    parser.add_argument(
        "--cases",
        type=int,
        default=d["cases"],
        metavar="N",
        help=f"cases per suite (default {d['cases']})",
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=d["runs"],
        metavar="N",
        help=f"runs per case (default {d['runs']})",
    )
    parser.add_argument(
        "--p",
        type=float,
        default=d["p"],
        help=f"pass probability in the first release (default {d['p']})",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=d["seed"],
        metavar="S",
        help=f"mulberry32 seed (default {d['seed']})",
    )
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default=d["format"],
        help=f"multivon-eval saved format (default {d['format']})",
    )


def register(subparsers: Any) -> None:
    """Add `relidash simulate` to the CLI's subcommands."""
    parser = subparsers.add_parser(
        "simulate",
        help="write simulated multivon-eval reports (benchmarks, demos)",
        description="Write report files in multivon-eval's saved formats from a seeded "
        "simulated agent (mulberry32: one draw per trial, in task order, pass when below p).",
    )
    _add_arguments(parser)
    parser.set_defaults(handler=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    from dashboard.simulate import SimulateError, simulate_reports  # the generator: not at parse

    try:
        paths = simulate_reports(
            args.out, args.suites, args.releases, args.cases, args.runs, args.p, args.seed, args.fmt
        )
    except (SimulateError, OSError) as exc:
        print(f"relidash: {exc}", file=sys.stderr)
        return 2
    size = sum(path.stat().st_size for path in paths)
    print(
        f"relidash: wrote {len(paths)} report files ({args.suites} suites x {args.releases} "
        f"releases, {args.cases} cases x {args.runs} runs, format {args.fmt}, "
        f"{size / 1e6:.1f} MB) to {args.out}",
        file=sys.stderr,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relidash simulate")
    _add_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_simulate(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
