"""What a review packet says of its records: each sign-off's row (who, identity, signature,
what it was signed on), the criteria's registration, and the ledger block a verifier reads.

A packet carries each shown record as stored and, for a signed one, its armored SSH
signature keyed by the SHA-256 of the record's bytes (data.signoffs.serialise_signoff
gives those bytes back exactly), so `relidash verify --allowed-signers` or ssh-keygen
checks it offline.

Formatting only: signature checks and the criteria's status come from dashboard/analysis.
Must not: run ssh-keygen, read files, or import Streamlit.
"""

from __future__ import annotations

import hashlib
import html
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dashboard.analysis.review import CHANGED, MISSING, UNCHANGED, Review, evidence_status
from dashboard.data.records.signoffs import serialise_signoff

EVIDENCE_WORDS: Final = {
    UNCHANGED: "the files of this packet",
    CHANGED: "other bytes: the evidence has changed since",
    MISSING: "a file this packet does not hold",
}


def identity_text(record: Mapping[str, Any]) -> str:
    ident = record.get("identity")
    if not record.get("identity_verified") or not isinstance(ident, Mapping):
        return "unverified (name typed)"
    who, issuer = ident.get("email") or ident.get("subject"), ident.get("issuer")
    return "verified" + (f": {who}" if who else "") + (f" ({issuer})" if issuer else "")


def record_sha256(record: Mapping[str, Any]) -> str:
    """The SHA-256 of a record's bytes as stored (the canonical serialisation)."""
    return hashlib.sha256(serialise_signoff(dict(record))).hexdigest()


def signature_text(record: Mapping[str, Any], signatures: Mapping[str, Mapping[str, str]]) -> str:
    """ "signed by …, verified", "signature does not verify", or "unsigned"."""
    found = signatures.get(record_sha256(record))
    return str(found.get("status_text", "unsigned")) if found else "unsigned"


def signoff_rows(
    review: Review,
    records: Sequence[Mapping[str, Any]],
    signatures: Mapping[str, Mapping[str, str]],
) -> list[tuple[Any, ...]]:
    """(time, by, identity, signature, decision, comment, signed on) per record."""
    digests = {e.path: e.sha256 for e in review.evidence}
    return [
        (
            rec.get("time", ""),
            rec.get("by", ""),
            identity_text(rec),
            signature_text(rec, signatures),
            rec.get("decision", ""),
            rec.get("comment", ""),
            EVIDENCE_WORDS[evidence_status(rec.get("evidence") or [], digests).status],
        )
        for rec in records
    ]


def for_release(review: Review, signoffs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [
        dict(s)
        for s in signoffs
        if s.get("suite") == review.suite and s.get("release") == review.release
    ]


def carried_signatures(
    records: Sequence[Mapping[str, Any]], signatures: Mapping[str, Mapping[str, str]]
) -> dict[str, dict[str, str]]:
    """The signatures of the shown records only: {record SHA-256: {signature, status_text}}."""
    shown = {record_sha256(r) for r in records}
    return {sha: dict(sig) for sha, sig in signatures.items() if sha in shown}


def integrity_html(integrity: Sequence[Mapping[str, Any]] | None) -> str:
    """The evidence files' trial records against their digests, when any was checked."""
    if not integrity or not any(int(f.get("trials", 0)) for f in integrity):
        return ""
    items = "".join(
        ("<li><b>" if f.get("edited") else "<li>")
        + html.escape(str(f["sentence"]))
        + ("</b></li>" if f.get("edited") else "</li>")
        for f in integrity
    )
    return (
        '<section id="trial-digests"><h2>Evidence as written</h2>'
        f"<p>Each trial record against the digest its writer gave it:</p><ul>{items}</ul></section>"
    )


def head_html(head: Mapping[str, str] | None) -> str:
    """The ledger's last record when the packet was written: a later cut shows against it."""
    if not head:
        return ""
    return (
        f"<p>The reviews directory's last record when this packet was written: "
        f"<code>{html.escape(str(head.get('file')))}</code>, SHA-256 "
        f"<code>{html.escape(str(head.get('sha256')))}</code>.</p>"
    )
