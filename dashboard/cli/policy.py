"""`relidash policy register POLICY.toml`: record a policy's digest and time in the ledger,
so a later review can show its criteria were fixed before its results were seen.

The registration is a record in the reviews directory's chain (data.signoffs writes it,
data.ledger chains it), signed like a sign-off with `--sign-key`. The policy file itself
is read, checked to be a policy, and never written.

Exit codes: 0 registered; 2 a usage error (no such file, not a policy, an unusable
reviews directory or key).
"""

from __future__ import annotations

import argparse
import getpass
import hashlib
import sys
from pathlib import Path
from typing import Any

from dashboard.cli.common import EXIT_OK, UsageError
from dashboard.cli.signing import add_sign_key_option, signer


def register(subparsers: Any) -> None:
    policy = subparsers.add_parser("policy", help="register a gate policy before its results")
    actions = policy.add_subparsers(dest="policy_command", required=True)
    reg = actions.add_parser(
        "register",
        help="record the policy's SHA-256 and the time in the ledger",
        description="Record POLICY.toml's SHA-256 and the time in the reviews directory's "
        "ledger. A review of a release whose first report was written after this time says "
        "'criteria fixed before results'.",
    )
    reg.add_argument("policy", type=Path, metavar="POLICY.toml")
    reg.add_argument("--suite", help="the suite it is registered for (default: any)")
    reg.add_argument("--by", help="who registers it (default: the login name)")
    reg.add_argument(
        "--reviews",
        type=Path,
        metavar="RDIR",
        help="directory of sign-off records (default: $XDG_DATA_HOME/relidash/reviews)",
    )
    add_sign_key_option(reg)
    reg.set_defaults(handler=cmd_register)


def cmd_register(args: argparse.Namespace) -> int:
    from dashboard.analysis.policy import CONFIG_NAME, PolicyError, parse_policy, rules_for
    from dashboard.analysis.review import utc_now
    from dashboard.data.records.schema import REGISTRATION
    from dashboard.data.records.signoffs import ReviewsDirError, default_reviews_dir, write_signoff
    from dashboard.render.visible import visible

    try:
        data = args.policy.read_bytes()
        rules = parse_policy(
            data.decode("utf-8"), str(args.policy), config=args.policy.name == CONFIG_NAME
        )
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.policy}: cannot be read ({exc})") from exc
    except PolicyError as exc:
        raise UsageError(str(exc)) from exc
    if args.suite is not None and not rules_for(rules, args.suite):
        raise UsageError(f"{args.policy}: defines no rule for suite {args.suite!r}")
    sign = signer(args)
    reviews = args.reviews if args.reviews is not None else default_reviews_dir()
    digest = hashlib.sha256(data).hexdigest()
    record = {
        "kind": REGISTRATION,
        "policy_sha256": digest,
        "policy": str(args.policy.resolve()),
        "suite": args.suite,
        "by": args.by or getpass.getuser(),
        "time": utc_now(),
    }
    try:
        path = write_signoff(reviews, record, sign=sign)
    except (ReviewsDirError, OSError, ValueError) as exc:
        raise UsageError(f"{exc}; the policy was not registered") from exc
    print(
        f"relidash: registered {visible(args.policy)} (SHA-256 {digest}) at {record['time']}"
        f"{' for suite ' + visible(args.suite) if args.suite else ''}; recorded in "
        f"{visible(path)}" + (" (signed)" if sign else ""),
        file=sys.stderr,
    )
    return EXIT_OK
