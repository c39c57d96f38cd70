"""What `relidash verify` checks of a packet's ledger part, offline: each carried signature
against the record it is over (its bytes rebuilt exactly by data.signoffs.serialise_signoff)
and the allowed signers, the criteria's registration against the reviews directory now,
and the evidence files' trial records against their own digests.

Must not: read the packet file (the CLI does), write anything, or import Streamlit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashboard.analysis.evidence_integrity import FileIntegrity
from dashboard.analysis.preregistration import Preregistration
from dashboard.analysis.verifying import MalformedPacket
from dashboard.data.records.ledger import check_chain
from dashboard.data.records.signoffs import read_ledger_files, serialise_signoff
from dashboard.data.records.sshsig import CANNOT_CHECK, NOT_VERIFIED, check_signature


@dataclass(frozen=True)
class Finding:
    holds: bool
    line: str


def carried(block: Mapping[str, Any]) -> tuple[dict[str, dict[str, str]], dict[str, Any] | None]:
    """The packet's signatures and criteria, checked for shape (MalformedPacket if not)."""
    signatures = block.get("signatures", {})
    if not isinstance(signatures, dict) or not all(
        isinstance(v, dict) and isinstance(v.get("signature"), str) for v in signatures.values()
    ):
        raise MalformedPacket("its review block has no valid 'signatures' object")
    criteria = block.get("criteria")
    if criteria is not None and not (
        isinstance(criteria, dict) and isinstance(criteria.get("status"), str)
    ):
        raise MalformedPacket("its review block has no valid 'criteria' object")
    return signatures, criteria


def signature_findings(
    signoffs: Sequence[Mapping[str, Any]],
    signatures: Mapping[str, Mapping[str, str]],
    allowed_signers: Path | None,
) -> list[Finding]:
    """One finding per signed sign-off the packet shows: whether its signature holds now."""
    out = []
    for record in signoffs:
        data = serialise_signoff(dict(record))
        found = signatures.get(hashlib.sha256(data).hexdigest())
        if found is None:
            continue
        check = check_signature(
            data, found["signature"].encode("ascii", "replace"), allowed_signers
        )
        who = f"{record.get('decision')} by {record.get('by')} at {record.get('time')}"
        holds = check.status not in (NOT_VERIFIED, CANNOT_CHECK)
        out.append(Finding(holds, f"sign-off {who}: {check.describe()}"))
    return out


def criteria_finding(shown: Mapping[str, Any] | None, now: Preregistration) -> Finding:
    """Whether the packet says of its criteria what the reviews directory says now."""
    if shown is None:
        return Finding(True, f"criteria: not in the packet; now: {now.sentence()}")
    same = shown.get("status") == now.status and shown.get("registered_at") == now.registered_at
    if same:
        return Finding(True, f"criteria: {now.sentence()}")
    return Finding(
        False,
        f"criteria: the packet says {shown.get('status')!r}"
        f" (registered {shown.get('registered_at')}), the reviews directory now {now.sentence()}",
    )


def integrity_findings(files: Sequence[FileIntegrity]) -> list[Finding]:
    """One finding per evidence file with trial digests: an edited one does not hold."""
    return [Finding(not f.edited, f.sentence(named=False)) for f in files if f.trials]


def ledger_head(reviews_dir: Path) -> dict[str, str] | None:
    """The reviews directory's last chained record now (file, sha256), or None."""
    chain = check_chain(read_ledger_files(reviews_dir))
    if chain.head is None or chain.head_sha256 is None:
        return None
    return {"file": chain.head, "sha256": chain.head_sha256}


def head_finding(shown: Any, reviews_dir: Path) -> Finding | None:
    """Whether the record the packet names as the ledger's last is still in the chain with
    the same bytes: a ledger cut back past it, or that record edited, does not hold."""
    if not isinstance(shown, dict):
        return None
    files = read_ledger_files(reviews_dir)
    chain = check_chain(files)
    name, digest = str(shown.get("file")), str(shown.get("sha256"))
    now = {f.name: f.sha256 for f in files}
    if now.get(name) == digest and name in chain.order:
        return Finding(
            True,
            f"ledger: its last record when the packet was written, {name}, is still in the chain",
        )
    return Finding(
        False,
        f"ledger: its last record when the packet was written, {name} (SHA-256 {digest[:16]}…), "
        "is gone or changed: records were removed from the end or edited since",
    )
