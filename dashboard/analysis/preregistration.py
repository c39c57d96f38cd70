"""Whether a review's criteria were fixed before its results: the policy's registration in
the ledger (`relidash policy register`) against the time the release's first report was
written.

A policy registered (its SHA-256 recorded in the reviews directory's chain) before the
release's earliest report is "criteria fixed before results"; registered after, "criteria
set after results were seen"; never registered, "criteria not registered". A report's time
is the earliest trial it records (multivon-eval 0.18+, Inspect); a report without trial
times is dated by its file's modification time, and the sentence says so, since a copy
or a checkout resets that time.

Must not: write a registration (dashboard.cli.policy does, through data.signoffs), import
Streamlit, or format beyond the one sentence the page, the CLI and the packet show.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pandas as pd

from dashboard.data.records.schema import REGISTRATION, parse_time
from dashboard.data.records.signoffs import read_ledger_files

FIXED_BEFORE: Final = "criteria fixed before results"
SET_AFTER: Final = "criteria set after results were seen"
NOT_REGISTERED: Final = "criteria not registered"
BY_TRIALS: Final = "its earliest recorded trial"
BY_MTIME: Final = "its file's modification time (it records no trial times)"


@dataclass(frozen=True)
class Preregistration:
    status: str  # FIXED_BEFORE | SET_AFTER | NOT_REGISTERED
    policy_sha256: str
    registered_at: str | None  # the earliest registration of this policy's bytes
    registration: str | None  # its file in the reviews directory
    results_at: str | None  # when the release's first report was written
    results_basis: str  # BY_TRIALS | BY_MTIME

    def sentence(self) -> str:
        if self.status == NOT_REGISTERED:
            return (
                f"{NOT_REGISTERED.capitalize()}: the policy (SHA-256 {self.policy_sha256[:16]}…) "
                "has no registration in the reviews directory (relidash policy register)."
            )
        return (
            f"{self.status.capitalize()}: the policy was registered at {self.registered_at} "
            f"({self.registration}); the release's first report was written at "
            f"{self.results_at}, by {self.results_basis}."
        )

    def as_json(self) -> dict[str, Any]:
        return dict(asdict(self), sentence=self.sentence())


def registrations(reviews_dir: Path) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(time, file name, record) of every policy registration, oldest first."""
    found = [
        (str(f.record["time"]), f.name, f.record)
        for f in read_ledger_files(reviews_dir)
        if f.record is not None and f.record.get("kind") == REGISTRATION
    ]
    return sorted(found, key=lambda item: (parse_time(item[0]) or datetime.min, item[1]))


def first_results(overview: pd.DataFrame, suite: str, release: str) -> tuple[str | None, str]:
    """When the release's first report was written (UTC ISO-8601), and what dates it."""
    rows = overview[(overview["suite"] == suite) & (overview["release"] == release)]
    if rows.empty:
        return None, BY_MTIME
    recorded = pd.to_datetime(rows["recorded_at"], utc=True, errors="coerce").dropna()
    if not recorded.empty:
        return _iso(recorded.min().to_pydatetime()), BY_TRIALS
    mtimes = rows["mtime_ns"].dropna()
    if mtimes.empty:
        return None, BY_MTIME
    return _iso(datetime.fromtimestamp(int(mtimes.min()) / 1e9, UTC)), BY_MTIME


def preregistration(
    reviews_dir: Path, overview: pd.DataFrame, suite: str, release: str, policy_sha256: str
) -> Preregistration:
    """How this release's policy stands against its results (ReviewsDirError when the
    reviews directory cannot be listed)."""
    results_at, basis = first_results(overview, suite, release)
    for time, name, record in registrations(reviews_dir):
        if record.get("policy_sha256") != policy_sha256:
            continue
        if record.get("suite") not in (None, suite):
            continue
        registered, results = parse_time(time), parse_time(results_at or "")
        before = registered is not None and results is not None and registered < results
        status = FIXED_BEFORE if before else SET_AFTER
        return Preregistration(status, policy_sha256, time, name, results_at, basis)
    return Preregistration(NOT_REGISTERED, policy_sha256, None, None, results_at, basis)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
