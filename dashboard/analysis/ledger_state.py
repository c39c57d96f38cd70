"""The reviews directory's state as a ledger: its chain (data.ledger) and the signatures
beside its records (data.sshsig), as `relidash reviews --check` and the Reviews page
report it.

The ledger holds when every link of the chain holds and every signature beside a record
verifies (one that cannot be checked here, with no ssh-keygen, does not count as holding); an unsigned record is reported as unsigned, not as a break (a team
that signs no sign-off still has a chain).

Must not: write anything, import Streamlit, or format beyond the one-line sentences the
CLI and the page both show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from dashboard.data.records.ledger import ChainBreak, ChainState, check_chain
from dashboard.data.records.signoffs import read_ledger_files, read_signature
from dashboard.data.records.sshsig import (
    CANNOT_CHECK,
    NOT_VERIFIED,
    SIGNATURE_SUFFIX,
    UNSIGNED,
    VERIFIED,
    SignatureCheck,
    check_signature,
)


@dataclass(frozen=True)
class LedgerState:
    chain: ChainState
    signatures: Mapping[str, SignatureCheck]  # record file name -> its signature's check
    stray_signatures: tuple[str, ...]  # `.sig` files whose record is not there
    allowed_signers: str | None  # the file the signers were checked against

    @property
    def breaks(self) -> list[ChainBreak]:
        found = list(self.chain.breaks)
        for name, check in self.signatures.items():
            if check.status in (NOT_VERIFIED, CANNOT_CHECK):
                found.append(ChainBreak(name, "signature", check.describe()))
        for sig in self.stray_signatures:
            record = sig.removesuffix(SIGNATURE_SUFFIX)
            found.append(ChainBreak(record, "removed",
                f"was removed: its signature {sig} is still in the reviews directory"))  # fmt: skip
        return found

    @property
    def holds(self) -> bool:
        return not self.breaks

    def summary(self) -> str:
        """One sentence: what holds and what is not protected."""
        records = len(self.chain.order)
        if records == 0:
            return "The ledger is empty: no records in the reviews directory."
        chained = records - len(self.chain.unchained)
        verified = sum(1 for c in self.signatures.values() if c.status == VERIFIED)
        unsigned = sum(1 for c in self.signatures.values() if c.status == UNSIGNED)
        parts = [f"{records} record{'s' if records != 1 else ''}"]
        if chained:
            parts.append(f"{chained} in one chain" if self.holds else f"{chained} chained")
        if self.chain.unchained:
            parts.append(
                f"{len(self.chain.unchained)} predate chaining (written before records were "
                "chained; listed, and protected only by the digests the first chained record "
                "holds)"
            )
        if self.allowed_signers is not None:
            parts.append(f"{verified} signed and verified, {unsigned} unsigned")
        else:
            parts.append(f"{unsigned} unsigned; signers not checked (no allowed signers given)")
        lead = "The ledger holds" if self.holds else "The ledger does not hold"
        head = f"; its last record is {self.chain.head}" if self.chain.head else ""
        return f"{lead}: {', '.join(parts)}{head}."


def check_ledger(reviews_dir: Path, allowed_signers: Path | None) -> LedgerState:
    """The chain and every signature of the reviews directory. ReviewsDirError when the
    directory cannot be listed; a missing directory is an empty ledger."""
    files = read_ledger_files(reviews_dir)
    chain = check_chain(files)
    signatures: dict[str, SignatureCheck] = {}
    for f in files:
        if f.record is None:
            continue
        path = reviews_dir / f.name
        data = _bytes(path)
        signatures[f.name] = check_signature(data, read_signature(path), allowed_signers)
    names = {f.name for f in files}
    try:
        stray = sorted(
            p.name
            for p in reviews_dir.glob(f"*.json{SIGNATURE_SUFFIX}")
            if p.name.removesuffix(SIGNATURE_SUFFIX) not in names
        )
    except OSError:
        stray = []
    return LedgerState(
        chain, signatures, tuple(stray), str(allowed_signers) if allowed_signers else None
    )


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
