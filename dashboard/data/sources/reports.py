"""The report files of a source, as a load sees them: a local directory or a prefix in
object storage, behind one interface.

A load takes one listing of the source (`listing`: the directory walk, or one fresh
object listing), asks for local copies of the files it will parse (`fetch`: nothing to do
for a directory; new and changed objects downloaded into the mirror, in parallel), reads
the source's relidash.toml (`config_file`) and, later, one report file for the case a
page shows (`open_file`). An entry carries what tells a change without reading a byte:
size, mtime (an object's LastModified) and, for an object, its ETag.

Keys are filtered as the directory walk filters names: a key with a segment that starts
with "." is hidden (skipped), a key that could not be a path (`a//b`, `a/../b`) is one
problem, and a "folder" named like a report file is one problem, as a directory named
`x.json` is. So a bucket and a directory holding the same files give the same numbers.

Must not: write into a reports directory or a bucket (a bucket source only lists, heads
and gets); touch DuckDB.
"""

from __future__ import annotations

import hashlib
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from dashboard.data.names import (
    CONFIG_NAME,
    MEMORY,
    REPORT_SUFFIXES,
    cache_root,
    default_catalog_path,
    resolve_catalog_path,
)
from dashboard.data.sources import Location, parse_location, where
from dashboard.data.sources.mirror import Mirror, default_mirror_root
from dashboard.data.sources.objects import ObjectEntry, list_objects
from dashboard.data.sources.walk import (
    FileEntry,
    FileProblem,
    ListingParts,
    WalkedListing,
    scan_directory,
    take_walk,
)

DOWNLOAD_WORKERS = 16  # parallel GETs: a download waits on the network, not a core


class NotInSource(FileNotFoundError):
    """A path that would lead out of the reports directory (`a/../../x`, a symlink out)."""


@dataclass(frozen=True)
class Listing:
    """One look at a source: its report files and the problems found by looking alone."""

    entries: Sequence[FileEntry]
    problems: list[FileProblem]
    objects: tuple[ObjectEntry, ...] = field(default=(), repr=False)  # the raw listing
    walked_parts: ListingParts | None = field(default=None, repr=False)  # a walk ahead's

    @classmethod
    def of_walk(cls, walked: WalkedListing) -> Listing:
        """The listing a walk made elsewhere gives (ahead of a command, in a child)."""
        return cls(walked.entries, walked.problems, walked_parts=walked.parts)

    @cached_property
    def parts(self) -> ListingParts:
        """The listing's parts (top-level directories), each with its digest."""
        if self.walked_parts is not None:
            return self.walked_parts
        return ListingParts.of(self.entries)


class ReportSource(ABC):
    """Where a catalog's report files come from."""

    ident: str  # what the catalog records as its source (meta `reports_dir`)
    label: str  # as the user gave it, for messages and captions
    local_root: Path | None  # the directory, for a local source

    @abstractmethod
    def listing(self) -> Listing:
        """The source's report files now. SourceError when it cannot be listed."""

    @abstractmethod
    def fetch(self, listing: Listing, paths: Sequence[str]) -> list[FileProblem]:
        """Make each path's `abspath` hold its bytes as listed; the paths that are gone
        since the listing come back as problems. SourceError when a download fails."""

    @abstractmethod
    def config_file(self) -> Path | None:
        """A local file holding the source's relidash.toml, or None when it has none."""

    @abstractmethod
    def config_name(self) -> str:
        """relidash.toml's name as a person finds it (a path, or the object's URL)."""

    @abstractmethod
    def open_file(self, path: str) -> Path:
        """A local file holding the report file `path` (relative to the source) as it is
        now. FileNotFoundError when it is gone; SourceError when it cannot be fetched."""

    def copy_version(self, path: str) -> str:
        """The ETag the local copy of `path` was fetched as ("" for a local file)."""
        return ""

    def start_listing(self) -> None:
        """Begin the next `listing` in the background (a command overlaps it with its own
        start); nothing to do for a directory, whose walk is local."""
        return None

    @abstractmethod
    def default_catalog(self) -> Path:
        """Where this source's catalog lives unless --catalog says otherwise."""

    def holds(self, path: Path) -> bool:
        """Whether a local path is inside the reports location (relidash never writes there)."""
        return False


class DirectorySource(ReportSource):
    """A local reports directory, searched recursively."""

    def __init__(self, root: Path) -> None:
        self.label = str(root)
        self.root = root.resolve()
        self.local_root = self.root
        self.ident = str(self.root)

    def listing(self) -> Listing:
        walked = take_walk(self.root)  # begun ahead by the command, in a child process
        if walked is not None:
            return Listing.of_walk(walked)
        entries, problems = scan_directory(self.root)
        return Listing(entries, problems)

    def fetch(self, listing: Listing, paths: Sequence[str]) -> list[FileProblem]:
        return []  # the files are read where they are

    def config_file(self) -> Path:
        return self.root / CONFIG_NAME

    def config_name(self) -> str:
        return str(self.root / CONFIG_NAME)

    def open_file(self, path: str) -> Path:
        target = (self.root / path).resolve()
        if not target.is_relative_to(self.root):
            raise NotInSource(f"{path} is outside the reports directory")
        return target

    def default_catalog(self) -> Path:
        return default_catalog_path(self.root)

    def holds(self, path: Path) -> bool:
        return path.resolve().is_relative_to(self.root)


class BucketSource(ReportSource):
    """A prefix in object storage, read through a local mirror in relidash's cache."""

    def __init__(
        self,
        location: Location,
        *,
        anon: bool = False,
        mirror_root: Path | None = None,
        workers: int = DOWNLOAD_WORKERS,
    ) -> None:
        if not location.is_remote:
            raise ValueError(f"{location.text} is a local path, not object storage")
        self.location = location
        self.anon = anon
        self.label = location.url
        self.local_root = None
        self.ident = where(location)  # the URL and, when not the provider's own, the endpoint
        self.mirror = Mirror(mirror_root or default_mirror_root(location), location, anon=anon)
        self.workers = workers
        self.downloaded = 0  # objects (and bytes) this source fetched, for progress lines
        self.downloaded_bytes = 0
        self._lock = threading.Lock()
        self._listed = False
        self._has_config = False
        self._pending: Future[list[ObjectEntry]] | None = None

    def start_listing(self) -> None:
        """List in a background thread; the next `listing` takes its result. A CLI calls
        this first, so the round trips overlap opening the catalog and importing the rest."""
        future: Future[list[ObjectEntry]] = Future()

        def run() -> None:
            try:
                future.set_result(self._list_now())
            except BaseException as exc:  # handed to the caller of listing()
                future.set_exception(exc)

        with self._lock:
            self._pending = future
        threading.Thread(target=run, name="relidash-listing", daemon=True).start()

    def _list_now(self) -> list[ObjectEntry]:
        return list_objects(self.location, anon=self.anon, also=(CONFIG_NAME,))

    def listing(self) -> Listing:
        with self._lock:
            pending, self._pending = self._pending, None
        objects = tuple(pending.result() if pending is not None else self._list_now())
        # tell the mirror what is current: a local copy is judged against this listing
        self.mirror.sync(objects, [])
        with self._lock:
            self._listed = True
            self._has_config = any(o.key == CONFIG_NAME for o in objects)
        entries: list[FileEntry] = []
        problems: list[FileProblem] = []
        folders: set[str] = set()
        for obj in objects:
            if obj.key == CONFIG_NAME or _hidden(obj.key):
                continue
            reason = self.mirror.refusal(obj.key)
            if reason is not None:
                problems.append(FileProblem(obj.key, f"cannot be loaded: {reason}"))
                continue
            segments = obj.key.split("/")
            folders.update(
                "/".join(segments[: i + 1])
                for i, segment in enumerate(segments[:-1])
                if segment.endswith(REPORT_SUFFIXES)
            )
            entries.append(
                FileEntry(
                    path=obj.key,
                    abspath=str(self.mirror.path_of(obj.key)),
                    size=obj.size,
                    mtime_ns=obj.last_modified_ns,
                    racy=False,  # an object is written whole: no half-written state to see
                    etag=obj.etag,
                )
            )
        keys = {e.path for e in entries}
        problems += [
            FileProblem(folder, "is a directory, not a report file")
            for folder in sorted(folders - keys)
        ]
        return Listing(entries, problems, objects)

    def fetch(self, listing: Listing, paths: Sequence[str]) -> list[FileProblem]:
        listed = {o.key for o in listing.objects}
        wanted = [*paths, *([CONFIG_NAME] if CONFIG_NAME in listed else [])]
        stats = self.mirror.sync(listing.objects, wanted, workers=self.workers)
        with self._lock:
            self.downloaded += stats.downloaded
            self.downloaded_bytes += stats.bytes
        self.mirror.drop(self.mirror.mirrored_keys() - listed)  # objects deleted upstream
        return [
            FileProblem(p.key, f"cannot be loaded: {p.reason}")
            for p in stats.problems
            if p.key != CONFIG_NAME  # gone since the listing: the source has none now
        ]

    def config_file(self) -> Path | None:
        self._ensure_listed()
        with self._lock:
            if not self._has_config:
                return None
        try:
            return self.mirror.local_path(CONFIG_NAME)
        except FileNotFoundError:
            return None

    def config_name(self) -> str:
        return self.location.object_url(CONFIG_NAME)

    def open_file(self, path: str) -> Path:
        self._ensure_listed()
        return self.mirror.local_path(path)

    def copy_version(self, path: str) -> str:
        recorded = self.mirror.recorded(path)
        return recorded.etag if recorded is not None else ""

    def default_catalog(self) -> Path:
        return default_remote_catalog_path(self.location)

    def _ensure_listed(self) -> None:
        """A process that has not listed yet lists once, so no stale copy is trusted."""
        with self._lock:
            listed = self._listed
        if not listed:
            self.listing()


def _hidden(key: str) -> bool:
    """Whether the directory walk would skip this key's file: a segment starting with "."
    ("." and ".." themselves are refused by the mirror instead, as keys that are no path)."""
    return any(s.startswith(".") and s not in (".", "..") for s in key.split("/"))


def default_remote_catalog_path(location: Location) -> Path:
    """One catalog per location (and endpoint) under relidash's cache, as for directories."""
    digest = hashlib.sha256(where(location).encode("utf-8")).hexdigest()[:16]
    label = re.sub(r"[^A-Za-z0-9._-]", "_", location.bucket)[:63] or "bucket"
    return cache_root() / f"{location.kind}-{label}-{digest}.duckdb"


def open_source(text: str, *, anon: bool = False) -> ReportSource:
    """The source `text` names: a local directory or an s3://, gs://, az:// prefix.

    SourceError for a URL that cannot be used (unknown scheme, no bucket, the package
    not installed: the message names the extra).
    """
    location = parse_location(text)
    if not location.is_remote:
        assert location.path is not None
        return DirectorySource(location.path)
    return BucketSource(location, anon=anon)


def as_source(reports: Path | ReportSource) -> ReportSource:
    """A source for what callers pass: a directory's Path, or a source already built."""
    return reports if isinstance(reports, ReportSource) else DirectorySource(Path(reports))


def catalog_location(source: ReportSource, catalog: str | None) -> str:
    """The catalog to use for `source`: `catalog` if given, else the source's default.

    A local catalog may not be inside a reports directory (CatalogError).
    """
    if source.local_root is not None:
        return resolve_catalog_path(source.local_root, catalog)
    if catalog == MEMORY:
        return MEMORY
    return str((Path(catalog) if catalog else source.default_catalog()).resolve())
