"""What a load learns of a listed file in one streamed read: its fast digest (what tells a
changed file from an unchanged one), its first bytes (which harness wrote it), signs that
need an exact check before DuckDB reads it (NaN / Infinity, deep nesting), and its stat
when the read began, compared again once it is parsed.

Reads only: files are opened read-only, nothing in the reports directory is created,
changed or deleted. Paths come from the file system walk, never from report content.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np
import xxhash

from dashboard.data.sources.digests import (
    DIGEST_CHUNK,
    FAST_DIGEST,
    directory_members,
    directory_stamp,
    fast_digest,
    file_digests,
    has_constant,
    manifest,
    read_chunks,
)
from dashboard.data.sources.walk import RACY_SECONDS


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
        chunks = read_chunks(handle, scratch.chunk)
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
                found = has_constant(tail + chunk[:8], chunk)  # also one split by the seam
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
    digests = [fast_digest(os.path.join(abspath, name)) for name, _, _ in members]
    size, mtime_ns = directory_stamp(members)
    digest = FAST_DIGEST + xxhash.xxh3_128(manifest(members, digests)).hexdigest()
    # no single inode or ctime: the members' own digests stand for them
    return FileFacts(digest, False, False, b"", stamp=(size, mtime_ns, 0, 0, 0), opened_ns=0)
