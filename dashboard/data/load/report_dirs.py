"""Directories that are one report each (a Harbor job: a folder of trial folders): the
listing's files under one are replaced by a single entry for the directory, whose size is
its JSON files' sizes summed and whose mtime is their newest, so a trial finishing shows as
the report changing. Its digest (scan.directory_facts) covers each of those files.

A directory report's path ends in "/" ("./" for the reports directory itself): that is how
every later step tells it from a file.

Must not: import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence

from dashboard.data.formats import report_directories
from dashboard.data.sources.walk import FileEntry, ListingParts

ROOT_REPORT = "./"


def group_report_directories(
    entries: Sequence[FileEntry],
) -> tuple[Sequence[FileEntry], dict[str, list[str]]]:
    """The entries with each directory report's files folded into one entry for it, and
    each directory report's files (as listed: what a bucket's mirror must fetch)."""
    if not entries:
        return entries, {}
    found = report_directories([e.path for e in entries])
    if not found:
        return entries, {}
    grouped: dict[str, list[FileEntry]] = {}
    kept: list[FileEntry] = []
    for entry in entries:
        owner = _owner(entry.path, found)
        if owner is None:
            kept.append(entry)
        else:
            grouped.setdefault(owner, []).append(entry)
    for prefix, members in grouped.items():
        first = members[0]
        root = first.abspath[: len(first.abspath) - len(first.path)] + prefix
        kept.append(
            FileEntry(
                prefix or ROOT_REPORT,
                os.path.normpath(root or "."),
                sum(e.size for e in members),
                max(e.mtime_ns for e in members),
                any(e.racy for e in members),
                _etag_of(members),
            )
        )
    return kept, {prefix or ROOT_REPORT: [e.path for e in m] for prefix, m in grouped.items()}


def listed_reports(entries: Sequence[FileEntry]) -> int:
    """How many entries the listing holds once each directory report's files count as
    one: what a load reports as its number of report files."""
    found = report_directories([e.path for e in entries]) if entries else set()
    if not found:
        return len(entries)
    if "" in found:
        return 1
    tops = {d for d in found if "/" not in d}
    nested = found - tops
    inside = 0
    for entry in entries:
        path = entry.path
        cut = path.find("/")
        # the common case first: report directories at the top
        top = cut > 0 and path[:cut] in tops
        inside += top or (bool(nested) and _owner(path, found) is not None)
    return len(entries) - inside + len(found)


def root_is_report(parts: ListingParts) -> bool:
    """Whether the reports directory itself is one directory report (a Harbor job given as
    the directory to serve): then its trial folders, each a part of the listing of its own,
    are only ever looked at with it."""
    return "" in report_directories([e.path for e in parts.entries.get("", ())])


def _owner(path: str, found: set[str]) -> str | None:
    """The outermost report directory holding `path`, as a prefix ending in "/" ("" for
    the reports directory itself), or None."""
    if "" in found:
        return ""
    parts = path.split("/")
    for end in range(1, len(parts)):
        directory = "/".join(parts[:end])
        if directory in found:
            return directory + "/"
    return None


def _etag_of(members: Sequence[FileEntry]) -> str:
    """One version for the objects of a directory report in a bucket ("" for local files):
    a digest of every member's ETag, so a rewritten object, whichever it is, changes it."""
    if not any(e.etag for e in members):
        return ""
    return hashlib.sha256("\0".join(e.etag for e in members).encode()).hexdigest()[:32]
