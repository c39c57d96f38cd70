"""Read single members of a zip archive, Zstandard-compressed ones included.

Inspect's `.eval` logs are zip archives whose members are compressed with Zstandard (zip
method 93), which Python 3.11's `zipfile` cannot open. This reads the central directory
itself (Zip64 included) and decompresses a member's raw bytes with the `zstandard`
package, so that reading three small members of a large log costs three small reads,
not a walk of every entry through `zipfile`. Every member read is checked against the
size and CRC-32 its directory entry records: a truncated Zstandard frame decodes to
fewer bytes without raising. Decompression streams and stops one byte past the recorded
size, so what a member costs is bounded by what its directory claims (itself bounded by
the caller's limit), never by what its compressed bytes expand to.

Must not: write anything, or touch DuckDB.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

import zstandard

STORED, DEFLATED, ZSTANDARD = 0, 8, 93
_EOCD = b"PK\x05\x06"
_EOCD64 = b"PK\x06\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
# How a zip archive opens: a local file header, or the end record of an empty archive.
ZIP_MAGIC = (_LOCAL, _EOCD)
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF
_CENTRAL_SIZE = 46
_LOCAL_SIZE = 30
_ZIP64_EXTRA = 0x0001
_FULL32 = 0xFFFFFFFF
_CHUNK = 1 << 20  # bytes decompressed, or compressed bytes read, at a time
LIMIT_HINT = " (raise it with --max-file-mb)"


class ArchiveError(Exception):
    """The archive or one of its members cannot be read; the message says why."""


@dataclass(frozen=True)
class Member:
    name: str
    method: int
    crc: int
    compressed_size: int
    size: int
    offset: int  # of its local file header


def read_directory(handle: BinaryIO, file_size: int) -> dict[str, Member]:
    """Every member by name (a name written twice: the later entry, as zip readers do)."""
    tail_size = min(file_size, _EOCD_SIZE + _MAX_COMMENT)
    handle.seek(file_size - tail_size)
    tail = handle.read(tail_size)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < _EOCD_SIZE:
        raise ArchiveError(
            "is not a complete zip archive: it has no end-of-central-directory record "
            "(truncated, or still being written)"
        )
    (_, _, _, count, size, offset, _) = struct.unpack_from("<4H2LH", tail, at + 4)
    if _FULL32 in (size, offset) or count == 0xFFFF:
        count, size, offset = _zip64_directory(handle, file_size - tail_size + at)
    if offset + size > file_size:
        raise ArchiveError(
            "is not a complete zip archive: its central directory lies beyond the end of "
            "the file (truncated)"
        )
    handle.seek(offset)
    directory = handle.read(size)
    members: dict[str, Member] = {}
    pos = 0
    for _ in range(count):
        if directory[pos : pos + 4] != _CENTRAL:
            raise ArchiveError("is a damaged zip archive: its central directory is malformed")
        (method, _, _, crc, csize, usize, name_len, extra_len, comment_len) = struct.unpack_from(
            "<HHHLLLHHH", directory, pos + 10
        )
        (local_offset,) = struct.unpack_from("<L", directory, pos + 42)
        start = pos + _CENTRAL_SIZE
        name = directory[start : start + name_len].decode("utf-8", "replace")
        extra = directory[start + name_len : start + name_len + extra_len]
        if _FULL32 in (csize, usize, local_offset):
            usize, csize, local_offset = _zip64_sizes(extra, usize, csize, local_offset)
        members[name] = Member(name, method, crc, csize, usize, local_offset)
        pos = start + name_len + extra_len + comment_len
    return members


def _zip64_directory(handle: BinaryIO, eocd_at: int) -> tuple[int, int, int]:
    """(entries, size, offset) of the central directory from the Zip64 records."""
    handle.seek(max(eocd_at - 20, 0))
    locator = handle.read(20)
    if locator[:4] != _EOCD64_LOCATOR:
        raise ArchiveError("is a damaged zip archive: its Zip64 directory locator is missing")
    (record_at,) = struct.unpack_from("<Q", locator, 8)
    handle.seek(record_at)
    record = handle.read(56)
    if record[:4] != _EOCD64:
        raise ArchiveError("is a damaged zip archive: its Zip64 directory record is missing")
    count, size, offset = struct.unpack_from("<QQQ", record, 32)
    return int(count), int(size), int(offset)


def _zip64_sizes(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    """The 64-bit values a Zip64 extra field holds for the 32-bit fields set to 0xFFFFFFFF."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack_from("<HH", extra, pos)
        body = extra[pos + 4 : pos + 4 + length]
        if tag == _ZIP64_EXTRA:
            values = list(struct.unpack_from(f"<{len(body) // 8}Q", body))
            if usize == _FULL32 and values:
                usize = values.pop(0)
            if csize == _FULL32 and values:
                csize = values.pop(0)
            if offset == _FULL32 and values:
                offset = values.pop(0)
            return usize, csize, offset
        pos += 4 + length
    raise ArchiveError("is a damaged zip archive: a Zip64 entry has no Zip64 sizes")


def read_member(
    handle: BinaryIO, member: Member, max_bytes: int, hint: str = LIMIT_HINT
) -> bytearray:
    """A member's bytes, decompressed and checked against its size and CRC-32.

    Decompression streams into a buffer of the size the directory records (at most
    `max_bytes`) and stops one byte past it: a member that claims a few bytes but inflates
    to gigabytes costs its claim, never its contents. `hint` says how to raise the limit.
    """
    if member.size > max_bytes:
        raise ArchiveError(
            f"its member {member.name} is {_amount(member.size)} uncompressed, over the "
            f"{max_bytes / 2**20:g} MiB size limit{hint}"
        )
    handle.seek(member.offset)
    local = handle.read(_LOCAL_SIZE)
    if len(local) < _LOCAL_SIZE or local[:4] != _LOCAL:
        raise ArchiveError(f"its member {member.name} cannot be found where its directory says")
    name_len, extra_len = struct.unpack_from("<HH", local, 26)
    handle.seek(member.offset + _LOCAL_SIZE + name_len + extra_len)
    source = _Slice(handle, member.compressed_size)
    data = bytearray(member.size)
    try:
        got, more = _decompress_into(source, member, memoryview(data))
    except (zstandard.ZstdError, zlib.error) as exc:
        if source.cut_short:
            raise ArchiveError(_cut_short(member)) from exc
        raise ArchiveError(f"its member {member.name} fails to decompress ({exc})") from exc
    if source.cut_short:
        raise ArchiveError(_cut_short(member))
    if more:
        raise ArchiveError(
            f"its member {member.name} decompresses past {_amount(member.size)}, the size its "
            "directory records (a damaged or forged archive); relidash stops reading it there"
        )
    if got != member.size:
        raise ArchiveError(
            f"its member {member.name} fails to decompress: it gives {got} bytes where "
            f"its directory records {member.size} (damaged or cut short)"
        )
    if zlib.crc32(data) != member.crc:
        raise ArchiveError(
            f"its member {member.name} fails to decompress: its bytes do not match the "
            "checksum its directory records (damaged)"
        )
    return data


class _Slice:
    """The next `size` bytes of a file, read in pieces (a file-like for the decompressors)."""

    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.left = size
        self.cut_short = False

    def read(self, size: int = -1) -> bytes:
        want = self.left if size < 0 else min(size, self.left)
        piece = self.handle.read(want) if want > 0 else b""
        self.left -= len(piece)
        if len(piece) < want:
            self.cut_short = True
            self.left = 0
        return piece


def _decompress_into(source: _Slice, member: Member, out: memoryview) -> tuple[int, bool]:
    """Fill `out` with the member's decompressed bytes: (bytes written, whether the member
    holds more than `out` takes). Never decompresses more than one byte past `out`."""
    if member.method == STORED:
        got = _fill(source.read, out)
        return got, bool(source.read(1))
    if member.method == DEFLATED:
        return _inflate_into(source, out)
    if member.method == ZSTANDARD:
        # Inspect writes large members as several frames; the reader reads them all
        reader = zstandard.ZstdDecompressor().stream_reader(
            source,  # type: ignore[arg-type]  # any object with read(), as documented
            read_size=_CHUNK,
            read_across_frames=True,
        )
        got = 0
        while got < len(out):
            n = reader.readinto(out[got : got + _CHUNK])
            if n == 0:
                break
            got += n
        return got, bool(reader.read(1))
    raise ArchiveError(
        f"its member {member.name} uses zip compression method {member.method}, which relidash "
        "does not read (Inspect writes Zstandard, method 93)"
    )


def _fill(read: Callable[[int], bytes], out: memoryview) -> int:
    got = 0
    while got < len(out):
        piece = read(min(_CHUNK, len(out) - got))
        if not piece:
            break
        out[got : got + len(piece)] = piece
        got += len(piece)
    return got


def _inflate_into(source: _Slice, out: memoryview) -> tuple[int, bool]:
    """Raw deflate into `out`, asking zlib for no more than the room left (plus one byte,
    to see whether the stream holds more)."""
    inflater = zlib.decompressobj(-15)
    got = 0
    while not inflater.eof:
        pending = inflater.unconsumed_tail or source.read(_CHUNK)
        if not pending:
            raise zlib.error("the compressed data ends before its end-of-stream marker")
        piece = inflater.decompress(pending, len(out) - got + 1)  # 0 would mean unbounded
        if got + len(piece) > len(out):
            out[got:] = piece[: len(out) - got]
            return len(out), True
        out[got : got + len(piece)] = piece
        got += len(piece)
    return got, False


def _cut_short(member: Member) -> str:
    return f"its member {member.name} is cut short (the archive is truncated)"


def _amount(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size:,} bytes"
