"""`relidash plan`: how many cases and trials a claim about one release's pass^k needs.

The plan comes from dashboard/analysis/planning.py (simulations of the interval relidash
reports, on the release's own cases); this module reads arguments, prints the designs
tried and sets the exit code: 0 when a design reaches the goal, 1 when none of those
tried does, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from dashboard.cli.ci import LATEST
from dashboard.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    add_load_options,
    add_policy_option,
    add_source_argument,
    load,
)

DEFAULT_HALF_WIDTH = 0.05


def register(subparsers: Any) -> None:
    plan = subparsers.add_parser(
        "plan",
        help="how many cases and trials a pass^k claim needs",
        description=(
            "From one release's own per-case pass rates, simulate designs (cases x trials "
            "per case) with relidash's estimator and interval, and print the cheapest that "
            "gives a pass^k interval of half-width H (default "
            f"{DEFAULT_HALF_WIDTH}) in 80%% of runs, or 80%% power to show a drop of D."
        ),
    )
    add_source_argument(plan)
    plan.add_argument("--suite", required=True, metavar="S", help="the suite")
    plan.add_argument(
        "--release", default=LATEST, metavar="R", help="the release (default: latest)"
    )
    plan.add_argument("--k", type=int, default=4, help="k of pass^k (default 4)")
    goal = plan.add_mutually_exclusive_group()
    goal.add_argument("--half-width", type=float, metavar="H", help="wanted CI half-width")
    goal.add_argument("--detect-drop", type=float, metavar="D", help="a drop to be able to show")
    add_policy_option(plan)
    add_load_options(plan)
    plan.set_defaults(handler=cmd_plan, walk_ahead=True)


def cmd_plan(args: argparse.Namespace) -> int:
    from dashboard.analysis.planning import plan_trials
    from dashboard.analysis.releases import UnknownName
    from dashboard.render.plan_report import plan_text

    if args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    half_width = args.half_width
    if half_width is None and args.detect_drop is None:
        half_width = DEFAULT_HALF_WIDTH
    for flag, value in (("--half-width", half_width), ("--detect-drop", args.detect_drop)):
        if value is not None and not 0.0 < value <= 1.0:
            raise UsageError(f"{flag} must be in (0, 1], got {value}")
    con = load(args)
    print("relidash: simulating designs…", file=sys.stderr, flush=True)
    try:
        plan = plan_trials(
            con,
            args.suite,
            args.release,
            args.k,
            half_width=half_width,
            detect_drop=args.detect_drop,
            count_agent_errors=args.count_agent_errors,
        )
    except UnknownName as exc:
        raise UsageError(str(exc)) from exc
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(plan_text(plan))
    return EXIT_OK if plan.recommended is not None else EXIT_FAILED
