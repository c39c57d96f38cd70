"""What a load must do, decided before the catalog changes: which files to read, which
are gone, and whether anything changed at all.

Everything that talks to the source comes first (its listing, and fetching what changed
from a bucket): a listing or a download that fails raises before the catalog changes.
Only the parts of the listing (top-level directories) unlike the ones the last load ended
with need a look, and only they can have lost a file; none at all (the usual warm load)
compares no file.

Must not: write to the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from dashboard.data.catalog import meta_values
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.formats.protocol import Settings
from dashboard.data.load.freshness import known_files, stored_parts, unchanged_key
from dashboard.data.load.releases import release_config_digest
from dashboard.data.load.report_dirs import ROOT_REPORT, group_report_directories, root_is_report
from dashboard.data.load.settings import fingerprints, read_settings, settings_moved
from dashboard.data.sources.reports import Listing, ReportSource
from dashboard.data.sources.walk import FileEntry, FileProblem, ListingParts, part_of


@dataclass
class LoadPlan:
    """A load, decided: what the source lists and what of it the catalog lacks."""

    source: ReportSource
    listing: Listing
    meta: dict[str, Any]
    claimed: bool  # the catalog already describes this source
    differing: set[str]  # the listing's parts unlike the stored ones
    config: Path | None  # the source's relidash.toml
    settings: dict[str, Settings]  # each harness's table of it
    fingerprint: dict[str, str]
    settings_changed: bool
    forced: set[str]  # files read again whatever their digest (their harness's table moved)
    known: dict[str, Any]  # the catalog's records of the files looked at
    candidates: list[FileEntry]  # files whose stat differs from their record
    scan_problems: list[FileProblem]  # the walk's, and files gone since the listing
    vanished: set[str]
    entries: Any  # the listing's entries, less the vanished
    removed: list[str]  # recorded files no longer listed
    previous_walk: set[tuple[str, str]]
    walk_changed: bool
    config_digest: str
    config_changed: bool

    @property
    def parts(self) -> ListingParts:
        return self.listing.parts

    @property
    def nothing_to_do(self) -> bool:
        """The listing is the one the last load ended with: nothing to write."""
        return self.claimed and not (
            self.differing
            or self.forced
            or self.settings_changed
            or self.walk_changed
            or self.config_changed
        )


def plan_load(con: duckdb.DuckDBPyConnection, source: ReportSource) -> LoadPlan:
    """Decide the load of `source` into the catalog `con` (SourceError when it cannot be
    listed or a changed file fetched)."""
    listing = source.listing()
    scan_problems = list(listing.problems) + source.fetch(listing, ())  # relidash.toml
    meta = meta_values(con)
    claimed = meta.get("reports_dir") == source.ident
    parts = listing.parts
    differing = parts.differing(stored_parts(con)) if claimed else set(parts.digests)
    if differing and claimed and root_is_report(parts):
        # the directory itself is one report: its trial folders are parts of their own
        differing |= set(parts.digests) | {part_of(ROOT_REPORT)}
    config = source.config_file()
    settings = read_settings(config)
    fingerprint = fingerprints(settings)
    moved = settings_moved(meta.get("harness_settings"), fingerprint)
    forced = _forced(con, moved) if moved and claimed else set()
    if forced or not claimed:
        # every record: `known` also tells which files the catalog holds
        known = known_files(con) if claimed else {}
        looked_at = listing.entries
    else:  # the records of the differing parts' files only
        known = known_files(con, differing) if differing else {}
        looked_at = parts.files_of(differing)
    looked_at, members = group_report_directories(looked_at)
    candidates = [e for e in looked_at if e.path in forced or known.get(e.path) != unchanged_key(e)]
    gone_since = source.fetch(
        listing, [p for e in candidates for p in members.get(e.path, (e.path,))]
    )
    vanished = {p.path for p in gone_since}
    vanished |= {d for d, files in members.items() if vanished.intersection(files)}
    present = {e.path for e in looked_at} - vanished
    previous_walk = {(r["file"], r["reason"]) for r in fetch_rows(con, "load/walk_problems")}
    scan_problems += gone_since
    config_digest = release_config_digest(config)
    return LoadPlan(
        source=source,
        listing=listing,
        meta=meta,
        claimed=claimed,
        differing=differing,
        config=config,
        settings=settings,
        fingerprint=fingerprint,
        settings_changed=bool(moved),
        forced=forced,
        known=known,
        candidates=[e for e in candidates if e.path not in vanished],
        scan_problems=scan_problems,
        vanished=vanished,
        entries=(
            [e for e in listing.entries if e.path not in vanished] if vanished else listing.entries
        ),
        removed=[p for p in known if p not in present],
        previous_walk=previous_walk,
        walk_changed=previous_walk != {(p.path, p.reason) for p in scan_problems},
        config_digest=config_digest,
        config_changed=meta.get("release_config") != config_digest,
    )


def _forced(con: duckdb.DuckDBPyConnection, moved: set[str]) -> set[str]:
    """A harness's files map to rows by its table of relidash.toml: read again when the
    table moved, with the files nothing loaded from (whose reason may have been the
    table's)."""
    return {r["path"] for r in fetch_rows(con, "load/files_of_harnesses", harnesses=sorted(moved))}
