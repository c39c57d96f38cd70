"""`relidash gate` and `relidash compare`: the subcommands a CI pipeline calls.

The verdicts and deltas come from dashboard/analysis (gating, comparing), the functions
the dashboard's pages use, so CI and the page agree; dashboard/render formats them. Load
problems go to stderr and never stop a command; `gate --strict` turns a problem in the
gated release's file into a failure.

Exit codes: 0 every rule passed (gate) or the comparison ran (compare); 1 a rule
FAILED, was UNDECIDED or UNKNOWN; 2 a usage error, a missing directory, a bad policy file, or an
unknown suite, release or slice.

The analysis modules are imported inside the commands: every `relidash` start builds
this parser, and pandas is not needed for that.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    add_load_options,
    add_policy_option,
    add_source_argument,
    load,
    report_problems,
)

if TYPE_CHECKING:
    from dashboard.analysis.policy import GateRule

# analysis.releases.LATEST and stats.METRICS; spelled here so building the parser imports
# no pandas or numpy (tests/cli/test_cli.py checks they agree).
LATEST = "latest"
METRIC_PASS_HAT_K = "pass^k"
METRICS = ("pass@k", METRIC_PASS_HAT_K)


def register(subparsers: Any) -> None:
    """Add the `gate` and `compare` subcommands to `relidash`'s subparsers."""
    gate = subparsers.add_parser(
        "gate",
        help="fail a CI job when a release misses its pass^k / pass@k rules",
        description=(
            "Check one release of a suite against reliability rules. A rule passes when the "
            "lower bound of the metric's 95% CI (--min-ci-low, as multivon-eval's "
            "assert_pass_hat_k) or its point estimate (--min-value) reaches the threshold, "
            "or when the paired CI of its change against a base release stays above "
            "-X (--max-drop X); it fails when the CI lies wholly on the wrong side, and is "
            "UNDECIDED when the CI straddles the threshold. UNDECIDED and UNKNOWN fail. "
            "Where the reported CI covers too little, a verdict reads it widened (to the BCa "
            "interval, the Wilson interval at 20 cases or fewer, Student's t for a paired "
            "change) and says 'widened CI'. "
            "Exit 0 when every rule passes, 1 otherwise, 2 on a usage error."
        ),
    )
    add_source_argument(gate)
    gate.add_argument("--suite", required=True, metavar="S", help="the suite to gate")
    gate.add_argument(
        "--release", default=LATEST, metavar="R", help="the release to gate (default: latest)"
    )
    gate.add_argument("--policy", type=Path, metavar="FILE.toml", help="rules from a file")
    gate.add_argument("--k", type=int, help="the k of a single rule")
    gate.add_argument(
        "--metric",
        choices=METRICS,
        help=f"the metric of a single rule (default {METRIC_PASS_HAT_K})",
    )
    threshold = gate.add_mutually_exclusive_group()
    threshold.add_argument(
        "--min-ci-low", type=float, metavar="X", help="required lower bound of the 95%% CI"
    )
    threshold.add_argument("--min-value", type=float, metavar="X", help="required point estimate")
    threshold.add_argument(
        "--max-drop",
        type=float,
        metavar="X",
        help="largest drop allowed against the base release (paired 95%% CI)",
    )
    threshold.add_argument(
        "--min-case-rate",
        type=float,
        metavar="X",
        help="every evaluated case passes at least this share of its trials",
    )
    gate.add_argument(
        "--base",
        metavar="R",
        help="the base release of --max-drop and of max_drop rules without their own "
        "(default: the release before)",
    )
    gate.add_argument("--slice", metavar="TAG", help="only cases with this tag (risk_tier:safety)")
    add_policy_option(gate)
    gate.add_argument(
        "--strict", action="store_true", help="a load problem in the gated release's file fails"
    )
    gate.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="text lines, or Markdown for $GITHUB_STEP_SUMMARY",
    )
    gate.add_argument("--junit", type=Path, metavar="PATH", help="also write JUnit XML here")
    add_load_options(gate)
    gate.set_defaults(handler=cmd_gate, walk_ahead=True)

    compare = subparsers.add_parser(
        "compare",
        help="compare two releases case by case, with paired CIs and the case ledger",
        description=(
            "Match the cases of two releases of a suite (case_id, else input text) and print "
            "Δpass@1, Δpass@k and Δpass^k with a 95% paired cluster-bootstrap CI, and how "
            "each case moved: regressed, fixed, newly flaky, stabilised, still failing, ..."
        ),
    )
    add_source_argument(compare)
    compare.add_argument("--suite", required=True, metavar="S", help="the suite to compare")
    compare.add_argument("--base", required=True, metavar="R1", help="the older release")
    compare.add_argument("--head", required=True, metavar="R2", help="the newer release")
    compare.add_argument(
        "--k", type=int, help="k for Δpass@k and Δpass^k (default: the most runs every pair has)"
    )
    compare.add_argument("--slice", metavar="TAG", help="only cases with this tag")
    output = compare.add_mutually_exclusive_group()
    output.add_argument("--json", action="store_true", help="print one JSON document")
    output.add_argument(
        "--format",
        choices=("text", "github"),
        default="text",
        help="text lines, or Markdown for $GITHUB_STEP_SUMMARY",
    )
    add_policy_option(compare)
    add_load_options(compare)
    compare.set_defaults(handler=cmd_compare, walk_ahead=True)


THRESHOLD_FLAGS = ("--min-ci-low", "--min-value", "--max-drop", "--min-case-rate")


def _single_rule(args: argparse.Namespace) -> GateRule:
    from dashboard.analysis.policy import make_rule

    values = {flag: getattr(args, flag[2:].replace("-", "_")) for flag in THRESHOLD_FLAGS}
    given = {flag: value for flag, value in values.items() if value is not None}
    if not given or (args.k is None and "--min-case-rate" not in given):
        raise UsageError(
            "gate needs --k K with --min-ci-low X, --min-value X or --max-drop X, "
            "or --min-case-rate X, or --policy FILE.toml"
        )
    if args.k is not None and args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    for flag, value in given.items():
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"{flag} must be in [0, 1], got {value}")
    try:
        return make_rule(
            metric=args.metric or METRIC_PASS_HAT_K,
            k=args.k,
            min_ci_low=args.min_ci_low,
            min_value=args.min_value,
            max_drop=args.max_drop,
            min_case_rate=args.min_case_rate,
            slice=args.slice,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def gate_rules(args: argparse.Namespace) -> list[GateRule]:
    """The rules a `gate` command line asks for: its policy file, or its one rule."""
    from dashboard.analysis.policy import PolicyError, read_policy

    if args.policy is None:
        return [_single_rule(args)]
    given = [
        flag
        for flag, value in (
            ("--k", args.k),
            ("--metric", args.metric),
            ("--min-ci-low", args.min_ci_low),
            ("--min-value", args.min_value),
            ("--max-drop", args.max_drop),
            ("--min-case-rate", args.min_case_rate),
            ("--slice", args.slice),
        )
        if value is not None
    ]
    if given:
        raise UsageError(f"--policy holds the rules; leave out {', '.join(given)}")
    try:
        return read_policy(args.policy)
    except PolicyError as exc:
        raise UsageError(str(exc)) from exc


def cmd_gate(args: argparse.Namespace) -> int:
    from dashboard.analysis.gating import run_gate
    from dashboard.analysis.releases import UnknownName
    from dashboard.render import gate_report
    from dashboard.render.visible import visible

    rules = gate_rules(args)
    con = load(args)
    try:
        report = run_gate(
            con,
            args.suite,
            args.release,
            rules,
            count_agent_errors=args.count_agent_errors,
            strict=args.strict,
            base=args.base,
        )
    except UnknownName as exc:
        raise UsageError(str(exc)) from exc
    report_problems(con, {report.file: "gated release"})
    if report.problems and not args.strict:
        sys.stderr.write(
            f"relidash: {len(report.problems)} problem(s) in the gated release's file "
            f"{visible(report.file)} do not affect the verdict; --strict makes them fail the "
            "gate\n"
        )
    if args.format == "github":
        sys.stdout.write(gate_report.render_markdown(report))
    else:
        sys.stdout.write(gate_report.render_text(report))
    if args.junit is not None:
        try:
            args.junit.parent.mkdir(parents=True, exist_ok=True)
            args.junit.write_text(gate_report.render_junit(report), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{args.junit}: cannot write the JUnit file ({exc})") from exc
    return EXIT_OK if report.passed else EXIT_FAILED


def cmd_compare(args: argparse.Namespace) -> int:
    from dashboard.analysis.comparing import compare_releases, comparison_json
    from dashboard.analysis.releases import UnknownName
    from dashboard.render.compare_report import render_markdown, render_text

    if args.k is not None and args.k < 1:
        raise UsageError(f"--k must be at least 1, got {args.k}")
    con = load(args)
    try:
        comparison = compare_releases(
            con,
            args.suite,
            args.base,
            args.head,
            k=args.k,
            tag=args.slice,
            count_agent_errors=args.count_agent_errors,
        )
    except UnknownName as exc:
        raise UsageError(str(exc)) from exc
    report_problems(con, {comparison.base_file: "base", comparison.head_file: "head"})
    if args.json:
        json.dump(comparison_json(comparison), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    elif args.format == "github":
        sys.stdout.write(render_markdown(comparison))
    else:
        sys.stdout.write(render_text(comparison))
    return EXIT_OK
