"""The walk of a reports directory: its report files, each with what tells a change
without reading a byte (size, mtime), split into listing parts with a digest each.

A command that loads a large directory begins the walk in child processes before it
imports the rest of relidash (`walk_ahead`): the walk is a stat of every file, which a
warm start in a large directory waits for, and a thread beside the imports would only
contend with them for the interpreter lock. Each child walks a share of the top-level
names and hands back each part's digest and its files, encoded; the load decodes only
the parts whose digest differs from the catalog's.

Reads only: nothing in the reports directory is created, changed or deleted. Must stay
cheap to import (no numpy, no DuckDB): the command imports it before anything heavy.
"""

from __future__ import annotations

import contextlib
import itertools
import marshal
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, NoReturn

import xxhash

from dashboard.data.names import REPORT_SUFFIXES

# A file modified this recently may still be being written: its (size, mtime) is not
# trusted as proof of "unchanged" at the next load (git's "racy clean" rule).
RACY_SECONDS = 2.0


def racy_threshold() -> float:
    """Files modified after this (ns since the epoch) are racy in a walk begun now."""
    return time.time_ns() - RACY_SECONDS * 1e9


class FileEntry(NamedTuple):
    """One listed report file (a named tuple: a warm load makes 100,000 of them)."""

    path: str  # relative to the reports directory, POSIX separators
    abspath: str
    size: int
    mtime_ns: int
    racy: bool
    # An object's ETag (object storage); "" for a local file. size and mtime alone miss an
    # object overwritten in the same second with the same size.
    etag: str = ""


@dataclass(frozen=True)
class FileProblem:
    path: str
    reason: str


def scan_directory(
    root: Path, *, racy_after: float | None = None
) -> tuple[list[FileEntry], list[FileProblem]]:
    """Every `*.json` and `*.eval` under root (recursively, not following directory
    symlinks), in os.walk's order (a directory's files by name, then its subdirectories
    by name), with the problems found by looking."""
    entries: list[FileEntry] = []
    problems: list[FileProblem] = []
    if racy_after is None:
        racy_after = racy_threshold()
    new_entry = tuple.__new__  # FileEntry's own __new__ is Python code: much of the loop
    for directory, prefix, names, sizes, mtimes in _walk(os.path.abspath(root), problems):
        base = directory + os.sep
        entries += [
            new_entry(FileEntry, (prefix + name, base + name, size, mtime, mtime > racy_after, ""))
            for name, size, mtime in zip(names, sizes, mtimes, strict=True)
        ]
    return entries, problems


def _walk(
    root: str, problems: list[FileProblem], top: Sequence[str] | None = None
) -> Iterator[tuple[str, str, list[str], list[int], list[int]]]:
    """Each directory under root, depth first in order: its path, its path relative to
    root (with a trailing "/"), and its report files' names, sizes and mtimes (ns).
    `top`, sorted, stands for root's own listing: a share of it, walked by one of
    several children (`walk_ahead`).

    A warm start of a large directory is mostly this loop, so it stays close
    to the system calls: each directory is listed by name from an open descriptor (no
    DirEntry objects), and each name's stat is fstatat on it (the kernel resolves one
    name, not the whole path). Depth first by a stack rather than recursion: a nested
    function calling itself is a reference cycle, which would keep every entry alive until
    the next garbage collection (a noticeable pause at the exit of a command).
    """
    stack: list[tuple[str, str, Sequence[str] | None]] = [(root, "", top)]
    while stack:
        directory, prefix, listed = stack.pop()
        try:
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue  # as os.walk without onerror: a directory that cannot be listed is skipped
        names: list[str] = []
        sizes: list[int] = []
        mtimes: list[int] = []
        subdirectories: list[tuple[str, str, Sequence[str] | None]] = []
        try:
            base = directory + os.sep
            for name in sorted(os.listdir(fd)) if listed is None else listed:
                if name.startswith("."):
                    continue
                report = name.endswith(REPORT_SUFFIXES)
                try:
                    st = os.stat(name, dir_fd=fd)  # a link is followed, as in os.walk
                except OSError as exc:
                    if report:
                        problems.append(FileProblem(prefix + name, os_reason(exc)))
                    continue
                mode = st.st_mode
                if stat.S_ISREG(mode):
                    if report:
                        names.append(name)
                        sizes.append(st.st_size)
                        mtimes.append(st.st_mtime_ns)
                elif stat.S_ISDIR(mode):
                    if report:
                        problems.append(
                            FileProblem(prefix + name, "is a directory, not a report file")
                        )
                    try:
                        link = stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode)
                    except OSError:
                        link = True
                    if not link:  # a link to a directory is not followed
                        subdirectories.append((base + name, f"{prefix}{name}/", None))
                elif report:
                    problems.append(FileProblem(prefix + name, "is not a regular file"))
        finally:
            os.close(fd)
        yield directory, prefix, names, sizes, mtimes
        stack.extend(reversed(subdirectories))


def os_reason(exc: OSError) -> str:
    if exc.errno is not None and exc.errno == 40:
        return "is a symbolic link loop"
    if isinstance(exc, FileNotFoundError):
        return "disappeared or is a broken symbolic link"
    if isinstance(exc, PermissionError):
        return "cannot be read: permission denied"
    return f"cannot be read: {exc.strerror or exc}"


def part_of(path: str) -> str:
    """The listing part of a path: its top-level directory ('' holds the files at the top);
    queries/load/racy_parts.sql and known_files_of_parts.sql say the same in SQL."""
    head, slash, _ = path.partition("/")
    return head if slash else ""


@dataclass(frozen=True)
class ListingParts:
    """A listing split into its parts, each with a digest of its files' paths, sizes,
    mtimes and ETags in listing order.

    A load stores the digests of the listing it ended with (`listing_parts`, leaving out
    a part with a racy file); the next load compares file by file only the parts whose
    digest differs, so one changed file costs the comparison of its directory's files,
    not of every file. `entries` may decode a part's files only when asked for them.
    """

    digests: dict[str, str]
    entries: Mapping[str, Sequence[FileEntry]]

    @classmethod
    def of(cls, entries: Iterable[FileEntry]) -> ListingParts:
        grouped: dict[str, list[FileEntry]] = {}
        # a part's files are contiguous in a walk; in a bucket's key order the files at
        # the top may come between two directories, and are gathered here
        for part, run in itertools.groupby(entries, key=lambda e: part_of(e.path)):
            grouped.setdefault(part, []).extend(run)
        return cls(
            {part: files_digest(*_columns(files)) for part, files in grouped.items()}, grouped
        )

    def files_of(self, parts: set[str]) -> list[FileEntry]:
        """The listed files of these parts (parts no longer listed have none), in order."""
        return [e for part in self.entries if part in parts for e in self.entries[part]]

    def differing(self, stored: dict[str, str]) -> set[str]:
        """Parts whose digest is not the stored one, and stored parts no longer listed."""
        return {p for p, d in self.digests.items() if stored.get(p) != d} | (
            stored.keys() - self.digests.keys()
        )


def _columns(files: Sequence[FileEntry]) -> tuple[list[str], array[int], array[int], list[str]]:
    return (
        [e.path for e in files],
        array("q", [e.size for e in files]),
        array("q", [e.mtime_ns for e in files]),
        [e.etag for e in files],
    )


def files_digest(paths: list[str], sizes: array[int], mtimes: array[int], etags: list[str]) -> str:
    """A part's digest: its files' paths, sizes, mtimes and ETags, in listing order."""
    digest = xxhash.xxh3_128()
    digest.update("\n".join(paths).encode("utf-8", "surrogateescape"))
    digest.update(sizes.tobytes())
    digest.update(mtimes.tobytes())
    digest.update("\n".join(etags).encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


class WalkedParts(Mapping[str, Sequence[FileEntry]]):
    """The files of each part of a walk done in other processes, decoded at first use
    (a part's columns may come in several chunks, one per share, joined in order)."""

    def __init__(self, root: str, racy_after: float, encoded: dict[str, list[bytes]]) -> None:
        self._base = root + os.sep  # as scan_directory joins them
        self._racy_after = racy_after
        self._encoded = encoded
        self._decoded: dict[str, list[FileEntry]] = {}

    def __getitem__(self, part: str) -> list[FileEntry]:
        files = self._decoded.get(part)
        if files is None:
            paths, sizes, mtimes = _joined_columns(self._encoded[part])
            base, racy_after, new_entry = self._base, self._racy_after, tuple.__new__
            files = [
                new_entry(FileEntry, (path, base + path, size, mtime, mtime > racy_after, ""))
                for path, size, mtime in zip(paths, sizes, mtimes, strict=True)
            ]
            self._decoded[part] = files
        return files

    def __iter__(self) -> Iterator[str]:
        return iter(self._encoded)

    def __len__(self) -> int:
        return len(self._encoded)


class PartsEntries(Sequence[FileEntry]):
    """Every file of a listing, part after part; only its length is known without
    decoding them (a warm load that finds every part unchanged needs no more)."""

    def __init__(self, parts: Mapping[str, Sequence[FileEntry]], count: int) -> None:
        self._parts = parts
        self._count = count
        self._all: list[FileEntry] | None = None

    def _files(self) -> list[FileEntry]:
        if self._all is None:
            self._all = [e for part in self._parts for e in self._parts[part]]
        return self._all

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[FileEntry]:
        return iter(self._files())

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        return self._files()[index]


@dataclass(frozen=True)
class WalkedListing:
    """A walk's result: its files (lazily, when walked ahead), its problems, its parts."""

    entries: Sequence[FileEntry]
    problems: list[FileProblem]
    parts: ListingParts


class _Ahead(NamedTuple):
    root: str
    children: tuple[tuple[int, int], ...]  # each child's pid and the read end of its pipe


_ahead: _Ahead | None = None

# At most this many children walk at once, each a share of the top-level names: on two
# cores, two children walk a large directory side by side, beside the parent's imports. More than the usable cores would only take turns.
MOST_WALKERS = 4


def walk_ahead(directory: str | Path) -> None:
    """Begin walking `directory` in child processes; `take_walk` gets the result.

    Only from a process with no other thread (a fork copies just the calling thread, and
    a lock another thread held would stay locked in the child), on Linux, with SIGCHLD not
    ignored (the children are waited for), and for an existing directory; otherwise
    nothing happens and the load walks itself. The walk is of the directory as it is now,
    before the command opens its catalog: a load another process ends in between is
    repaired by the next one, as when a file changes during a load.

    The top-level names are listed here, once, and split into contiguous shares in name
    order, one child each: a name is walked by exactly one child whatever is created or
    removed meanwhile, and the shares joined in order are the one walk's order.
    """
    global _ahead
    if _ahead is not None or not hasattr(os, "fork") or not _single_threaded():
        return
    if signal.getsignal(signal.SIGCHLD) == signal.SIG_IGN:
        return
    root = os.path.realpath(directory)  # as the source resolves its root
    try:
        top = sorted(name for name in os.listdir(root) if not name.startswith("."))
    except OSError:  # missing, not a directory, unreadable: the load says so itself
        return
    racy_after = racy_threshold()  # one threshold for every share, as for one walk
    # Ctrl-C between a fork and the bookkeeping would leave a child nobody ends, or run
    # the parent's code in the child: both wait until the child is on its own and known
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPPING)
    children: list[tuple[int, int]] = []
    try:
        for share in _shares(top, _walkers()):
            try:
                read_end, write_end = os.pipe()
            except OSError:  # out of descriptors: the load walks itself
                break
            try:
                pid = os.fork()
            except OSError:
                os.close(read_end)
                os.close(write_end)
                break
            if pid == 0:
                for _, earlier in children:
                    os.close(earlier)
                _walk_and_leave(root, share, racy_after, read_end, write_end, mask)
            os.close(write_end)
            children.append((pid, read_end))
        else:  # every share has its child
            _ahead = _Ahead(root, tuple(children))
            return
        _end(children)  # a pipe or a fork failed: the load walks itself
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


_STOPPING = {signal.SIGINT, signal.SIGTERM}


def _walkers() -> int:
    """Children to walk with: the usable cores, at most MOST_WALKERS (walk_ahead runs on
    Linux only, where sched_getaffinity exists)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except OSError:
        usable = os.cpu_count() or 1
    return max(1, min(MOST_WALKERS, usable))


def _shares(top: list[str], walkers: int) -> list[list[str]]:
    """top split into at most `walkers` contiguous, nearly equal shares (one, if empty)."""
    walkers = max(1, min(walkers, len(top)))
    size, more = divmod(len(top), walkers)
    bounds = list(itertools.accumulate([0] + [size + (i < more) for i in range(walkers)]))
    return [top[start:end] for start, end in itertools.pairwise(bounds)]


def _walk_and_leave(
    root: str,
    share: list[str],
    racy_after: float,
    read_end: int,
    write_end: int,
    mask: Iterable[int],
) -> NoReturn:
    """A child: walk its share, write, and leave without running any of the parent's code."""
    status = 1
    try:
        os.close(read_end)
        for stopping in _STOPPING:  # Ctrl-C and a kill end it as they end the parent
            signal.signal(stopping, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        # the caller's pipes (stdout into `| head`, a test's capture) are not held open by
        # a walk that outlives a killed parent
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        _write_all(write_end, _encoded_walk(root, share, racy_after))
        status = 0
    finally:
        os._exit(status)


def take_walk(root: str | Path) -> WalkedListing | None:
    """The walk begun ahead of `root`, or None (none begun, another root, or a child
    failed: the caller walks itself). A walk is taken once."""
    global _ahead
    ahead, _ahead = _ahead, None
    if ahead is None:
        return None
    if ahead.root != os.path.realpath(root):
        _end(ahead.children)
        return None
    shares = []
    failed = False
    try:
        # in turn: a child done before its turn waits on a full pipe, not on the parent
        for pid, fd in ahead.children:
            chunks = []
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            failed = failed or status != 0
            shares.append(b"".join(chunks))
    except BaseException:  # Ctrl-C while waiting: the children are ended, not left zombies
        _end(ahead.children)
        raise
    if failed:
        return None
    try:
        return _decoded_walk(ahead.root, shares)
    except (ValueError, EOFError, TypeError):
        return None


# The longest a walk in a child may take before its result is given up (a hung network
# file system): the caller then cannot tell, and a later check walks itself.
CHILD_WALK_TIMEOUT_SECONDS = 300.0


def walk_in_child(root: str | Path) -> WalkedListing | None:
    """The walk of `root` made by a child Python process (`python -m dashboard.data.sources.walk`),
    or None when it fails or times out.

    For a walk in the background of a threaded process, the server's renewal of its
    directory check (watch.py): a walk in a thread holds the interpreter lock for most of
    its time, and a page's script run beside it gets about half of the
    interpreter meanwhile. The child is started by subprocess (fork and exec at once: safe
    from a threaded process, unlike walk_ahead's fork), walks at a lower priority, and
    hands back its walk encoded; this thread waits on the pipe without the lock and
    decodes only the parts it looks at.
    """
    root = os.path.realpath(root)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "dashboard.data.sources.walk", root],
            # from the directory holding this package: `-m` then finds this code first,
            # whatever the server's working directory and whether relidash is installed
            cwd=Path(__file__).resolve().parents[3],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=CHILD_WALK_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    try:
        return _decoded_walk(root, [done.stdout])
    except (ValueError, EOFError, TypeError):
        return None


def abandon_walk() -> None:
    """End a walk begun ahead that nothing took (the command stopped before its load)."""
    global _ahead
    ahead, _ahead = _ahead, None
    if ahead is not None:
        _end(ahead.children)


def _end(children: Iterable[tuple[int, int]]) -> None:
    for pid, fd in children:
        with contextlib.suppress(OSError):
            os.close(fd)  # a child still writing gets EPIPE and leaves
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGTERM)
            os.waitpid(pid, 0)


def _single_threaded() -> bool:
    """Whether this process runs one thread, counting those Python did not start (a
    native library's). Known on Linux only; elsewhere the load walks itself (macOS
    forbids much of what a forked child of a threaded process might touch)."""
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _encoded_walk(
    root: str, top: list[str] | None = None, racy_after: float | None = None
) -> bytes:
    """The walk of root (or of its `top` names) as a child hands it over: each part's
    digest and its files' columns, encoded apart, so that the parent decodes only the
    parts it looks at."""
    if racy_after is None:
        racy_after = racy_threshold()
    problems: list[FileProblem] = []
    columns: dict[str, tuple[list[str], array[int], array[int]]] = {}
    for _, prefix, names, sizes, mtimes in _walk(root, problems, top):
        paths, part_sizes, part_mtimes = columns.setdefault(
            part_of(prefix),
            ([], array("q"), array("q")),  # a prefix ends with "/"
        )
        paths += [prefix + name for name in names]
        part_sizes.extend(sizes)
        part_mtimes.extend(mtimes)
    digests: dict[str, str] = {}
    encoded: dict[str, bytes] = {}
    count = 0
    for part, (paths, part_sizes, part_mtimes) in columns.items():
        if not paths:
            continue  # a directory without report files is in no part, as in ListingParts.of
        count += len(paths)
        digests[part] = files_digest(paths, part_sizes, part_mtimes, [""] * len(paths))
        encoded[part] = marshal.dumps((paths, part_sizes.tobytes(), part_mtimes.tobytes()))
    problem_rows = [(p.path, p.reason) for p in problems]
    return marshal.dumps((root, racy_after, count, problem_rows, digests, encoded))


def _decoded_walk(root: str, shares: Sequence[bytes]) -> WalkedListing:
    """The walk the shares make joined in order. The files at the top may lie in several
    shares: that part's digest is then made here, over its files in order; every other
    part is in one share, with the digest its child made."""
    count = 0
    racy_after = 0.0
    at_top: list[FileProblem] = []  # a walk names the top's problems before any below
    below: list[FileProblem] = []
    digests: dict[str, str] = {}
    encoded: dict[str, list[bytes]] = {}
    for data in shares:
        walked_root, racy_after, share_count, problems, share_digests, share_encoded = (
            marshal.loads(data)
        )
        if walked_root != root:
            raise ValueError("a walk of another directory")
        count += share_count
        for path, reason in problems:
            (below if "/" in path else at_top).append(FileProblem(path, reason))
        for part, digest in share_digests.items():
            encoded.setdefault(part, []).append(share_encoded[part])
            digests[part] = digest
    if "" in encoded:  # a walk lists the top's files first
        digests = {"": digests.pop("")} | digests
        encoded = {"": encoded.pop("")} | encoded
        if len(encoded[""]) > 1:
            paths, sizes, mtimes = _joined_columns(encoded[""])
            digests[""] = files_digest(paths, sizes, mtimes, [""] * len(paths))
    parts = WalkedParts(root, racy_after, encoded)
    return WalkedListing(PartsEntries(parts, count), at_top + below, ListingParts(digests, parts))


def _joined_columns(chunks: Sequence[bytes]) -> tuple[list[str], array[int], array[int]]:
    paths: list[str] = []
    sizes, mtimes = array("q"), array("q")
    for chunk in chunks:
        chunk_paths, chunk_sizes, chunk_mtimes = marshal.loads(chunk)
        paths += chunk_paths
        sizes.frombytes(chunk_sizes)
        mtimes.frombytes(chunk_mtimes)
    return paths, sizes, mtimes


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


if __name__ == "__main__":  # walk_in_child's child: the walk of argv[1], encoded, on stdout
    if hasattr(os, "nice"):  # not on Windows, where the walk runs at the usual priority
        with contextlib.suppress(OSError):
            os.nice(10)  # background work: a page being drawn comes first
    _write_all(sys.stdout.fileno(), _encoded_walk(os.path.realpath(sys.argv[1])))
