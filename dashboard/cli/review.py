"""`relidash review`, `signoff`, `reviews` and `verify`: a release review for a meeting, its
sign-offs, their history, and a packet's check against the reports months later.

The numbers come from dashboard/analysis/review.py, the function behind the Review page,
so what is signed is what was shown. Sign-offs go to the reviews directory (`--reviews`,
default `$XDG_DATA_HOME/relidash/reviews/`), never into the reports directory.

Exit codes: 0 done (verify: every digest and number holds); 1 verify found a changed file
or a moved number; 2 a usage error, an unknown suite or release, an unusable policy or
reviews directory, or a file that is not a relidash packet.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
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
    reports_source,
)
from dashboard.data.sources import SourceError

if TYPE_CHECKING:
    from dashboard.data.sources.reports import ReportSource

DECISIONS = ("approved", "conditional", "rejected")  # analysis.review.DECISIONS, parse-time


def add_reviews_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reviews",
        type=Path,
        metavar="RDIR",
        help="directory of sign-off records (default: $XDG_DATA_HOME/relidash/reviews)",
    )


def _review_target(parser: argparse.ArgumentParser) -> None:
    add_source_argument(parser)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--release", default="latest", help="default: the latest")
    parser.add_argument("--base", help="the release compared against (default: the one before)")
    parser.add_argument(
        "--k", type=int, help="k for pass@k / pass^k (default: the suite's k, as on the pages)"
    )
    parser.add_argument("--policy", type=Path, metavar="FILE.toml", help="the gate policy")
    add_reviews_option(parser)
    add_policy_option(parser)


def register(subparsers: Any) -> None:
    review = subparsers.add_parser(
        "review",
        help="write a release's review packet: one self-contained HTML file",
        description="The release review (verdict, headline with CIs, paired change, ledger, "
        "lottery cases, provenance, sign-offs) as one HTML file that opens offline.",
    )
    _review_target(review)
    review.add_argument("--out", type=Path, required=True, metavar="FILE.html")
    review.add_argument("--pdf", type=Path, metavar="FILE.pdf", help="also print it to PDF")
    add_load_options(review)
    review.set_defaults(handler=cmd_review, walk_ahead=True)

    signoff = subparsers.add_parser(
        "signoff", help="record a release-review decision bound to its evidence"
    )
    _review_target(signoff)
    signoff.add_argument("--decision", required=True, choices=DECISIONS)
    signoff.add_argument("--by", required=True, metavar="NAME", help="who decides")
    signoff.add_argument("--comment", default="", metavar="TEXT")
    add_load_options(signoff)
    signoff.set_defaults(handler=cmd_signoff, walk_ahead=True)

    reviews = subparsers.add_parser(
        "reviews", help="list sign-offs, newest first, with their evidence status now"
    )
    add_source_argument(reviews)
    reviews.add_argument("--suite")
    reviews.add_argument("--release")
    reviews.add_argument("--decision", choices=DECISIONS)
    reviews.add_argument("--json", action="store_true", help="print one JSON document")
    add_reviews_option(reviews)
    add_load_options(reviews)
    reviews.set_defaults(handler=cmd_reviews)

    verify = subparsers.add_parser(
        "verify", help="check a review packet's digests and numbers against the reports"
    )
    verify.add_argument("packet", type=Path, metavar="FILE.html")
    add_source_argument(verify)
    verify.add_argument("--policy", type=Path, metavar="FILE.toml", help="the policy file now")
    add_load_options(verify)
    verify.set_defaults(handler=cmd_verify, walk_ahead=True)


def reviews_dir_of(args: argparse.Namespace) -> Path:
    from dashboard.data.signoffs import ReviewsDirError, check_reviews_dir, default_reviews_dir

    chosen = args.reviews if args.reviews is not None else default_reviews_dir()
    try:
        # a bucket holds no local directory a reviews directory could be inside
        check_reviews_dir(chosen, reports_source(args).local_root)
    except ReviewsDirError as exc:
        raise UsageError(str(exc)) from exc
    return Path(chosen)


def build(args: argparse.Namespace, con: Any) -> Any:
    """The review a command line asks for; usage errors for bad names, k or policy."""
    from dashboard.analysis.policy import PolicyError
    from dashboard.analysis.releases import UnknownName
    from dashboard.analysis.review import build_review

    try:
        return build_review(
            con,
            args.suite,
            args.release,
            args.base,
            args.k,
            policy_file=args.policy,
            reports_dir=reports_source(args),
            count_agent_errors=args.count_agent_errors,
        )
    except (UnknownName, PolicyError, ValueError) as exc:
        raise UsageError(str(exc)) from exc


def _outside_reports(path: Path, source: ReportSource) -> Path:
    if source.holds(path):
        raise UsageError(f"{path}: inside the reports directory; relidash never writes there")
    return path


def _digests_now(source: ReportSource, records: list[dict[str, Any]]) -> Any:
    """The evidence digests now; a source that cannot be read is a usage error (exit 2)."""
    from dashboard.analysis.review_history import digests_now

    try:
        return digests_now(source, records)
    except SourceError as exc:
        raise UsageError(str(exc)) from exc


def packet_policy_file(packet: dict[str, Any], reports: ReportSource) -> Path | None:
    """The policy file a packet's review was judged by, to judge it again: None when it was
    the reports directory's relidash.toml or the default rule (found again from DIR)."""
    from dashboard.analysis.policy import CONFIG_NAME, DEFAULT_POLICY_SOURCE

    named = str(packet["policy"]["source"])
    source = Path(named)
    if named == DEFAULT_POLICY_SOURCE or (not source.is_file() and source.name == CONFIG_NAME):
        return None  # the default rule, or the relidash.toml of a directory since moved
    if not source.is_file():
        raise UsageError(f"the packet's policy file {named} is gone; give it with --policy FILE")
    if reports.local_root is not None:
        config = reports.local_root / CONFIG_NAME
        if config.is_file() and source.resolve() == config.resolve():
            return None
    return source


def write_file(path: Path, data: bytes) -> None:
    """Write whole or not at all: a temp file beside it, then rename (the temp file is
    removed if the rename fails). Readable as any new file is (the umask decides)."""
    temp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    except OSError as exc:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise UsageError(f"{path}: cannot be written ({exc})") from exc


def cmd_review(args: argparse.Namespace) -> int:
    from dashboard.analysis.releases import release_table
    from dashboard.analysis.review import utc_now
    from dashboard.analysis.review_history import review_history
    from dashboard.analysis.summary import report_overview
    from dashboard.render.packet import render_packet

    source = reports_source(args)
    _outside_reports(args.out, source)
    if args.pdf is not None:
        _outside_reports(args.pdf, source)
    reviews = reviews_dir_of(args)
    con = load(args)
    review = build(args, con)
    history = release_table(con, report_overview(con), review.suite, review.k)
    try:
        entries, _ = review_history(reviews, source, suite=review.suite, release=review.release)
    except SourceError as exc:
        raise UsageError(str(exc)) from exc
    html = render_packet(
        review,
        signoffs=[dict(e.record) for e in entries],
        history=history,
        generated_at=utc_now(),
    )
    write_file(args.out, html.encode("utf-8"))
    print(f"relidash: wrote the review packet {args.out} ({review.verdict})", file=sys.stderr)
    if args.pdf is not None:
        print_pdf(args.out, args.pdf)
        print(f"relidash: wrote {args.pdf}", file=sys.stderr)
    return EXIT_OK


def print_pdf(html: Path, pdf: Path) -> None:
    """Print the packet to PDF with headless Chromium (its print stylesheet applies)."""
    import shutil
    import subprocess

    browser = next(
        (
            found
            for name in ("chromium", "chromium-browser", "google-chrome")
            if (found := shutil.which(name))
        ),
        None,
    )
    if browser is None:
        raise UsageError(
            "--pdf needs Chromium (Debian: apt-get install chromium); the HTML was written"
        )
    with tempfile.TemporaryDirectory() as profile:
        done = subprocess.run(
            [
                browser, "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--no-first-run", f"--user-data-dir={profile}",
                "--no-pdf-header-footer", f"--print-to-pdf={pdf.resolve()}",
                html.resolve().as_uri(),
            ],
            capture_output=True,
            timeout=120,
            check=False,
        )  # fmt: skip
    if done.returncode != 0 or not pdf.is_file():
        raise UsageError(f"{pdf}: Chromium could not print the packet ({done.stderr[-300:]!r})")


def cmd_signoff(args: argparse.Namespace) -> int:
    from dashboard.analysis.review import signoff_record
    from dashboard.data.signoffs import ReviewsDirError, write_signoff

    reviews = reviews_dir_of(args)
    con = load(args)
    review = build(args, con)
    try:
        record = signoff_record(review, decision=args.decision, by=args.by, comment=args.comment)
        path = write_signoff(reviews, record)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except (ReviewsDirError, OSError) as exc:
        raise UsageError(
            f"{exc}; the sign-off was not recorded ({args.decision} by {args.by}"
            + (f": {args.comment}" if args.comment else "")
            + ")"
        ) from exc
    print(
        f"relidash: {args.decision} {review.suite} {review.release} by {record['by']} "
        f"(identity not verified), verdict {review.verdict}; recorded in {path}",
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_reviews(args: argparse.Namespace) -> int:
    from dashboard.analysis.review_history import review_history
    from dashboard.render.formatting import one_line

    reviews = reviews_dir_of(args)
    try:
        entries, problems = review_history(
            reviews,
            reports_source(args),
            suite=args.suite,
            release=args.release,
            decision=args.decision,
        )
    except SourceError as exc:
        raise UsageError(str(exc)) from exc
    if args.json:
        document = {
            "reviews": [e.as_json() for e in entries],
            "problems": [{"file": p.file, "reason": p.reason} for p in problems],
        }
        json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return EXIT_OK
    if not entries:
        print(f"No sign-offs in {reviews}.")
    for e in entries:
        r = e.record
        who = f"{r.get('by')}{'' if r.get('identity_verified') else ' (unverified)'}"
        print(
            f"{r.get('time')}  {one_line(str(r.get('suite')), 30)} {one_line(str(r.get('release')), 20)}"
            f"  {r.get('decision'):<11} by {one_line(who, 40)}  evidence {e.evidence.status}"
        )
        if r.get("comment"):
            print(f"    {one_line(str(r.get('comment')), 100)}")
        for f in e.evidence.changed_files:
            print(f"    {f['path']}: {f['old']} -> {f['new'] or 'missing'}")
    for p in problems:
        print(f"relidash: problem: {p.file}: {p.reason}", file=sys.stderr)
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from dashboard.analysis.review import build_review, moved_numbers, review_json
    from dashboard.render.packet import read_packet_block

    try:
        text = args.packet.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.packet}: cannot be read ({exc})") from exc
    block = read_packet_block(text)
    if block is None:
        raise UsageError(f"{args.packet}: not a relidash review packet (no review block)")
    packet = block["review"]
    source = reports_source(args)
    con = load(args)  # lists the source first: the digests below are of the objects now
    now = _digests_now(source, [packet])
    changed = [e for e in packet.get("evidence", []) if now.get(e["path"]) != e["sha256"]]
    policy_file = args.policy if args.policy is not None else packet_policy_file(packet, source)
    from dashboard.analysis.policy import PolicyError
    from dashboard.analysis.releases import UnknownName

    try:
        fresh = review_json(
            build_review(
                con,
                packet["suite"],
                packet["release"],
                packet["base"],
                packet["k"],
                policy_file=policy_file,
                reports_dir=source,
                count_agent_errors=bool(packet["count_agent_errors"]),
            )
        )
        moved = moved_numbers(packet, fresh)
    except (UnknownName, PolicyError, ValueError) as exc:
        moved = [f"the review cannot be recomputed: {exc}"]
    for e in changed:
        new = now.get(e["path"])
        print(f"changed: {e['path']}: {e['sha256']} -> {new or 'missing'}")
    for line in moved:
        print(f"moved: {line}")
    if changed or moved:
        print(
            f"relidash verify: {args.packet} does NOT hold: {len(changed)} file(s) changed, "
            f"{len(moved)} number(s) moved",
            file=sys.stderr,
        )
        return EXIT_FAILED
    print(
        f"relidash verify: {args.packet} holds: {len(packet.get('evidence', []))} file digests "
        f"and every number match {source.label}",
        file=sys.stderr,
    )
    return EXIT_OK
