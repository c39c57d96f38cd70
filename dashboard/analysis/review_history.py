"""The history of sign-offs: every recorded decision, newest first, each with its evidence
status computed now (`unchanged`, `changed`, `missing`) by hashing the files it names.

The Reviews page and `relidash reviews` both list through `review_history` (without the
reports, every status is `not checked`), and the Releases and Review pages flag an
approved release whose evidence changed through `approved_but_changed`. Records come
checked by dashboard.data.records.schema, so their fields have the types read here.
Must not: write or edit a record, import Streamlit, or format.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashboard.analysis.review import (
    APPROVED,
    NOT_CHECKED,
    UNCHANGED,
    EvidenceStatus,
    changed_after_approval,
    evidence_status,
)
from dashboard.data.records.ledger import is_chained
from dashboard.data.records.signoffs import (
    SignoffProblem,
    file_sha256,
    read_signoffs,
    serialise_signoff,
)
from dashboard.data.records.sshsig import UNSIGNED, SignatureCheck, check_signature
from dashboard.data.sources.reports import ReportSource, as_source


@dataclass(frozen=True)
class ReviewEntry:
    """One stored sign-off and what its evidence looks like now."""

    file: str  # the record's file name in the reviews directory
    record: Mapping[str, Any]
    evidence: EvidenceStatus
    signature: SignatureCheck = SignatureCheck(UNSIGNED)
    armored: str = ""  # the signature file's text, "" when unsigned

    @property
    def chained(self) -> bool:
        """Whether the record names the one before it (data.ledger); records written
        before chaining do not, and are listed as predating it."""
        return is_chained(self.record)

    def as_json(self) -> dict[str, Any]:
        """The entry of `relidash reviews --json`."""
        r = self.record
        return {
            "suite": r.get("suite"),
            "release": r.get("release"),
            "base": r.get("base"),
            "decision": r.get("decision"),
            "by": r.get("by"),
            "identity_verified": bool(r.get("identity_verified")),
            "time": r.get("time"),
            "comment": r.get("comment", ""),
            "evidence": self.evidence.status,
            "changed_files": [dict(f) for f in self.evidence.changed_files],
            "chained": self.chained,
            "signature": self.signature.status,
            "signed_by": self.signature.signer or None,
            "signature_text": self.signature.describe(),
            "file": self.file,
        }


def digests_now(
    reports_dir: Path | ReportSource, records: Sequence[Mapping[str, Any]]
) -> dict[str, str | None]:
    """SHA-256 of every file the records name, read now (None for a file that is gone).

    A record's paths are relative to the reports source; one that would leave a
    directory (a hand-edited record) is treated as missing rather than read. An object
    in object storage is hashed from the mirror's copy of it as listed now (fetched
    when missing or stale); SourceError when it cannot be fetched.
    """
    source = as_source(reports_dir)
    out: dict[str, str | None] = {}
    for record in records:
        for item in record.get("evidence") or []:
            path = str(item.get("path", ""))
            if path in out:
                continue
            try:
                target = source.open_file(path)
            except FileNotFoundError:
                out[path] = None
                continue
            out[path] = file_sha256(target)
    return out


def review_history(
    reviews_dir: Path,
    reports_dir: Path | ReportSource | None,
    *,
    suite: str | None = None,
    release: str | None = None,
    decision: str | None = None,
    allowed_signers: Path | None = None,
) -> tuple[list[ReviewEntry], list[SignoffProblem]]:
    """Every sign-off (filtered), newest first, with its evidence status (`not checked`
    without `reports_dir`) and its signature's check (against `allowed_signers`, or only
    for consistency without it); unusable files in the reviews directory are problems,
    never errors. ReviewsDirError when the directory itself cannot be listed."""
    stored, problems = read_signoffs(reviews_dir)
    chosen = [
        s
        for s in stored
        if (suite is None or s.record.get("suite") == suite)
        and (release is None or s.record.get("release") == release)
        and (decision is None or s.record.get("decision") == decision)
    ]
    signatures = [check_signature(s.data, s.signature, allowed_signers) for s in chosen]
    if reports_dir is None:
        unchecked = EvidenceStatus(NOT_CHECKED, ())
        return [
            ReviewEntry(s.path.name, s.record, unchecked, sig, _armored(s.signature))
            for s, sig in zip(chosen, signatures, strict=True)
        ], problems
    now = digests_now(reports_dir, [s.record for s in chosen])
    entries = [
        ReviewEntry(
            s.path.name,
            s.record,
            evidence_status(s.record.get("evidence") or [], now),
            sig,
            _armored(s.signature),
        )
        for s, sig in zip(chosen, signatures, strict=True)
    ]
    return entries, problems


def _armored(signature: bytes | None) -> str:
    return signature.decode("ascii", "replace") if signature else ""


def packet_signatures(entries: Sequence[ReviewEntry]) -> dict[str, dict[str, str]]:
    """{SHA-256 of the record's bytes: {signature, status_text}} of the signed entries, as a
    packet carries them (render.packet_records)."""
    return {
        hashlib.sha256(serialise_signoff(dict(e.record))).hexdigest(): {
            "signature": e.armored,
            "status_text": e.signature.describe(),
        }
        for e in entries
        if e.armored
    }


def approved_and_changed(entries: Sequence[ReviewEntry]) -> list[ReviewEntry]:
    """The entries that approved a release whose evidence has changed or gone since."""
    return [
        e
        for e in entries
        if e.record.get("decision") == APPROVED
        and e.evidence.status not in (UNCHANGED, NOT_CHECKED)
    ]


def approved_but_changed(
    reviews_dir: Path, reports_dir: Path | ReportSource
) -> dict[tuple[str, str], EvidenceStatus]:
    """(suite, release) of each approved release whose evidence changed since."""
    stored, _ = read_signoffs(reviews_dir)
    records = [s.record for s in stored]
    return changed_after_approval(records, digests_now(reports_dir, records))
