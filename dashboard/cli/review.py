"""`relidash review`, `signoff`, `reviews` and `verify`: a release review for a meeting, its
sign-offs, their history, and a packet's check against the reports months later.

The numbers come from dashboard/analysis/review.py, the function behind the Review page,
so what is signed is what was shown. Sign-offs go to the reviews directory (`--reviews`,
default `$XDG_DATA_HOME/relidash/reviews/`), never into the reports directory.

Exit codes: 0 done (verify: the packet holds); 1 verify found that it does not hold (a
changed file, a moved number, an edited packet), or `reviews --strict` an approved release
whose evidence changed; 2 a usage error, an unknown suite or release, an unusable policy
or reviews directory, a sign-off already recorded moments before, or a file that is not a
readable relidash packet (VERIFY_EXIT_CODES, shown by `relidash verify --help`).

Every name, path and reason printed goes through render.visible: a suite name or a --by
holding control characters is shown escaped, never acted on by the terminal.
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
    EXIT_USAGE,
    UsageError,
    add_load_options,
    add_policy_option,
    add_source_argument,
    load,
    reports_source,
)
from dashboard.cli.signing import (
    add_allowed_signers_option,
    add_sign_key_option,
    allowed_signers,
    config_of,
    integrity_now,
    ledger_head_now,
    print_ledger_check,
    review_criteria,
    signer,
)
from dashboard.data.sources import SourceError

if TYPE_CHECKING:
    from dashboard.data.sources.reports import ReportSource

DECISIONS = ("approved", "conditional", "rejected")  # analysis.review.DECISIONS, parse-time
VERIFY_EXIT_CODES = (
    (EXIT_OK, "the packet holds"),
    (EXIT_FAILED, "it does not hold: the reports, the policy or the packet changed"),
    (EXIT_USAGE, "it cannot be checked: not a packet, a damaged review block, an\n"
     "     unreadable source, or sign-offs shown and no reviews directory to check them in"),
)  # fmt: skip
VERIFY_EXIT_HELP = "exit status:\n" + "\n".join(
    f"  {code}  {meaning}" for code, meaning in VERIFY_EXIT_CODES
)


def add_reviews_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--reviews",
        type=Path,
        metavar="RDIR",
        help="directory of sign-off records (default: $XDG_DATA_HOME/relidash/reviews)",
    )


def _review_target(parser: argparse.ArgumentParser) -> None:
    add_source_argument(parser)
    parser.add_argument("--suite", required=True, metavar="S")
    parser.add_argument("--release", default="latest", metavar="R", help="default: the latest")
    parser.add_argument(
        "--base", metavar="B", help="the release compared against (default: the one before)"
    )
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
    review.add_argument(
        "--attestation",
        type=Path,
        metavar="FILE.json",
        help="also write an in-toto Statement (test-result predicate) of the review",
    )
    add_allowed_signers_option(review)
    add_load_options(review)
    review.set_defaults(handler=cmd_review, walk_ahead=True)

    signoff = subparsers.add_parser(
        "signoff", help="record a release-review decision bound to its evidence"
    )
    _review_target(signoff)
    signoff.add_argument("--decision", required=True, choices=DECISIONS)
    signoff.add_argument("--by", required=True, metavar="NAME", help="who decides")
    signoff.add_argument("--comment", default="", metavar="TEXT")
    add_sign_key_option(signoff)
    add_load_options(signoff)
    signoff.set_defaults(handler=cmd_signoff, walk_ahead=True)

    reviews = subparsers.add_parser(
        "reviews",
        help="list sign-offs, newest first, with their evidence status now",
        description="Every sign-off in the reviews directory, newest first. With SRC, each "
        "record's evidence is checked against the reports now (unchanged, changed, missing); "
        "without it, the records alone are listed (evidence not checked). Files that are not "
        "sign-off records are listed as problems.",
    )
    add_source_argument(reviews, nargs="?")
    reviews.add_argument("--suite", metavar="S")
    reviews.add_argument("--release", metavar="R")
    reviews.add_argument("--decision", choices=DECISIONS)
    reviews.add_argument("--json", action="store_true", help="print one JSON document")
    reviews.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a listed approval's evidence has changed or gone since (needs SRC)",
    )
    reviews.add_argument(
        "--check",
        action="store_true",
        help="walk the ledger: every record's link to the one before it and every signature; "
        "exit 1 naming the record that breaks it",
    )
    add_allowed_signers_option(reviews)
    add_reviews_option(reviews)
    add_load_options(reviews)
    reviews.set_defaults(handler=cmd_reviews)

    verify = subparsers.add_parser(
        "verify",
        help="check a review packet against the reports and the reviews directory",
        description="A packet holds when its verdict and numbers are a fresh review's of the\n"
        "same release, its evidence is exactly that release's (and its base's) report\n"
        "files with the same bytes, every sign-off it shows is a record in the reviews\n"
        "directory, and what it shows is what relidash renders from that data.",
        epilog=VERIFY_EXIT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("packet", type=Path, metavar="FILE.html")
    add_source_argument(verify)
    verify.add_argument("--policy", type=Path, metavar="FILE.toml", help="the policy file now")
    add_reviews_option(verify)
    verify.add_argument(
        "--verbose", action="store_true", help="also list file paths, digests and raw keys"
    )
    add_allowed_signers_option(verify)
    add_load_options(verify)
    verify.set_defaults(handler=cmd_verify, walk_ahead=True)


def reviews_dir_of(args: argparse.Namespace) -> Path:
    from dashboard.data.records.signoffs import (
        ReviewsDirError,
        check_reviews_dir,
        default_reviews_dir,
    )

    chosen = args.reviews if args.reviews is not None else default_reviews_dir()
    if args.directory is None:  # `reviews` alone: no reports directory to keep out of
        return Path(chosen)
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
    from dashboard.analysis.attestation import statement
    from dashboard.analysis.evidence_integrity import integrity_json
    from dashboard.analysis.review import utc_now
    from dashboard.analysis.review_history import packet_signatures
    from dashboard.render.packet import render_packet
    from dashboard.render.visible import visible

    source = reports_source(args)
    _outside_reports(args.out, source)
    for extra in (args.pdf, args.attestation):
        if extra is not None:
            _outside_reports(extra, source)
    reviews = reviews_dir_of(args)
    signers = allowed_signers(args, config_of(args))
    con = load(args)
    review = build(args, con)
    history = packet_history(con, review)
    entries, _ = _history(
        reviews, source, suite=review.suite, release=review.release, allowed_signers=signers
    )
    criteria = review_criteria(con, reviews, review)
    integrity = integrity_now(review, source)
    html = render_packet(
        review,
        signoffs=[dict(e.record) for e in entries],
        history=history,
        generated_at=utc_now(),
        signatures=packet_signatures(entries),
        criteria=criteria.as_json(),
        integrity=integrity_json(integrity),
        ledger_head=ledger_head_now(reviews),
    )
    write_file(args.out, html.encode("utf-8"))
    print(f"relidash: wrote the review packet {args.out} ({review.verdict})", file=sys.stderr)
    print(f"relidash: {visible(criteria.sentence())}", file=sys.stderr)
    for f in integrity:
        if f.edited:
            print(f"relidash: warning: {visible(f.sentence())}", file=sys.stderr)
    if args.attestation is not None:
        document = statement(review, criteria.as_json())
        write_file(args.attestation, (json.dumps(document, indent=2) + "\n").encode("utf-8"))
        print(f"relidash: wrote the in-toto statement {visible(args.attestation)}", file=sys.stderr)
    matching = review.comparison.matching_note if review.comparison is not None else None
    for note in (review.base_note, matching):
        if note:
            print(f"relidash: {note}", file=sys.stderr)
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


def _history(reviews: Path, source: ReportSource | None, **filters: Any) -> Any:
    """review_history, with an unlistable reviews directory or source a usage error."""
    from dashboard.analysis.review_history import review_history
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        return review_history(reviews, source, **filters)
    except (SourceError, ReviewsDirError) as exc:
        raise UsageError(str(exc)) from exc


def cmd_signoff(args: argparse.Namespace) -> int:
    from dashboard.analysis.review import signoff_record
    from dashboard.data.records.signoffs import AlreadyRecorded, ReviewsDirError, write_signoff
    from dashboard.render.visible import visible

    reviews = reviews_dir_of(args)
    sign = signer(args)
    con = load(args)
    review = build(args, con)
    try:
        record = signoff_record(review, decision=args.decision, by=args.by, comment=args.comment)
        path = write_signoff(reviews, record, sign=sign)
    except AlreadyRecorded as exc:
        raise UsageError(f"{exc}; nothing new was written") from exc
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except (ReviewsDirError, OSError) as exc:
        raise UsageError(
            f"{exc}; the sign-off was not recorded ({args.decision} by {args.by}"
            + (f": {args.comment}" if args.comment else "")
            + ")"
        ) from exc
    print(
        f"relidash: {args.decision} {visible(review.suite)} {visible(review.release)} by "
        f"{visible(record['by'])} (identity not verified), verdict {review.verdict}; "
        f"recorded in {visible(path)}"
        + (f", signed with {visible(args.sign_key)} ({visible(path)}.sig)" if sign else ""),
        file=sys.stderr,
    )
    return EXIT_OK


def cmd_reviews(args: argparse.Namespace) -> int:
    from dashboard.analysis.review_history import approved_and_changed
    from dashboard.render.visible import visible

    if args.strict and args.directory is None:
        raise UsageError("--strict checks the evidence against the reports: give SRC")
    reviews = reviews_dir_of(args)
    signers = allowed_signers(args, config_of(args))
    if args.check:
        return print_ledger_check(reviews, signers)
    source = reports_source(args) if args.directory is not None else None
    entries, problems = _history(
        reviews,
        source,
        suite=args.suite,
        release=args.release,
        decision=args.decision,
        allowed_signers=signers,
    )
    changed_approvals = approved_and_changed(entries)
    if args.json:
        document = {
            "reviews": [e.as_json() for e in entries],
            "problems": [{"file": p.file, "reason": p.reason} for p in problems],
        }
        json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        _print_reviews(reviews, entries)
    for p in problems:
        print(f"relidash: problem: {visible(p.file)}: {visible(p.reason)}", file=sys.stderr)
    if source is None:
        print(
            "relidash: evidence not checked (give the reports directory or URL to check it)",
            file=sys.stderr,
        )
    if args.strict and changed_approvals:
        for e in changed_approvals:
            print(
                f"relidash: approved {visible(e.record['suite'])} {visible(e.record['release'])} "
                f"({visible(e.file)}): its evidence has {e.evidence.status} since",
                file=sys.stderr,
            )
        return EXIT_FAILED
    return EXIT_OK


def _print_reviews(reviews: Path, entries: list[Any]) -> None:
    from dashboard.render.formatting import one_line
    from dashboard.render.visible import visible

    if not entries:
        print(f"No sign-offs in {visible(reviews)}.")
    for e in entries:
        r = e.record
        who = f"{r['by']}{'' if r.get('identity_verified') else ' (unverified)'}"
        print(
            f"{visible(r['time'])}  {one_line(r['suite'], 30)} {one_line(r['release'], 20)}"
            f"  {r['decision']:<11} by {one_line(who, 40)}  evidence {e.evidence.status}"
            f"  {one_line(e.signature.describe(), 80)}"
            f"{'' if e.chained else '  (predates chaining)'}"
        )
        if r.get("comment"):
            print(f"    {one_line(r['comment'], 100)}")
        for f in e.evidence.changed_files:
            print(f"    {visible(f['path'])}: {f['old']} -> {f['new'] or 'missing'}")


def packet_history(con: Any, review: Any) -> Any:
    """The suite's release table a packet's chart draws: at the review's k and error
    policy, over the releases the review lists (`relidash review` and `verify` alike)."""
    from dashboard.analysis.releases import release_table
    from dashboard.analysis.summary import report_overview

    table = release_table(
        con, report_overview(con), review.suite, review.k, review.count_agent_errors
    )
    return table[table["release"].isin(list(review.releases))]


def _stored_signoffs(reviews: Path, source: ReportSource, packet: dict[str, Any]) -> Any:
    """The records of the packet's suite and release with their evidence status now."""
    entries, _ = _history(reviews, source, suite=packet["suite"], release=packet["release"])
    return [(e.record, e.evidence) for e in entries]


def cmd_verify(args: argparse.Namespace) -> int:
    from dashboard.analysis.packet_ledger import (
        carried,
        criteria_finding,
        head_finding,
        integrity_findings,
        signature_findings,
    )
    from dashboard.analysis.policy import PolicyError
    from dashboard.analysis.releases import UnknownName
    from dashboard.analysis.review import build_review, moved_numbers, review_json
    from dashboard.analysis.verifying import (
        MalformedPacket,
        as_written,
        packet_parts,
        verify_review,
    )
    from dashboard.data.catalog import relidash_version
    from dashboard.render.packet import parse_packet, render_packet
    from dashboard.render.packet_diff import visible_differences
    from dashboard.render.verify_report import conclusion, verify_lines
    from dashboard.render.visible import visible

    try:
        text = args.packet.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{args.packet}: cannot be read ({exc})") from exc
    try:
        block = parse_packet(text)
        packet, shown, generated_at = packet_parts(block)
        signatures, criteria = carried(block)
        integrity_shown = block.get("trial_digests")
    except MalformedPacket as exc:
        raise UsageError(f"{args.packet}: {exc}") from exc
    source = reports_source(args)
    reviews = reviews_dir_of(args)
    signers = allowed_signers(args, config_of(args))
    if shown and not reviews.is_dir():
        raise UsageError(
            f"the packet shows {len(shown)} sign-off(s), checked against the reviews directory "
            f"{reviews}, which does not exist: give the one they were recorded in with --reviews"
        )
    con = load(args)  # lists the source first: the digests below are of the objects now
    now = _digests_now(source, [packet])
    policy_file = args.policy if args.policy is not None else packet_policy_file(packet, source)
    fresh, why = None, ""
    try:
        fresh = build_review(
            con,
            packet["suite"],
            packet["release"],
            packet.get("base"),
            packet["k"],
            policy_file=policy_file,
            reports_dir=source,
            count_agent_errors=packet["count_agent_errors"],
        )
    except (UnknownName, PolicyError, ValueError) as exc:
        why = str(exc)
    fresh_json = review_json(fresh) if fresh is not None else None
    verification = verify_review(
        packet,
        fresh_json,
        cannot_review=why,
        digests_now=now,
        signoffs_shown=shown,
        signoffs_stored=_stored_signoffs(reviews, source, packet),
        generated_at=generated_at,
        version_now=relidash_version(),
    )
    differences = []
    findings = []
    if fresh is not None:
        written = as_written(fresh, packet, block.get("suite_releases"))
        rendered = render_packet(
            written,
            signoffs=shown,
            history=packet_history(con, written),
            generated_at=generated_at,
            signatures=signatures,
            criteria=criteria,
            integrity=integrity_shown if isinstance(integrity_shown, list) else None,
            ledger_head=block.get("ledger_head")
            if isinstance(block.get("ledger_head"), dict)
            else None,
        )
        differences = visible_differences(text, rendered)
        # an evidence file whose trials match is listed with the paths, under --verbose
        findings = [
            f
            for f in integrity_findings(integrity_now(fresh, source))
            if args.verbose or not f.holds
        ]
        findings += signature_findings(shown, signatures, signers)
        findings.append(criteria_finding(criteria, review_criteria(con, reviews, fresh)))
        head = head_finding(block.get("ledger_head"), reviews)
        findings += [head] if head is not None else []
    for line in verify_lines(
        verification,
        differences,
        source=str(args.directory),
        reviews_dir=str(reviews),
        verbose=args.verbose,
        raw_moved=moved_numbers(packet, fresh_json) if fresh_json is not None else (),
    ):
        print(visible(line))  # suite, release, slice and rule names come from files
    for finding in findings:
        print(visible(("  " if finding.holds else "✗ ") + finding.line))
    broken = [f for f in findings if not f.holds]
    if broken and verification.holds(bool(differences)):
        print(f"relidash: the packet does not hold: {visible(broken[0].line)}", file=sys.stderr)
    else:
        print(conclusion(verification, differences), file=sys.stderr)
    return EXIT_OK if verification.holds(bool(differences)) and not broken else EXIT_FAILED
