"""Sign-off records: storing and reading release-review decisions, one file per record.

A sign-off is data, not cache. Each record is one JSON file in the reviews directory,
written the way git writes a loose object or Maildir delivers a message: the bytes go to
a hidden temp file in the same directory, are fsynced, and are then hard-linked to a
final name made of the record's time and the SHA-256 of its bytes. `os.link` fails when
the final name exists, so an existing record is never replaced, even when two processes
sign the same release in the same second; a crash before the link leaves only a hidden
`.signoff-*.tmp` file, which readers ignore (and list once stale) and the next writer
removes once stale. A writer holds a lock on the directory while it looks for the same
sign-off made moments before (a double submission) and links its own.

While it holds the lock a writer also chains the record to the one before it
(dashboard.data.records.ledger) and, when asked, has its exact bytes signed (dashboard.data.records.sshsig),
storing the signature beside it as `<record>.json.sig`. A policy's registration (`relidash
policy register`) is a record of the same chain, read back by `read_ledger_files` and left
out of `read_signoffs`.

The record itself is built elsewhere (dashboard.analysis.review); what it must hold is
checked in one place, dashboard.data.records.schema, on write and on read.

Must not: edit or delete a stored record (there is deliberately no update or delete
function; the only files this module removes are its own temp files), write anywhere but the
reviews directory, or raise for a bad file when reading (a bad file is a SignoffProblem).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import stat
import time as clock
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from dashboard.data.records.ledger import (
    PREVIOUS,
    PREVIOUS_SHA256,
    UNCHAINED_SHA256,
    LedgerFile,
    next_links,
)
from dashboard.data.records.schema import (
    DECISIONS,
    MAX_SIGNOFF_BYTES,
    REGISTRATION,
    REQUIRED_KEYS,
    parse_signoff,
    parse_time,
    record_errors,
)
from dashboard.data.sources.digests import file_digests

__all__ = [
    "DECISIONS",
    "MAX_SIGNOFF_BYTES",
    "REQUIRED_KEYS",
    "AlreadyRecorded",
    "ReviewsDirError",
    "SignoffProblem",
    "StoredSignoff",
    "check_reviews_dir",
    "default_reviews_dir",
    "file_sha256",
    "read_ledger_files",
    "read_signoffs",
    "serialise_signoff",
    "write_signoff",
]

TEMP_SUFFIX = ".tmp"
TEMP_PREFIX = ".signoff-"
STALE_TEMP_SECONDS = 600  # a writer holds its temp file for milliseconds, never minutes
REPEAT_SECONDS = 60  # the same sign-off again within this is a double submission
_FILE_MODE = 0o644
_NAME_TIME = re.compile(r"(\d{8}T\d{6}Z)-")


class ReviewsDirError(Exception):
    """The reviews directory cannot be used as asked (a usage problem, not a bad record)."""


@dataclass(frozen=True)
class StoredSignoff:
    path: Path
    record: dict[str, Any]
    sha256: str  # of the file's bytes, as stored
    data: bytes = b""  # the file's bytes, as stored: what its signature is over
    signature: bytes | None = None  # the `.sig` file beside it, if any


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


def write_signoff(
    reviews_dir: Path, record: dict[str, Any], *, sign: Callable[[bytes], bytes] | None = None
) -> Path:
    """Store one record as a new file and return its path; never replaces a stored record.

    The record is chained to the one before it (data.ledger: `previous`, `previous_sha256`)
    while the directory is locked, so concurrent writers all land, one after another in
    one chain. With `sign` (bytes -> an armored SSH signature, data.sshsig) the exact bytes
    stored are signed and the signature stored beside them as `<record>.json.sig`, linked
    before the record so a record never appears without the signature made for it.

    The same sign-off again (a stored record equal to this one but for its time, made
    less than REPEAT_SECONDS apart) is refused with AlreadyRecorded, which names the
    stored one: a double click or a retried command keeps one record. Raises ValueError
    for a record that read_signoffs would reject or that is not JSON (NaN, a non-string
    key, an unserialisable value), and ReviewsDirError when the directory cannot be
    created or written. Temp files that killed writers left are removed once stale.
    """
    if not isinstance(record, dict):
        raise ValueError(f"a sign-off record must be a dict, not {type(record).__name__}")
    errors = record_errors(record)
    if errors:
        raise ValueError(f"the sign-off record cannot be stored: {'; '.join(errors)}")
    try:
        serialise_signoff(record)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"the sign-off record cannot be stored: it is not JSON ({exc})") from exc
    time = parse_time(record["time"])
    if time is None:  # unreachable: record_errors checked it
        raise ValueError(f"the sign-off record cannot be stored: bad time {record['time']!r}")
    _ensure_dir(reviews_dir)
    # the check for a repeat, the chain's end and the link are one step for every writer
    with _locked(reviews_dir):
        _remove_stale_temps(reviews_dir)
        if record.get("kind") != REGISTRATION:
            earlier = _repeat_of(reviews_dir, record, time)
            if earlier is not None:
                raise AlreadyRecorded(earlier, record)
        chained = dict(record, **next_links(read_ledger_files(reviews_dir)))
        data = serialise_signoff(chained)
        stem = f"{time.strftime('%Y%m%dT%H%M%SZ')}-{hashlib.sha256(data).hexdigest()[:16]}"
        signature = sign(data) if sign is not None else None
        return _store(reviews_dir, stem, data, signature)


def _store(reviews_dir: Path, stem: str, data: bytes, signature: bytes | None) -> Path:
    """Link the signature (if any), then the record; temp files removed either way."""
    temps: list[Path] = []
    try:
        if signature is not None:
            name = _free_name(reviews_dir, stem)
            temps.append(_write_temp(reviews_dir, signature))
            sig_final = _link_unique(temps[-1], reviews_dir, f"{name}.json", signature, ".sig")
            temps.append(_write_temp(reviews_dir, data))
            final = _link_unique(temps[-1], reviews_dir, name, data)
            if final.name + ".sig" != sig_final.name:  # a writer without the lock took the name
                os.rename(sig_final, final.with_name(final.name + ".sig"))
            return final
        temps.append(_write_temp(reviews_dir, data))
        return _link_unique(temps[-1], reviews_dir, stem, data)
    finally:
        # After the link the record has its own name; the temp name is only clutter,
        # and failing to remove it must not report a stored record as lost.
        for temp in temps:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _free_name(reviews_dir: Path, stem: str) -> str:
    counter = 0
    while True:
        name = stem if counter == 0 else f"{stem}-{counter}"
        if not (reviews_dir / f"{name}.json").exists():
            return name
        counter += 1


def read_ledger_files(reviews_dir: Path) -> list[LedgerFile]:
    """Every `*.json` of the reviews directory as the chain sees it: its name, the SHA-256
    of its bytes, and its record (None when it is not one). A missing directory is empty."""
    try:
        with os.scandir(reviews_dir) as entries:
            names = sorted(
                e.name for e in entries if e.name.endswith(".json") and not e.name.startswith(".")
            )
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _dir_error(reviews_dir, exc, reading=True) from exc
    files = []
    for name in names:
        raw = _raw_bytes(reviews_dir / name)
        if raw is None:
            continue
        parsed = parse_signoff(raw)
        record = parsed if not isinstance(parsed, str) else None
        time = str(record.get("time", "")) if record is not None else ""
        files.append(LedgerFile(name, hashlib.sha256(raw).hexdigest(), record, time))
    return files


def _raw_bytes(path: Path) -> bytes | None:
    """A regular file's bytes (at most MAX_SIGNOFF_BYTES + 1), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(MAX_SIGNOFF_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def read_signature(record_path: Path) -> bytes | None:
    """The `.sig` file beside a record, or None when there is none (or it cannot be read)."""
    return _raw_bytes(record_path.with_name(record_path.name + ".sig"))


class AlreadyRecorded(ValueError):
    """The same sign-off is stored already, made less than REPEAT_SECONDS before or after."""

    def __init__(self, stored: StoredSignoff, record: dict[str, Any]) -> None:
        self.stored = stored
        self.path = stored.path
        super().__init__(
            f"this sign-off is already recorded ({record['decision']} of {record['suite']} "
            f"{record['release']} by {record['by']} at {stored.record['time']}, in "
            f"{stored.path.name}); the same sign-off within {REPEAT_SECONDS} seconds is "
            "not recorded twice"
        )


_NOT_COMPARED = ("time", PREVIOUS, PREVIOUS_SHA256, UNCHAINED_SHA256)


def _without_time(record: dict[str, Any]) -> dict[str, Any]:
    """A record but for its time and its place in the chain: what a repeat has in common."""
    return {key: value for key, value in record.items() if key not in _NOT_COMPARED}


def _repeat_of(reviews_dir: Path, record: dict[str, Any], time: datetime) -> StoredSignoff | None:
    """A stored record equal to `record` but for its time, less than REPEAT_SECONDS away.

    Only names whose time stamp (relidash's own naming) falls in the window are read, so a
    long history costs a directory listing, not a read of every record.
    """
    window = timedelta(seconds=REPEAT_SECONDS)
    wanted = _without_time(record)
    try:
        with os.scandir(reviews_dir) as entries:
            names = [entry.name for entry in entries if entry.name.endswith(".json")]
    except OSError as exc:
        raise _dir_error(reviews_dir, exc, reading=True) from exc
    for name in sorted(names):
        match = _NAME_TIME.match(name)
        if match is None:
            continue
        stamped = datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=time.tzinfo)
        # the name's stamp is cut to the second
        if not -window <= stamped - time.replace(microsecond=0) <= window:
            continue
        path = reviews_dir / name
        result = _read_one(path)
        if isinstance(result, str):
            continue
        data, stored = result
        stored_time = parse_time(stored["time"])
        if stored_time is None or abs(stored_time - time) >= window:
            continue
        if _without_time(stored) == wanted:
            return StoredSignoff(path, stored, hashlib.sha256(data).hexdigest())
    return None


@contextlib.contextmanager
def _locked(reviews_dir: Path) -> Iterator[None]:
    """An exclusive lock on the reviews directory itself (no lock file to leave behind).

    Where the file system cannot lock a directory (some network mounts), writers go on
    without it: the link still never replaces a record; only a repeat made in the same
    instant by two processes could then be stored twice.
    """
    try:
        fd = os.open(reviews_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _dir_error(reviews_dir, exc) from exc
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _remove_stale_temps(reviews_dir: Path) -> None:
    """Remove this module's own temp files that no writer has touched for minutes."""
    for name, _age in _stale_temps(reviews_dir):
        with contextlib.suppress(OSError):
            os.unlink(reviews_dir / name)


def _stale_temps(reviews_dir: Path) -> Iterator[tuple[str, float]]:
    """(name, age in seconds) of each of this module's temp files older than
    STALE_TEMP_SECONDS: a writer killed between its temp file and the link left it."""
    now = clock.time()
    try:
        with os.scandir(reviews_dir) as entries:
            found = [
                entry
                for entry in entries
                if entry.name.startswith(TEMP_PREFIX) and entry.name.endswith(TEMP_SUFFIX)
            ]
    except OSError:
        return
    for entry in found:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        age = now - info.st_mtime
        if stat.S_ISREG(info.st_mode) and age > STALE_TEMP_SECONDS:
            yield entry.name, age


def _write_temp(reviews_dir: Path, data: bytes) -> Path:
    """Write `data` to a new hidden temp file in reviews_dir, fsynced; return its path.

    The first half of write_signoff, separate so a test can stop a writer between it and
    the link (a crash there must leave no record). The directory must exist.
    """
    while True:
        temp = reviews_dir / f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
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

    Reads each `*.json` not starting with "." (each checked by signoff_schema, the one
    strict check); a file that is not a record is a problem and never stops the rest.
    Hidden temp files are ignored while a writer may still be at work, and listed as
    problems once stale. A missing directory holds no records. Raises ReviewsDirError
    only when the directory itself cannot be listed.
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
        if record.get("kind") == REGISTRATION:
            continue  # a policy's registration: in the ledger, not a sign-off
        time = parse_time(record["time"])
        if time is None:  # unreachable: parse_signoff checked it
            problems.append(SignoffProblem(name, "has an unreadable time"))
            continue
        digest = hashlib.sha256(data).hexdigest()
        stored.append((time, StoredSignoff(path, record, digest, data, read_signature(path))))
    stored.sort(key=lambda item: item[0], reverse=True)  # stable: names stay ascending
    for name, age in sorted(_stale_temps(reviews_dir)):
        problems.append(
            SignoffProblem(
                name,
                f"is a sign-off its writer left unfinished {age / 60:.0f} minutes ago "
                "(no record was stored; the next sign-off removes it)",
            )
        )
    return [signoff for _, signoff in stored], problems


def file_sha256(path: Path) -> str | None:
    """SHA-256 (hex) of a file's bytes, or None when it does not exist."""
    try:
        return file_digests(path)[1]
    except (FileNotFoundError, NotADirectoryError):
        return None


def _link_unique(
    temp: Path, reviews_dir: Path, stem: str, data: bytes, suffix: str = ".json"
) -> Path:
    counter = 0
    while True:
        final = reviews_dir / (f"{stem}{suffix}" if counter == 0 else f"{stem}-{counter}{suffix}")
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
    """The file's bytes and record, or why it is not a sign-off.

    Opened without blocking and checked to be a regular file before a byte is read: a
    FIFO or a device named `*.json` would otherwise hold the reader (a server thread, a
    CLI command) for good.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except IsADirectoryError:
        return "is a directory, not a sign-off file"
    except PermissionError:
        return "cannot be read: permission denied"
    except FileNotFoundError:
        return "disappeared or is a broken symbolic link"
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return "is a directory, not a sign-off file"
        if not stat.S_ISREG(mode):
            return f"is {_file_kind(mode)}, not a regular file; left unread"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(MAX_SIGNOFF_BYTES + 1)
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    finally:
        os.close(fd)
    parsed = parse_signoff(data)
    if isinstance(parsed, str):
        return parsed
    return data, parsed


def _file_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"
