"""Cheap checks of a multivon-eval report file before DuckDB reads it: its size and first
bytes, NaN / Infinity literals (which multivon-eval refuses and DuckDB accepts), and
whether its head shows the fields only 0.19+ writes (which parser to try first).

Reads only. Must not: touch DuckDB, import Streamlit or Altair.
"""

from __future__ import annotations

import codecs
import json

from dashboard.data.sources.digests import DIGEST_CHUNK, chunks, has_constant
from dashboard.data.sources.walk import FileEntry, os_reason

HEAD_BYTES = 64 * 1024
MIB = 1024 * 1024


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


def has_constant_literal(abspath: str) -> bool:
    """Whether the bytes NaN or Infinity occur in the file (a sign, not a verdict)."""
    tail = b""
    for chunk in chunks(abspath, bytearray(DIGEST_CHUNK)):
        if has_constant(tail + chunk[:8], chunk):
            return True
        tail = bytes(chunk[-8:])
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
