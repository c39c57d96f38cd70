"""Sign-off records: storing and reading release-review decisions, one file per record.

A sign-off is data, not cache. Each record is one JSON file in the reviews directory,
written the way git writes a loose object or Maildir delivers a message: the bytes go to
a hidden temp file in the same directory, are fsynced, and are then hard-linked to a
final name made of the record's time and the SHA-256 of its bytes. `os.link` fails when
the final name exists, so an existing record is never replaced, even when two processes
sign the same release in the same second; a crash before the link leaves only a hidden
`.*.tmp` file, which readers ignore.

The record itself is built elsewhere (dashboard.analysis.review) and is opaque here apart
from the required keys checked on write and on read.

Must not: edit or delete a stored record (there is deliberately no update or delete
function; the only file this module removes is its own temp file), write anywhere but the
reviews directory, or raise for a bad file when reading (a bad file is a SignoffProblem).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dashboard.data.scan import file_digests

REQUIRED_KEYS = ("suite", "release", "decision", "time", "by")
DECISIONS = ("approved", "conditional", "rejected")
TEMP_SUFFIX = ".tmp"
MAX_SIGNOFF_BYTES = 16 << 20  # far above any real record; keeps a stray huge file cheap
_FILE_MODE = 0o644
_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}


class ReviewsDirError(Exception):
    """The reviews directory cannot be used as asked (a usage problem, not a bad record)."""


@dataclass(frozen=True)
class StoredSignoff:
    path: Path
    record: dict[str, Any]
    sha256: str  # of the file's bytes, as stored


@dataclass(frozen=True)
class SignoffProblem:
    file: str  # the file's name inside the reviews directory
    reason: str  # reads after the name: "<file> is not valid JSON: ..."


def default_reviews_dir() -> Path:
    """`$XDG_DATA_HOME/relidash/reviews`, or `~/.local/share/relidash/reviews`.

    Data, not cache: a sign-off must survive a cache clean. A relative XDG_DATA_HOME is
    ignored, as the XDG Base Directory specification asks.
    """
    base = os.environ.get("XDG_DATA_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "relidash" / "reviews"


def check_reviews_dir(reviews_dir: Path, reports_dir: Path | None) -> None:
    """Refuse a reviews directory that is, or is inside, the reports directory."""
    if reports_dir is None:
        return
    try:
        reviews = reviews_dir.resolve()
        reports = reports_dir.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on 3.11
        raise ReviewsDirError(
            f"the reviews directory {reviews_dir} cannot be resolved ({exc}); choose another directory for sign-offs"
        ) from exc
    if reviews.is_relative_to(reports):
        raise ReviewsDirError(
            f"the reviews directory {reviews_dir} is inside the reports directory {reports_dir}, "
            "and relidash never writes into a reports directory; choose a reviews directory outside it"
        )


def serialise_signoff(record: dict[str, Any]) -> bytes:
    """The exact bytes stored for a record: sorted keys, 2-space indent, UTF-8, no NaN."""
    return (
        json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    ).encode("utf-8")


def write_signoff(reviews_dir: Path, record: dict[str, Any]) -> Path:
    """Store one record as a new file and return its path; never replaces a stored record.

    The same record stored twice is one record: the existing path is returned. Raises
    ValueError for a record that read_signoffs would reject or that is not JSON (NaN, a
    non-string key, an unserialisable value), and ReviewsDirError when the directory
    cannot be created or written.
    """
    if not isinstance(record, dict):
        raise ValueError(f"a sign-off record must be a dict, not {type(record).__name__}")
    errors = _record_errors(record)
    if errors:
        raise ValueError(f"the sign-off record cannot be stored: {'; '.join(errors)}")
    try:
        data = serialise_signoff(record)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the sign-off record cannot be stored: it is not JSON ({exc})") from exc
    time = _parse_time(record["time"])
    if time is None:  # unreachable: _record_errors checked it
        raise ValueError(f"the sign-off record cannot be stored: bad time {record['time']!r}")
    stem = f"{time.strftime('%Y%m%dT%H%M%SZ')}-{hashlib.sha256(data).hexdigest()[:16]}"
    _ensure_dir(reviews_dir)
    temp = _write_temp(reviews_dir, data)
    try:
        final = _link_unique(temp, reviews_dir, stem, data)
    finally:
        # After the link the record has its own name; the temp name is only clutter, and
        # failing to remove it must not report a stored record as lost.
        with contextlib.suppress(OSError):
            os.unlink(temp)
    return final


def _write_temp(reviews_dir: Path, data: bytes) -> Path:
    """Write `data` to a new hidden temp file in reviews_dir, fsynced; return its path.

    The first half of write_signoff, separate so a test can stop a writer between it and
    the link (a crash there must leave no record). The directory must exist.
    """
    while True:
        temp = reviews_dir / f".signoff-{os.getpid()}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, _FILE_MODE)
        except FileExistsError:
            continue
        except OSError as exc:
            raise _dir_error(reviews_dir, exc) from exc
        break
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise _dir_error(reviews_dir, exc) from exc
    return temp


def read_signoffs(reviews_dir: Path) -> tuple[list[StoredSignoff], list[SignoffProblem]]:
    """Every stored record, newest first (by its time, then by file name), and every bad file.

    Reads each `*.json` not starting with "."; hidden temp files are ignored. A missing
    directory holds no records. Raises ReviewsDirError only when the directory itself
    cannot be listed.
    """
    try:
        with os.scandir(reviews_dir) as entries:
            names = sorted(
                entry.name
                for entry in entries
                if entry.name.endswith(".json") and not entry.name.startswith(".")
            )
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise _dir_error(reviews_dir, exc, reading=True) from exc
    stored: list[tuple[datetime, StoredSignoff]] = []
    problems: list[SignoffProblem] = []
    for name in names:
        path = reviews_dir / name
        result = _read_one(path)
        if isinstance(result, str):
            problems.append(SignoffProblem(name, result))
            continue
        data, record = result
        time = _parse_time(record["time"])
        if time is None:  # unreachable: _record_errors checked it
            problems.append(SignoffProblem(name, "has an unreadable time"))
            continue
        stored.append((time, StoredSignoff(path, record, hashlib.sha256(data).hexdigest())))
    stored.sort(key=lambda item: item[0], reverse=True)  # stable: names stay ascending
    return [signoff for _, signoff in stored], problems


def file_sha256(path: Path) -> str | None:
    """SHA-256 (hex) of a file's bytes, or None when it does not exist."""
    try:
        return file_digests(path)[1]
    except (FileNotFoundError, NotADirectoryError):
        return None


def _link_unique(temp: Path, reviews_dir: Path, stem: str, data: bytes) -> Path:
    counter = 0
    while True:
        final = reviews_dir / (f"{stem}.json" if counter == 0 else f"{stem}-{counter}.json")
        try:
            os.link(temp, final)
        except FileExistsError:
            if _same_bytes(final, data):
                return final
            counter += 1
            continue
        except OSError as exc:
            unsupported = exc.errno in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV)
            reason = f"its file system refuses a hard link: {exc.strerror or exc}"
            raise _dir_error(reviews_dir, exc, reason=reason if unsupported else None) from exc
        try:
            _fsync_dir(reviews_dir)
        except OSError as exc:
            raise _dir_error(reviews_dir, exc) from exc
        return final


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(len(data) + 1) == data
    except OSError:
        return False


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _ensure_dir(reviews_dir: Path) -> None:
    try:
        reviews_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _dir_error(reviews_dir, exc) from exc


def _dir_error(
    reviews_dir: Path, exc: OSError, *, reading: bool = False, reason: str | None = None
) -> ReviewsDirError:
    """One sentence naming the directory, what went wrong, and what to do."""
    if reason is None:
        if _is_non_directory(reviews_dir):
            reason = "it is a file, not a directory"
        elif isinstance(exc, NotADirectoryError):
            blocker = next((p for p in reviews_dir.parents if _is_non_directory(p)), None)
            reason = f"{blocker or 'part of its path'} is a file, not a directory"
        elif isinstance(exc, PermissionError):
            reason = "permission denied"
        elif exc.errno == errno.EROFS:
            reason = "it is on a read-only file system"
        else:
            reason = exc.strerror or str(exc)
    verb = "read" if reading else "write"
    return ReviewsDirError(
        f"the reviews directory {reviews_dir} cannot be {'read' if reading else 'written'} "
        f"({reason}); choose a directory relidash can {verb} for sign-offs"
    )


def _is_non_directory(path: Path) -> bool:
    try:
        return path.exists() and not path.is_dir()
    except OSError:
        return False


def _read_one(path: Path) -> tuple[bytes, dict[str, Any]] | str:
    """The file's bytes and record, or why it is not a sign-off."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_SIGNOFF_BYTES + 1)
    except IsADirectoryError:
        return "is a directory, not a sign-off file"
    except PermissionError:
        return "cannot be read: permission denied"
    except FileNotFoundError:
        return "disappeared or is a broken symbolic link"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if len(data) > MAX_SIGNOFF_BYTES:
        return f"is over {MAX_SIGNOFF_BYTES >> 20} MiB, too large to be a sign-off"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"is not UTF-8 text (invalid byte at offset {exc.start})"
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        return f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except (ValueError, RecursionError) as exc:
        return f"is not valid JSON: {exc}"
    if not isinstance(record, dict):
        return f"holds {_json_type(record)}, not a sign-off object"
    errors = _record_errors(record)
    if errors:
        return "; ".join(errors)
    return data, record


def _record_errors(record: dict[str, Any]) -> list[str]:
    """What is wrong with a record's required keys, each phrased to follow the file name."""
    missing = [key for key in REQUIRED_KEYS if key not in record]
    errors: list[str] = []
    if missing:
        listed = ", ".join(repr(key) for key in missing)
        errors.append(f"lacks the required key{'s' if len(missing) > 1 else ''} {listed}")
    for key in REQUIRED_KEYS:
        if key in record and not isinstance(record[key], str):
            errors.append(f"has {key!r} as {_json_type(record[key])}, not a string")
    decision = record.get("decision")
    if isinstance(decision, str) and decision not in DECISIONS:
        errors.append(f"has decision {decision!r}, not one of {', '.join(DECISIONS)}")
    time = record.get("time")
    if isinstance(time, str) and _parse_time(time) is None:
        errors.append(
            f"has time {time!r}, not a UTC ISO-8601 time ending in Z (like 2026-12-01T07:35:00Z)"
        )
    return errors


def _parse_time(value: str) -> datetime | None:
    if not value.endswith("Z"):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.utcoffset() != timedelta(0):
        return None
    return parsed


def _json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)
