"""Read single members of a zip archive, Zstandard-compressed ones included.

Inspect's `.eval` logs are zip archives whose members are compressed with Zstandard (zip
method 93), which Python 3.11's `zipfile` cannot open. This reads the central directory
itself (Zip64 included) and decompresses a member's raw bytes with the `zstandard`
package, so that reading three small members of a large log costs three small reads,
not a walk of every entry through `zipfile`. Every member read is checked against the
size and CRC-32 its directory entry records: a truncated Zstandard frame decodes to
fewer bytes without raising.

Must not: write anything, or touch DuckDB.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import BinaryIO

import zstandard

STORED, DEFLATED, ZSTANDARD = 0, 8, 93
_EOCD = b"PK\x05\x06"
_EOCD64 = b"PK\x06\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_CENTRAL = b"PK\x01\x02"
_LOCAL = b"PK\x03\x04"
_EOCD_SIZE = 22
_MAX_COMMENT = 0xFFFF
_CENTRAL_SIZE = 46
_LOCAL_SIZE = 30
_ZIP64_EXTRA = 0x0001
_FULL32 = 0xFFFFFFFF


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


def read_member(handle: BinaryIO, member: Member, max_bytes: int) -> bytes:
    """A member's bytes, decompressed and checked against its size and CRC-32."""
    if member.size > max_bytes:
        raise ArchiveError(
            f"its member {member.name} is {member.size / 2**20:.1f} MiB uncompressed, over the "
            f"{max_bytes / 2**20:g} MiB size limit (raise it with --max-file-mb)"
        )
    handle.seek(member.offset)
    local = handle.read(_LOCAL_SIZE)
    if len(local) < _LOCAL_SIZE or local[:4] != _LOCAL:
        raise ArchiveError(f"its member {member.name} cannot be found where its directory says")
    name_len, extra_len = struct.unpack_from("<HH", local, 26)
    handle.seek(member.offset + _LOCAL_SIZE + name_len + extra_len)
    raw = handle.read(member.compressed_size)
    if len(raw) < member.compressed_size:
        raise ArchiveError(f"its member {member.name} is cut short (the archive is truncated)")
    try:
        data = _decompress(raw, member)
    except (zstandard.ZstdError, zlib.error) as exc:
        raise ArchiveError(f"its member {member.name} fails to decompress ({exc})") from exc
    if len(data) != member.size:
        raise ArchiveError(
            f"its member {member.name} fails to decompress: it gives {len(data)} bytes where "
            f"its directory records {member.size} (damaged or cut short)"
        )
    if zlib.crc32(data) != member.crc:
        raise ArchiveError(
            f"its member {member.name} fails to decompress: its bytes do not match the "
            "checksum its directory records (damaged)"
        )
    return data


def _decompress(raw: bytes, member: Member) -> bytes:
    if member.method == STORED:
        return raw
    if member.method == DEFLATED:
        return zlib.decompress(raw, -15)
    if member.method == ZSTANDARD:
        # Inspect writes large members as several frames; one call reads them all
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        return bytes(reader.readall())
    raise ArchiveError(
        f"its member {member.name} uses zip compression method {member.method}, which relidash "
        "does not read (Inspect writes Zstandard, method 93)"
    )
