"""Whether a catalog still describes its source: the comparison a load and a new session
make between one listing and the catalog's record of each file, without reading a byte.

A file is unchanged when its size, mtime (an object's LastModified) and ETag (objects
only) match the record and it was not racy (modified within 2 s of the load before, when
it may have been mid-write). Must not: write to the catalog, or read a report's bytes.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import duckdb

from dashboard.data.releases import release_config_digest
from dashboard.data.scan import FileEntry
from dashboard.data.sources.reports import ReportSource, as_source


def is_changed(entry: FileEntry, previous: tuple[Any, ...] | None) -> bool:
    """Whether a listed file must be looked at again: new, another size, mtime or ETag than
    the catalog's record (size, mtime_ns, digest, racy, etag), or racy last time."""
    if previous is None:
        return True
    size, mtime_ns, _digest, racy, etag = previous
    return bool((size, mtime_ns, etag or "") != (entry.size, entry.mtime_ns, entry.etag) or racy)


def listing_digest(entries: list[FileEntry]) -> str:
    """A digest of a listing: every file's path, size, mtime and ETag, in listing order.

    A load stores the digest of the listing it ended with (when no file was racy); the
    next one that lists the same digest knows, without comparing file by file, that no
    file changed and none is gone.
    """
    text = "\n".join(f"{e.path}\0{e.size}\0{e.mtime_ns}\0{e.etag}" for e in entries)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def known_files(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[Any, ...]]:
    """The catalog's record of each file: path -> (size, mtime_ns, digest, racy, etag)."""
    return {
        row[0]: row[1:]
        for row in con.execute(
            "SELECT path, size, mtime_ns, digest, racy, etag FROM files"
        ).fetchall()
    }


def directory_changed(con: duckdb.DuckDBPyConnection, reports: Path | ReportSource) -> bool:
    """Whether a load would change anything, judged from one listing alone (a walk and
    stat calls; for object storage one listing, no download).

    Read-only (works on a snapshot of the catalog): a new session checks this and
    renders at once when nothing changed, instead of taking the writer. SourceError when
    the source cannot be listed.
    """
    source = as_source(reports)
    if meta_value(con, "reports_dir") != source.ident:
        return True
    listing = source.listing()
    if meta_value(con, "listing") != listing_digest(listing.entries):
        known = known_files(con)
        if len(known) != len(listing.entries):
            return True
        if any(is_changed(e, known.get(e.path)) for e in listing.entries):
            return True
    walk = set(
        con.execute(
            "SELECT file, reason FROM problems WHERE scope = 'file' "
            "AND file NOT IN (SELECT path FROM files)"
        ).fetchall()
    )
    if walk != {(p.path, p.reason) for p in listing.problems}:
        return True
    return meta_value(con, "release_config") != release_config_digest(source.config_file())


def catalog_version(con: duckdb.DuckDBPyConnection) -> int:
    """A counter bumped by every load that changed the catalog (a cache key)."""
    return int(meta_value(con, "version") or 0)


def meta_value(con: duckdb.DuckDBPyConnection, key: str) -> str | None:
    rows = con.execute("SELECT value FROM meta WHERE key = $k", {"k": key}).fetchall()
    return str(rows[0][0]) if rows else None
