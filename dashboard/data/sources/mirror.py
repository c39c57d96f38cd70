"""A local mirror of the objects a load needs, in relidash's own cache directory.

`Mirror.sync` downloads each wanted object whose local copy is missing or whose recorded
(ETag, size, LastModified) differs from the listing's, in parallel threads; each is
written to a temporary name in its final folder, fsynced, given LastModified as its mtime
and renamed into place. The manifest (`manifest.json`, written to a temporary name,
fsynced and renamed) records, per key, the object's identity and the local file's size
and mtime: a copy whose file no longer matches its record (removed, truncated, replaced)
counts as missing. `local_path` gives one object's copy, downloading it on demand (a
transcript read for one case); `drop` removes the copies of deleted objects.

Local files are named by the SHA-256 of their key (`objects/ab/abcd….json`), never by
the key itself: no key can climb out of the root, collide with another on a
case-insensitive or normalising file system, or be read by DuckDB as a glob pattern.
Keys that could not be a path in a reports directory (`a/../b`, `./a`, `a//b`, `/a`)
are refused, each as one problem.

Must not: write, delete or tag an object in the bucket (it only lists, heads and gets);
write outside its root; let one refused or vanished key stop a sync.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashboard.data.names import cache_root
from dashboard.data.sources import (
    Location,
    SourceError,
    failure_reason,
    open_filesystem,
    where,
)
from dashboard.data.sources.objects import ObjectEntry, entry_from_info

if sys.platform != "win32":
    import fcntl

MANIFEST = "manifest.json"
LOCK = "manifest.lock"
OBJECTS = "objects"
FORMAT = "relidash-mirror/1"
_SUFFIX = re.compile(r"\.[A-Za-z0-9]{1,16}$")


@dataclass(frozen=True)
class KeyProblem:
    key: str
    reason: str


@dataclass(frozen=True)
class SyncStats:
    downloaded: int
    bytes: int
    problems: tuple[KeyProblem, ...] = ()  # keys refused or gone since the listing


@dataclass(frozen=True)
class _Record:
    etag: str
    size: int
    last_modified_ns: int
    file_size: int  # the local copy as written, to notice it changed or went
    file_mtime_ns: int

    @property
    def identity(self) -> tuple[str, int, int]:
        return (self.etag, self.size, self.last_modified_ns)


def default_mirror_root(location: Location) -> Path:
    """One mirror per location (and endpoint) under relidash's cache directory."""
    ident = where(location)
    digest = hashlib.sha256(ident.encode("utf-8")).hexdigest()[:16]
    label = re.sub(r"[^A-Za-z0-9._-]", "_", location.bucket)[:63] or "bucket"
    return cache_root() / "mirrors" / f"{location.kind}-{label}-{digest}"


def key_problem(key: str) -> str | None:
    """Why a key cannot stand for a file of a reports directory, or None when it can."""
    if not key:
        return "empty key"
    if "\x00" in key:
        return "key contains a NUL character"
    if key.startswith("/"):
        return "key starts with '/' (an empty path segment)"
    for segment in key.split("/"):
        if segment == "":
            return "key has an empty path segment ('//' or a trailing '/')"
        if segment in (".", ".."):
            return f"key has a '{segment}' path segment"
    return None


def local_name(key: str) -> str:
    """The copy's path under the root: a digest of the key, with the key's suffix."""
    digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
    match = _SUFFIX.search(key.rpartition("/")[2])
    return f"{OBJECTS}/{digest[:2]}/{digest}{match.group(0) if match else ''}"


class Mirror:
    """Local copies of a remote location's objects under `root` (relidash's cache)."""

    def __init__(self, root: Path, location: Location, *, anon: bool = False) -> None:
        if not location.is_remote:
            raise ValueError(f"{location.text} is a local path: it needs no mirror")
        self.root = Path(root)
        self.location = location
        self._anon = anon
        self._where = where(location)  # the URL and endpoint the manifest belongs to
        self._fs: Any = None
        self._fs_lock = threading.Lock()
        self._lock = threading.RLock()
        self._records: dict[str, _Record] = self._read_manifest()
        self._listed: dict[str, ObjectEntry] = {}

    # ---- what is here --------------------------------------------------------------------

    def mirrored_keys(self) -> frozenset[str]:
        """The keys with a recorded local copy."""
        with self._lock:
            return frozenset(self._records)

    def recorded(self, key: str) -> ObjectEntry | None:
        """The identity of the object the local copy of `key` was downloaded as."""
        with self._lock:
            rec = self._records.get(key)
        if rec is None:
            return None
        return ObjectEntry(key, rec.size, rec.etag, rec.last_modified_ns)

    def path_of(self, key: str) -> Path:
        """Where the copy of `key` lives (whether or not it is there)."""
        return self.root / local_name(key)

    def refusal(self, key: str) -> str | None:
        """Why `key` is not mirrored, or None."""
        problem = key_problem(key)
        if problem is None and self.location.kind == "s3" and "?versionId=" in key:
            # s3fs splits "key?versionId=v" into a key and a version on every request
            problem = "key contains '?versionId=', which s3fs reads as an object version"
        return problem

    # ---- downloads -----------------------------------------------------------------------

    def sync(
        self, entries: Sequence[ObjectEntry], keys_wanted: Iterable[str], *, workers: int = 8
    ) -> SyncStats:
        """Make the local copy of every wanted key match `entries` (a fresh listing).

        Downloads what is missing or stale, `workers` at a time; records what it fetched
        even when another download fails, then raises SourceError for that failure (the
        copies that are current stay current). A key refused or deleted since the listing
        is one problem in the result, not an error.
        """
        listed = {e.key: e for e in entries}
        with self._lock:
            self._listed = listed
        problems: list[KeyProblem] = []
        todo: list[ObjectEntry] = []
        for key in dict.fromkeys(keys_wanted):
            entry = listed.get(key)
            if entry is None:
                raise ValueError(f"{key!r} is wanted but not in the listing")
            if (reason := self.refusal(key)) is not None:
                problems.append(KeyProblem(key, reason))
            elif not self._is_current(key, entry):
                todo.append(entry)
        done: dict[str, _Record] = {}
        failure: tuple[str, BaseException] | None = None
        if todo:
            with ThreadPoolExecutor(
                max_workers=max(1, min(workers, len(todo))), thread_name_prefix="relidash-mirror"
            ) as pool:
                futures: dict[Future[_Record], ObjectEntry] = {
                    pool.submit(self._download, entry): entry for entry in todo
                }
                for future in as_completed(futures):
                    entry = futures[future]
                    if future.cancelled():
                        continue
                    exc = future.exception()
                    if exc is None:
                        done[entry.key] = future.result()
                    elif isinstance(exc, FileNotFoundError):
                        problems.append(
                            KeyProblem(entry.key, "deleted from the store since the listing")
                        )
                    elif failure is None:
                        failure = (entry.key, exc)
                        for other in futures:
                            other.cancel()
            self._commit(done, ())
        if failure is not None:
            key, exc = failure
            if isinstance(exc, SourceError):
                raise exc
            raise SourceError(self._download_error(key, exc)) from exc
        problems.sort(key=lambda p: p.key)
        return SyncStats(
            downloaded=len(done),
            bytes=sum(rec.file_size for rec in done.values()),
            problems=tuple(problems),
        )

    def local_path(self, key: str) -> Path:
        """The local copy of `key`, downloaded first when it is missing or stale.

        Stale means: its record differs from the last listing given to `sync`, or its file
        no longer matches the record. A key never listed is looked up with one HEAD.
        Raises FileNotFoundError when the object does not exist, SourceError when it cannot
        be fetched or its key is refused.
        """
        if (reason := self.refusal(key)) is not None:
            raise SourceError(f"{self.location.object_url(key)}: {reason}")
        with self._lock:
            entry = self._listed.get(key)
            rec = self._records.get(key)
        if (
            rec is not None
            and (entry is None or entry.identity == rec.identity)
            and self._file_matches(key, rec)
        ):
            return self.path_of(key)
        try:
            if entry is None:
                entry = self._head(key)
            fetched = self._download(entry)
        except FileNotFoundError as exc:
            raise FileNotFoundError(f"{self.location.object_url(key)} does not exist") from exc
        except SourceError:
            raise
        except Exception as exc:
            raise SourceError(self._download_error(key, exc)) from exc
        self._commit({key: fetched}, ())
        return self.path_of(key)

    def drop(self, keys: Iterable[str]) -> None:
        """Remove the local copies (and records) of `keys`, e.g. objects deleted upstream."""
        self._commit({}, list(keys))

    # ---- one object ----------------------------------------------------------------------

    def _filesystem(self) -> Any:
        with self._fs_lock:
            if self._fs is None:
                self._fs = open_filesystem(self.location, anon=self._anon)
            return self._fs

    def _head(self, key: str) -> ObjectEntry:
        fs = self._filesystem()
        path = self.location.object_path(key)
        fs.invalidate_cache(path)
        info = fs.info(path)
        if info.get("type", "file") != "file":
            raise FileNotFoundError(path)
        return entry_from_info(key, info)

    def _download(self, entry: ObjectEntry) -> _Record:
        fs = self._filesystem()
        target = self.path_of(entry.key)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".part-", dir=target.parent)
        os.close(fd)
        try:
            fs.get_file(self.location.object_path(entry.key), tmp)
            with open(tmp, "rb") as handle:
                os.fsync(handle.fileno())
            stamp = entry.last_modified_ns
            os.utime(tmp, ns=(stamp, stamp))
            st = os.stat(tmp)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return _Record(entry.etag, entry.size, entry.last_modified_ns, st.st_size, st.st_mtime_ns)

    def _is_current(self, key: str, entry: ObjectEntry) -> bool:
        with self._lock:
            rec = self._records.get(key)
        return rec is not None and rec.identity == entry.identity and self._file_matches(key, rec)

    def _file_matches(self, key: str, rec: _Record) -> bool:
        try:
            st = os.stat(self.path_of(key))
        except OSError:
            return False
        return st.st_size == rec.file_size and st.st_mtime_ns == rec.file_mtime_ns

    def _download_error(self, key: str, exc: BaseException) -> str:
        endpoint = self._where[len(self.location.url) :]
        return f"cannot download {self.location.object_url(key)}{endpoint}: {failure_reason(exc)}"

    # ---- the manifest --------------------------------------------------------------------

    def _commit(self, updates: dict[str, _Record], removed: Sequence[str]) -> None:
        """Apply changes to the manifest on disk (re-read under the lock) and write it."""
        if not updates and not removed:
            return
        with self._manifest_lock():
            records = self._read_manifest()
            records.update(updates)
            for key in removed:
                records.pop(key, None)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path_of(key))
            self._write_manifest(records)
            self._records = records

    @contextlib.contextmanager
    def _manifest_lock(self) -> Iterator[None]:
        """This process's threads and other processes on the same root, one at a time."""
        with self._lock:
            self.root.mkdir(parents=True, exist_ok=True)
            with open(self.root / LOCK, "a+b") as handle:
                if sys.platform != "win32":
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
                yield

    def _read_manifest(self) -> dict[str, _Record]:
        """The records on disk; a missing, broken or foreign manifest counts as empty."""
        try:
            document = json.loads((self.root / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if (
            not isinstance(document, dict)
            or document.get("format") != FORMAT
            or document.get("location") != self._where
            or not isinstance(document.get("objects"), dict)
        ):
            return {}
        records: dict[str, _Record] = {}
        for key, row in document["objects"].items():
            if (
                isinstance(row, list)
                and len(row) == 5
                and isinstance(row[0], str)
                and all(isinstance(v, int) and not isinstance(v, bool) for v in row[1:])
            ):
                records[key] = _Record(row[0], row[1], row[2], row[3], row[4])
        return records

    def _write_manifest(self, records: dict[str, _Record]) -> None:
        document = {
            "format": FORMAT,
            "location": self._where,
            "objects": {
                key: [r.etag, r.size, r.last_modified_ns, r.file_size, r.file_mtime_ns]
                for key, r in sorted(records.items())
            },
        }
        fd, tmp = tempfile.mkstemp(prefix=".manifest-", suffix=".tmp", dir=self.root)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, separators=(",", ":"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.root / MANIFEST)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        with contextlib.suppress(OSError):
            dir_fd = os.open(self.root, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
