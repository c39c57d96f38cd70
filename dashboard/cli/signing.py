"""The signing options of `signoff`, `reviews`, `verify` and `policy register`, the ledger
check `relidash reviews --check` prints, and what `review` and `verify` read of the ledger
and the evidence beside the review (criteria, the ledger's last record, trial digests).

`--sign-key PATH` signs a record with an OpenSSH private key (ssh-keygen -Y sign, namespace
relidash-signoff); `--allowed-signers FILE` (else relidash.toml's `[review]
allowed_signers`, a path relative to that file) names who may sign.

Must not: read or write records itself (data.signoffs does), or judge the chain
(data.ledger, analysis.ledger_state).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dashboard.cli.common import EXIT_FAILED, EXIT_OK, UsageError


def add_sign_key_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sign-key",
        type=Path,
        metavar="PATH",
        help="sign the record with this OpenSSH private key (ssh-keygen -Y sign); the "
        "signature is stored beside it as RECORD.json.sig",
    )


def add_allowed_signers_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allowed-signers",
        type=Path,
        metavar="FILE",
        help="who may sign: an ssh-keygen allowed-signers file (default: relidash.toml's "
        "[review] allowed_signers)",
    )


def signer(args: argparse.Namespace) -> Callable[[bytes], bytes] | None:
    """The function that signs a record's bytes with --sign-key, checked now (before the
    load), or None without the option. UsageError for a missing key or ssh-keygen."""
    from dashboard.data.records.sshsig import SigningError, sign_bytes, ssh_keygen

    key: Path | None = getattr(args, "sign_key", None)
    if key is None:
        return None
    try:
        ssh_keygen()
    except SigningError as exc:
        raise UsageError(f"--sign-key: {exc}") from exc
    if not key.is_file():
        raise UsageError(f"--sign-key {key}: no such private key file")

    def sign(data: bytes) -> bytes:
        try:
            return sign_bytes(data, key)
        except SigningError as exc:
            raise UsageError(f"{exc}; nothing was recorded") from exc

    return sign


def allowed_signers(args: argparse.Namespace, config: Path | None) -> Path | None:
    """--allowed-signers, else `[review] allowed_signers` of `config` (relidash.toml)."""
    given: Path | None = getattr(args, "allowed_signers", None)
    if given is not None:
        if not given.is_file():
            raise UsageError(f"--allowed-signers {given}: no such file")
        return given
    from dashboard.data.records.sshsig import configured_signers

    try:
        return configured_signers(config)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def config_of(args: argparse.Namespace) -> Path | None:
    """The reports source's relidash.toml as a local file, when SRC was given."""
    from dashboard.cli.common import reports_source
    from dashboard.data.sources import SourceError

    if getattr(args, "directory", None) is None:
        return None
    try:
        return reports_source(args).config_file()
    except SourceError:
        return None


def print_ledger_check(reviews: Path, signers: Path | None) -> int:
    """`reviews --check`: the ledger's state, each break named; 0 when it holds, else 1."""
    from dashboard.analysis.ledger_state import check_ledger
    from dashboard.data.records.signoffs import ReviewsDirError
    from dashboard.render.visible import visible

    try:
        state = check_ledger(reviews, signers)
    except ReviewsDirError as exc:
        raise UsageError(str(exc)) from exc
    print(visible(state.summary()))
    for b in state.breaks:
        print(f"  {b.kind}: {visible(b.file)} {visible(b.reason)}")
    if state.chain.head_sha256:
        print(f"  last record's SHA-256: {state.chain.head_sha256}")
    if not state.holds:
        first = state.breaks[0]
        print(
            f"relidash: the ledger breaks at {visible(first.file)} ({first.kind})",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return EXIT_OK


def review_criteria(con: Any, reviews: Path, review: Any) -> Any:
    """Whether the review's policy was registered before its release's first report
    (analysis.preregistration.Preregistration); an unlistable reviews directory is a
    usage error."""
    from dashboard.analysis.preregistration import preregistration
    from dashboard.analysis.summary import report_overview
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        return preregistration(
            reviews, report_overview(con), review.suite, review.release, review.policy.sha256
        )
    except ReviewsDirError as exc:
        raise UsageError(str(exc)) from exc


def ledger_head_now(reviews: Path) -> Any:
    """The reviews directory's last record (file, sha256) for a packet to carry."""
    from dashboard.analysis.packet_ledger import ledger_head
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        return ledger_head(reviews)
    except ReviewsDirError as exc:
        raise UsageError(str(exc)) from exc


def integrity_now(review: Any, source: Any) -> Any:
    """The evidence files' trial records against their digests (evidence_integrity)."""
    from dashboard.analysis.evidence_integrity import evidence_integrity
    from dashboard.data.sources import SourceError

    try:
        return evidence_integrity(review, source)
    except SourceError as exc:
        raise UsageError(str(exc)) from exc
