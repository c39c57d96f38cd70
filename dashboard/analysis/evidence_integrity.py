"""Whether a review's evidence files are as their writer left them: each multivon-eval
report's trial records against their own digests (data.trial_digests), at review and
verify time, never on the load path.

A report whose trials do not match is flagged "edited after it was written": its numbers
may be the edit's, not the run's. Reports without trial digests (before multivon-eval
0.18, other harnesses) are said to have none to check.

Must not: write anything, import Streamlit, or read files other than the evidence.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from dashboard.analysis.review import Review
from dashboard.data.formats import check_records
from dashboard.data.sources import SourceError
from dashboard.data.sources.reports import ReportSource


@dataclass(frozen=True)
class FileIntegrity:
    path: str
    role: str  # "release" | "base"
    trials: int
    mismatched: int
    examples: tuple[str, ...]

    @property
    def edited(self) -> bool:
        return self.mismatched > 0

    def sentence(self, named: bool = True) -> str:
        """What the check found, naming the file by its path (or, without `named`, by its
        role: verify shows raw paths only when asked to)."""
        who = f"{self.path} ({self.role})" if named else f"the {self.role}'s report"
        if self.edited:
            shown = "; ".join(self.examples)
            more = self.mismatched - len(self.examples)
            return (
                f"{who} was edited after it was written: "
                f"{self.mismatched} of its {self.trials} trial records do not match their "
                f"digests ({shown}{f'; and {more} more' if more > 0 else ''})"
            )
        if self.trials == 0:
            return f"{who}: no trial digests to check"
        return f"{who}: all {self.trials} trial records match their digests"


def evidence_integrity(review: Review, source: ReportSource) -> tuple[FileIntegrity, ...]:
    """Each evidence file's trial records against their digests; a file that is gone or
    cannot be fetched has none to check (the evidence status says it changed)."""
    out = []
    for e in review.evidence:
        try:
            path = source.open_file(e.path)
        except (FileNotFoundError, SourceError):
            out.append(FileIntegrity(e.path, e.role, 0, 0, ()))
            continue
        found = check_records(path, _leading(path))
        out.append(
            FileIntegrity(e.path, e.role, found.trials, found.mismatched_count, found.mismatched)
        )
    return tuple(out)


def integrity_json(files: tuple[FileIntegrity, ...]) -> list[dict[str, Any]]:
    return [dict(asdict(f), edited=f.edited, sentence=f.sentence()) for f in files]


def _leading(path: Path) -> bytes:
    """The first bytes of a file, by which its harness is told (none for a directory)."""
    if path.is_dir():
        return b""
    try:
        with path.open("rb") as handle:
            return handle.read(256)
    except OSError:
        return b""
