"""Whether a catalog still describes its source: the comparison a load and a new session
make between one listing and the catalog's record of each file, without reading a byte.

A file is unchanged when its size, mtime (an object's LastModified) and ETag (objects
only) match the record and it was not racy (modified within 2 s of the load before, when
it may have been mid-write). Must not: write to the catalog, or read a report's bytes.
"""

from __future__ import annotations

import itertools
from array import array
from dataclasses import dataclass
from pathlib import Path

import duckdb
import xxhash

from dashboard.data.releases import release_config_digest
from dashboard.data.scan import FileEntry
from dashboard.data.sources.reports import ReportSource, as_source


def unchanged_key(entry: FileEntry) -> tuple[int, int, bool, str]:
    """What the catalog's record (known_files) of a file that needs no look holds: the
    listed size, mtime and ETag, and not racy (modified within 2 s of that load)."""
    return (entry.size, entry.mtime_ns, False, entry.etag)


# A listing's parts: each top-level directory of the source ('' holds the files at the
# top), as SQL over `files.path`; part_of is the same in Python.
PART_OF_PATH = "CASE WHEN contains(path, '/') THEN split_part(path, '/', 1) ELSE '' END"


def part_of(path: str) -> str:
    head, slash, _ = path.partition("/")
    return head if slash else ""


@dataclass(frozen=True)
class ListingParts:
    """A listing split into its parts, each with a digest of its files' paths, sizes,
    mtimes and ETags in listing order.

    A load stores the digests of the listing it ended with (`listing_parts`, leaving out
    a part with a racy file); the next load compares file by file only the parts whose
    digest differs, so one changed file costs the comparison of its directory's files,
    not of every file.
    """

    digests: dict[str, str]
    entries: dict[str, list[FileEntry]]

    @classmethod
    def of(cls, entries: list[FileEntry]) -> ListingParts:
        grouped: dict[str, list[FileEntry]] = {}
        # a part's files are contiguous in a walk; in a bucket's key order the files at
        # the top may come between two directories, and are gathered here
        for part, run in itertools.groupby(entries, key=lambda e: part_of(e.path)):
            grouped.setdefault(part, []).extend(run)
        return cls({part: _files_digest(files) for part, files in grouped.items()}, grouped)

    def files_of(self, parts: set[str]) -> list[FileEntry]:
        """The listed files of these parts (parts no longer listed have none), in order."""
        return [e for part, files in self.entries.items() if part in parts for e in files]

    def differing(self, stored: dict[str, str]) -> set[str]:
        """Parts whose digest is not the stored one, and stored parts no longer listed."""
        return {p for p, d in self.digests.items() if stored.get(p) != d} | (
            stored.keys() - self.digests.keys()
        )


def _files_digest(files: list[FileEntry]) -> str:
    digest = xxhash.xxh3_128()
    digest.update("\n".join([e.path for e in files]).encode("utf-8", "surrogateescape"))
    digest.update(array("q", [e.size for e in files]).tobytes())
    digest.update(array("q", [e.mtime_ns for e in files]).tobytes())
    digest.update("\n".join([e.etag for e in files]).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def stored_parts(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The part digests the last complete load stored (none while a load runs)."""
    return dict(con.execute("SELECT part, digest FROM listing_parts").fetchall())


def known_files(
    con: duckdb.DuckDBPyConnection, parts: set[str] | None = None
) -> dict[str, tuple[int, int, bool, str]]:
    """The catalog's record of each file (of the listed parts only, when given): path ->
    (size, mtime_ns, racy, etag), compared with unchanged_key. A file is looked at again
    when its key is not its record."""
    query = "SELECT path, size, mtime_ns, racy, etag FROM files"
    rows = (
        con.execute(query).fetchall()
        if parts is None
        else con.execute(
            f"{query} WHERE {PART_OF_PATH} IN (SELECT unnest($parts))", {"parts": sorted(parts)}
        ).fetchall()
    )
    return {path: (size, mtime_ns, racy, etag or "") for path, size, mtime_ns, racy, etag in rows}


def known_digests(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, str]:
    """The recorded digest of each listed path that has one."""
    if not paths:
        return {}
    return dict(
        con.execute(
            "SELECT path, digest FROM files WHERE path IN (SELECT unnest($p))", {"p": paths}
        ).fetchall()
    )


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
    parts = ListingParts.of(listing.entries)
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
