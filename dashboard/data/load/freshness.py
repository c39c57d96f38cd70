"""Whether a catalog still describes its source: the comparison a load and a new session
make between one listing and the catalog's record of each file, without reading a byte.

A file is unchanged when its size, mtime (an object's LastModified) and ETag (objects
only) match the record and it was not racy (modified within 2 s of the load before, when
it may have been mid-write). Must not: write to the catalog, or read a report's bytes.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.load.releases import release_config_digest
from dashboard.data.sources.reports import Listing, ReportSource, as_source
from dashboard.data.sources.walk import FileEntry


def unchanged_key(entry: FileEntry) -> tuple[int, int, bool, str]:
    """What the catalog's record (known_files) of a file that needs no look holds: the
    listed size, mtime and ETag, and not racy (modified within 2 s of that load)."""
    return (entry.size, entry.mtime_ns, False, entry.etag)


def stored_parts(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The part digests the last complete load stored (none while a load runs)."""
    return {r["part"]: r["digest"] for r in fetch_rows(con, "load/listing_parts")}


# Up to this many listing parts are picked out of `files` one by one, by prefix; more by
# their names.
FEW_PARTS = 16


def known_files(
    con: duckdb.DuckDBPyConnection, parts: set[str] | None = None
) -> dict[str, tuple[int, int, bool, str]]:
    """The catalog's record of each file (of the listed parts only, when given): path ->
    (size, mtime_ns, racy, etag), compared with unchanged_key. A file is looked at again
    when its key is not its record."""
    if parts is None:
        rows = fetch_rows(con, "load/known_files")
    elif not parts:
        return {}
    elif len(parts) <= FEW_PARTS:
        # a prefix comparison per part: cheaper than working out every path's part
        rows = []
        for part in sorted(parts):
            if part:
                rows += fetch_rows(con, "load/known_files_under", prefix=f"{part}/")
            else:  # the files at the top
                rows += fetch_rows(con, "load/known_files_at_top")
    else:
        rows = fetch_rows(con, "load/known_files_of_parts", parts=sorted(parts))
    return {r["path"]: (r["size"], r["mtime_ns"], r["racy"], r["etag"] or "") for r in rows}


def known_digests(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, str]:
    """The recorded digest of each listed path that has one."""
    if not paths:
        return {}
    return {r["path"]: r["digest"] for r in fetch_rows(con, "load/known_digests", paths=paths)}


def directory_changed(
    con: duckdb.DuckDBPyConnection, reports: Path | ReportSource, listing: Listing | None = None
) -> bool:
    """Whether a load would change anything, judged from one listing alone (a walk and
    stat calls; for object storage one listing, no download): the source's now, or
    `listing` when the caller made it (a walk in a child process).

    Read-only (works on a snapshot of the catalog): a new session checks this and
    renders at once when nothing changed, instead of taking the writer. SourceError when
    the source cannot be listed.
    """
    source = as_source(reports)
    if meta_value(con, "reports_dir") != source.ident:
        return True
    if listing is None:
        listing = source.listing()
    parts = listing.parts
    differing = parts.differing(stored_parts(con))
    if differing - parts.digests.keys():
        return True  # a whole part is gone
    if differing:
        known = known_files(con, differing)
        listed = parts.files_of(differing)
        if len(known) != len(listed):
            return True
        if any(known.get(e.path) != unchanged_key(e) for e in listed):
            return True
    walk = {(r["file"], r["reason"]) for r in fetch_rows(con, "load/walk_problems")}
    if walk != {(p.path, p.reason) for p in listing.problems}:
        return True
    return meta_value(con, "release_config") != release_config_digest(source.config_file())


def catalog_version(con: duckdb.DuckDBPyConnection) -> int:
    """A counter bumped by every load that changed the catalog (a cache key)."""
    return int(meta_value(con, "version") or 0)


def meta_value(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    rows = fetch_rows(con, "catalog/meta_value", key=key)
    return str(rows[0]["value"]) if rows else None
