"""Find report files under a directory and decide cheaply which ones are worth parsing.

Report files are `*.json` (multivon-eval reports, Inspect JSON logs) and `*.eval`
(Inspect's zip logs); which harness wrote one is decided by its content
(dashboard/data/formats/).

Reads only: files are opened read-only, nothing in the reports directory is created,
changed or deleted. Paths come from the file system walk, never from report content.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import FileIO
from pathlib import Path

import numpy as np
import xxhash

from dashboard.data.formats.protocol import directory_members, directory_stamp, manifest
from dashboard.data.sources.walk import RACY_SECONDS, FileEntry, os_reason

HEAD_BYTES = 64 * 1024
MIB = 1024 * 1024
DIGEST_CHUNK = 1 << 20
# What file_facts' digest starts with: XXH3-128 (an order of magnitude faster than SHA-256)
# tells a changed file from an unchanged one; the SHA-256 a review packet publishes is
# computed only for its evidence files (analysis/review.py evidence_sha256).
FAST_DIGEST = "xxh3-128:"


def precheck_file(entry: FileEntry, max_bytes: int, data: bytes | None = None) -> str | None:
    """Why this file cannot be a report, judged from its size and first bytes; None if it may be.

    `data`: the whole file, already read (its first bytes are judged, not read again).
    """
    if entry.size == 0:
        return "is empty (0 bytes); if it is still being written, reload when it is complete"
    if entry.size > max_bytes:
        return (
            f"is {entry.size / MIB:.1f} MiB, over the {max_bytes / MIB:g} MiB size limit "
            "(raise it with --max-file-mb)"
        )
    if data is not None:
        head, whole = data[:HEAD_BYTES], len(data) <= HEAD_BYTES
    else:
        try:
            with open(entry.abspath, "rb") as handle:
                head = handle.read(HEAD_BYTES)
        except OSError as exc:
            return os_reason(exc)
        whole = len(head) == entry.size
    if b"\x00" in head:
        return "is a binary file, not JSON text"
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=whole)
    except UnicodeDecodeError as exc:
        return f"is not UTF-8 text (invalid byte at offset {exc.start})"
    text = head.removeprefix(codecs.BOM_UTF8).lstrip()
    if not text:
        return "holds only whitespace"
    first = text[:1]
    if first == b"[":
        return "holds a JSON array, not a report object"
    if first != b"{":
        return f"is not a JSON report: it starts with {text[:20].decode('utf-8', 'replace')!r}"
    return None


@dataclass(frozen=True)
class FileFacts:
    digest: str  # FAST_DIGEST and the bytes' XXH3-128: change detection, never published
    # Cheap signs that need an exact check before DuckDB (which accepts both) reads it:
    maybe_constants: bool | None  # the bytes NaN / Infinity occur; None: not looked for
    maybe_deep: bool  # brackets nest deeper than DEEP_NESTING
    leading: bytes = b""  # the first LEADING_BYTES, for telling harnesses apart
    # The whole file, when it is smaller than file_facts' `keep_below`: parsed from these
    # bytes (the ones digested), not read again.
    data: bytes | None = field(default=None, repr=False)
    # The open file's stat before its first byte was read (file_stamp), and the clock
    # then: what unchanged_since_digest compares once the file has been parsed.
    stamp: Stamp | None = None
    opened_ns: int = 0


# (size, mtime, ctime, inode, device): every write changes the ctime, which no tool can
# set back, so a rewrite that keeps the size and restores the mtime still shows here.
Stamp = tuple[int, int, int, int, int]


def file_stamp(st: os.stat_result) -> Stamp:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


# Nesting deeper than this is a sign worth an exact check (multivon-eval writes < 20).
DEEP_NESTING = 200
_CONSTANTS = (b"NaN", b"Infinity")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")
LEADING_BYTES = 256
_ZIP = b"PK"


def file_facts(abspath: str, *, constants: bool = True, keep_below: int = 0) -> FileFacts:
    """Digest and warning signs of a file, in one streamed read.

    Nesting is estimated from the brackets alone (those inside strings count too, which
    can only raise a false alarm that the exact check then clears). Without `constants`,
    NaN / Infinity are left to the caller (the strict parse looks for them at a tenth of
    the cost). A zip archive (an Inspect `.eval` log) is only digested: its bytes are not
    JSON. A file read in one chunk of fewer than `keep_below` bytes is kept in the facts
    (`data`).
    """
    digest = xxhash.xxh3_128()
    found = False
    depth = deepest = 0
    tail = leading = b""
    whole: bytes | None = None
    scratch = _scratch()
    with open(abspath, "rb", buffering=0) as handle:
        opened_ns = time.time_ns()
        stamp = file_stamp(os.fstat(handle.fileno()))
        chunks = _read_chunks(handle, scratch.chunk)
        for chunk in chunks:
            whole = bytes(chunk) if not leading and len(chunk) < keep_below else None
            digest.update(chunk)
            if not leading:
                leading = bytes(chunk[:LEADING_BYTES])
                if leading.startswith(_ZIP):
                    for rest in chunks:
                        digest.update(rest)
                    return FileFacts(
                        FAST_DIGEST + digest.hexdigest(),
                        False,
                        False,
                        leading,
                        stamp=stamp,
                        opened_ns=opened_ns,
                    )
            if constants and not found:
                found = _has_constant(tail + chunk[:8], chunk)  # also one split by the seam
            tail = bytes(chunk[-8:])
            depth, deepest = _bracket_depth(chunk, depth, deepest, scratch)
    return FileFacts(
        FAST_DIGEST + digest.hexdigest(),
        found if constants else None,
        deepest > DEEP_NESTING,
        leading,
        whole,
        stamp,
        opened_ns,
    )


def unchanged_since_digest(abspath: str, facts: FileFacts, *, reread: bool = True) -> bool:
    """Whether the file still holds the bytes file_facts digested, so that a parse made
    since (which read the file again) read those bytes: the stored digest and the numbers
    parsed must be of one version of the file, or a later load that finds the digest
    unchanged keeps numbers of other bytes.

    The file's stat now against its stat when the digest began: any write since changes
    its ctime or size. A file changed within RACY_SECONDS of that read may have changed
    again within the clock's tick, which the stat cannot show: its bytes are digested
    again (the only case that reads the file twice; not without `reread`, for a file
    parsed from the digested bytes themselves). Facts without a stamp (the file could
    not be read) describe no bytes: False.
    """
    if facts.stamp is None or not facts.digest:
        return False
    if os.path.isdir(abspath):  # a directory report: its members' digests again
        try:
            return directory_facts(abspath).digest == facts.digest
        except OSError:
            return False
    try:
        now = file_stamp(os.stat(abspath))
    except OSError:
        return False
    if now != facts.stamp:
        return False
    if not reread or facts.stamp[2] <= facts.opened_ns - RACY_SECONDS * 1e9:
        return True
    try:
        return file_digests(abspath)[0] == facts.digest
    except OSError:
        return False


class _Scratch(threading.local):
    """Buffers file_facts reuses, one set per thread: reading each MiB into a new bytes
    object costs more CPU than reading into one buffer (the kernel maps fresh pages)."""

    def __init__(self) -> None:
        self.chunk = bytearray(DIGEST_CHUNK)
        self.folded = np.zeros(DIGEST_CHUNK + BOUND_BLOCK, dtype=np.uint8)
        self.marks = np.empty(DIGEST_CHUNK + BOUND_BLOCK, dtype=np.bool_)


_SCRATCH: _Scratch | None = None


def _scratch() -> _Scratch:
    global _SCRATCH
    if _SCRATCH is None:  # not at import: most commands never read a file
        _SCRATCH = _Scratch()
    return _SCRATCH


def _chunks(abspath: str | Path, buffer: bytearray) -> Iterator[bytes | bytearray]:
    """The file's bytes, DIGEST_CHUNK at a time: a full chunk is `buffer` itself,
    overwritten by the next one (copy what must be kept); a shorter one is bytes."""
    with open(abspath, "rb", buffering=0) as handle:
        yield from _read_chunks(handle, buffer)


def _read_chunks(handle: FileIO, buffer: bytearray) -> Iterator[bytes | bytearray]:
    view = memoryview(buffer)
    while size := handle.readinto(buffer):
        yield buffer if size == len(buffer) else bytes(view[:size])


def _bracket_depth(
    chunk: bytes | bytearray, depth: int, deepest: int, scratch: _Scratch | None = None
) -> tuple[int, int]:
    """Nesting depth after `chunk` and the deepest reached (exactly, or at least as deep
    when it is not over DEEP_NESTING), from depth `depth` before it.

    A chunk of a large file is bounded by numpy (`_bracket_bound`), which releases the
    interpreter lock: `bytes.translate` held it for a millisecond per MiB, the main
    thread's parse waiting behind it. A bound over DEEP_NESTING is replaced by the exact
    count, so the sign stays exact; small chunks are counted exactly, where numpy's calls
    cost more than they save.
    """
    if len(chunk) < BOUND_MIN_BYTES:
        return _exact_depth(chunk, depth, deepest)
    end, bound = _bracket_bound(chunk, depth, deepest, scratch or _scratch())
    return (end, bound) if bound <= DEEP_NESTING else _exact_depth(chunk, depth, deepest)


def _exact_depth(chunk: bytes | bytearray, depth: int, deepest: int) -> tuple[int, int]:
    """`bytes.translate` deletes every byte but the brackets in one pass. '{' and '['
    have bit 1 set, '}' and ']' do not: +1 / -1 without comparing."""
    brackets = np.frombuffer(chunk.translate(None, _NOT_BRACKETS), dtype=np.int8)
    if not brackets.size:
        return depth, deepest
    running = depth + np.cumsum((brackets & 2) - 1, dtype=np.int64)
    return int(running[-1]), max(deepest, int(running.max()))


# _bracket_bound counts brackets per block of this many bytes: a bound at most this much
# too deep, from a running sum over a 128th of the bytes.
BOUND_BLOCK = 128
BOUND_MIN_BYTES = 64 * 1024


def _bracket_bound(
    chunk: bytes | bytearray, depth: int, deepest: int, scratch: _Scratch
) -> tuple[int, int]:
    """The exact depth after `chunk` and a bound on the deepest reached, never below it
    and less than BOUND_BLOCK above: depth at each block's start plus its opening brackets.

    Each step is a numpy call over the whole chunk, which runs without the interpreter
    lock. Folding bit 5 away makes '{' '[' and '}' ']' two values; their marks are packed
    eight to a byte, so that each 8-byte word of the packed marks holds 64 bytes' and
    its popcount counts them (cheaper than counting the marks as bytes and summing 8
    words by multiplication; the running sum is cheaper per block).
    """
    size = len(chunk)
    if not size:
        return depth, deepest
    padded = -(-size // BOUND_BLOCK) * BOUND_BLOCK
    if padded > scratch.folded.size:
        scratch.folded = np.zeros(padded, dtype=np.uint8)
        scratch.marks = np.empty(padded, dtype=np.bool_)
    folded, marks = scratch.folded[:padded], scratch.marks[:padded]
    np.bitwise_and(np.frombuffer(chunk, dtype=np.uint8), 0xDF, out=folded[:size])
    folded[size:] = 0

    def per_block(value: int) -> np.ndarray:
        np.equal(folded, value, out=marks)
        per_64 = np.bitwise_count(np.packbits(marks).view(np.uint64)).view(np.uint16)
        return ((per_64 & 0xFF) + (per_64 >> 8)).astype(np.int64)  # two 64-byte counts

    opens = per_block(0x5B)
    net = opens - per_block(0x5D)
    ends = np.cumsum(net)
    ends += depth
    return int(ends[-1]), max(deepest, int((ends - net + opens).max()))


def directory_facts(abspath: str) -> FileFacts:
    """A directory report's facts: its digest is that of the list of its JSON files' paths
    and digests (formats/protocol.py manifest), its stamp their summed size and newest
    mtime, as the listing gives them."""
    members = directory_members(abspath)
    digests = [_fast_digest(os.path.join(abspath, name)) for name, _, _ in members]
    size, mtime_ns = directory_stamp(members)
    digest = FAST_DIGEST + xxhash.xxh3_128(manifest(members, digests)).hexdigest()
    # no single inode or ctime: the members' own digests stand for them
    return FileFacts(digest, False, False, b"", stamp=(size, mtime_ns, 0, 0, 0), opened_ns=0)


def _fast_digest(path: str) -> str:
    """file_digests' first digest alone (a directory report's member: no SHA-256)."""
    fast = xxhash.xxh3_128()
    for chunk in _chunks(path, _scratch().chunk):
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
    for chunk in _chunks(path, _scratch().chunk):
        fast.update(chunk)
        sha256.update(chunk)
    return FAST_DIGEST + fast.hexdigest(), sha256.hexdigest()


def has_constant_literal(abspath: str) -> bool:
    """Whether the bytes NaN or Infinity occur in the file (a sign, not a verdict)."""
    tail = b""
    for chunk in _chunks(abspath, _scratch().chunk):
        if _has_constant(tail + chunk[:8], chunk):
            return True
        tail = bytes(chunk[-8:])
    return False


def _has_constant(*parts: bytes | bytearray) -> bool:
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


# Top-level fields multivon-eval 0.19+ writes before `cases`; 0.18 and earlier omit them.
_EVERY_FIELD_MARKERS = (b'"execution"', b'"provider_evidence"')


def head_has_every_field(abspath: str) -> bool:
    """Whether the file's first bytes show the top-level fields only 0.19+ reports write.

    A guess that decides which parser tries a large file first (the strict one expects
    every field), never what the file means: a wrong guess costs time, not numbers.
    """
    try:
        with open(abspath, "rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    return all(marker in head for marker in _EVERY_FIELD_MARKERS)


def strict_json_problem(abspath: str) -> str | None:
    """Parse with Python's strict rules; why multivon-eval's own loader would refuse the file."""

    def refuse(constant: str) -> None:
        raise ValueError(f"holds the literal {constant}, which JSON does not allow")

    try:
        with open(abspath, encoding="utf-8-sig") as handle:
            json.load(handle, parse_constant=refuse)
    except RecursionError:
        return "nests objects or arrays too deeply to be a report (Python's JSON reader gives up)"
    except ValueError as exc:
        text = str(exc)
        if "JSON does not allow" in text:
            return f"{text} (multivon-eval refuses non-finite numbers)"
        return None  # other syntax errors are left to DuckDB's reader, which names them
    except OSError as exc:
        return os_reason(exc)
    return None
