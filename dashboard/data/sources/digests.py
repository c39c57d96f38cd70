"""A report file's bytes read in chunks, and their digests: the fast one that tells a
changed file from an unchanged one, and the SHA-256 a review publishes. A directory report
(a Harbor job) is digested as the list of its JSON files' paths and digests. And one
sign found in bytes: the NaN / Infinity literals multivon-eval refuses.

Reads only. Must not: import anything above the sources wing.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Iterator, Sequence
from io import FileIO
from pathlib import Path

import xxhash

DIGEST_CHUNK = 1 << 20
_CONSTANTS = (b"NaN", b"Infinity")  # JSON allows neither; DuckDB reads both
# What file_facts' digest starts with: XXH3-128 (an order of magnitude faster than SHA-256)
# tells a changed file from an unchanged one; the SHA-256 a review packet publishes is
# computed only for its evidence files (analysis/review.py evidence_sha256).
FAST_DIGEST = "xxh3-128:"


class _Buffer(threading.local):
    """One chunk buffer per thread: reading each MiB into a new bytes object costs more CPU
    than reading into one buffer (the kernel maps fresh pages)."""

    def __init__(self) -> None:
        self.chunk = bytearray(DIGEST_CHUNK)


_BUFFER = _Buffer()


def _buffer() -> bytearray:
    return _BUFFER.chunk


def chunks(abspath: str | Path, buffer: bytearray) -> Iterator[bytes | bytearray]:
    """The file's bytes, DIGEST_CHUNK at a time: a full chunk is `buffer` itself,
    overwritten by the next one (copy what must be kept); a shorter one is bytes."""
    with open(abspath, "rb", buffering=0) as handle:
        yield from read_chunks(handle, buffer)


def read_chunks(handle: FileIO, buffer: bytearray) -> Iterator[bytes | bytearray]:
    view = memoryview(buffer)
    while size := handle.readinto(buffer):
        yield buffer if size == len(buffer) else bytes(view[:size])


def fast_digest(path: str) -> str:
    """file_digests' first digest alone (a directory report's member: no SHA-256)."""
    fast = xxhash.xxh3_128()
    for chunk in chunks(path, _buffer()):
        fast.update(chunk)
    return FAST_DIGEST + fast.hexdigest()


def file_digests(path: str | Path) -> tuple[str, str]:
    """(file_facts' digest, SHA-256 in hex) of a file's bytes, in one read; of a directory
    report, those of its manifest of its JSON files' digests."""
    if os.path.isdir(path):
        members = directory_members(str(path))
        pairs = [file_digests(os.path.join(path, name)) for name, _, _ in members]
        fast_manifest = manifest(members, [fast for fast, _ in pairs])
        sha_manifest = manifest(members, [sha for _, sha in pairs])
        return (
            FAST_DIGEST + xxhash.xxh3_128(fast_manifest).hexdigest(),
            hashlib.sha256(sha_manifest).hexdigest(),
        )
    fast, sha256 = xxhash.xxh3_128(), hashlib.sha256()
    for chunk in chunks(path, _buffer()):
        fast.update(chunk)
        sha256.update(chunk)
    return FAST_DIGEST + fast.hexdigest(), sha256.hexdigest()


def _json_stats(root: str) -> list[tuple[str, os.stat_result]]:
    """(path relative to `root`, stat) of each `.json` file under a directory report,
    sorted. Only JSON files count, as only they are listed; a harness writes its results
    there last."""
    found: list[tuple[str, os.stat_result]] = []
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".json"):
                continue
            full = os.path.join(top, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            found.append((os.path.relpath(full, root).replace(os.sep, "/"), st))
    found.sort(key=lambda item: item[0])
    return found


def directory_members(root: str) -> list[tuple[str, int, int]]:
    """(path relative to `root`, size, mtime_ns) of each `.json` file under a directory
    report, sorted: what its listed size and mtime and its digest are made of."""
    return [(name, st.st_size, st.st_mtime_ns) for name, st in _json_stats(root)]


def directory_stamp(members: Sequence[tuple[str, int, int]]) -> tuple[int, int]:
    """A directory report's (size, mtime_ns): the sum of its members' sizes and the newest
    mtime, as the listing gives it."""
    return sum(size for _, size, _ in members), max((m for _, _, m in members), default=0)


def directory_stat(root: str) -> tuple[int, int, int]:
    """A directory report's (size, mtime_ns, ctime_ns) from its JSON files: summed size,
    newest mtime and newest ctime (which every write moves and no tool sets back)."""
    stats = [st for _, st in _json_stats(root)]
    return (
        sum(st.st_size for st in stats),
        max((st.st_mtime_ns for st in stats), default=0),
        max((st.st_ctime_ns for st in stats), default=0),
    )


def manifest(members: Sequence[tuple[str, int, int]], digests: Sequence[str]) -> bytes:
    """The bytes a directory report's digest is taken of: each member's path and digest."""
    return json.dumps(
        [[name, digest] for (name, _, _), digest in zip(members, digests, strict=True)],
        separators=(",", ":"),
    ).encode()


def has_constant(*parts: bytes | bytearray) -> bool:
    """Whether NaN or Infinity occurs in any part.

    Each word is found from its first byte, which `find` looks for with memchr, then
    checked where it occurs: in reports 'N' and 'I' are rare (a few per KiB at most), and
    `word in part`, a substring search, costs more than memchr's scan for one byte."""
    for part in parts:
        for word in _CONSTANTS:
            first = word[:1]
            at = part.find(first)
            while at != -1:
                if part.startswith(word, at):
                    return True
                at = part.find(first, at + 1)
    return False
