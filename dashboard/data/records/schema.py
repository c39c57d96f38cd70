"""What a sign-off record must look like: the one strict check every reader and writer uses.

`parse_signoff` turns a file's bytes into a record or says, in words that follow the file
name, why they are not one; `record_errors` is the same check for a record about to be
written. Every field a reader uses is checked for its JSON type here, so the readers
(dashboard.analysis.review_history, the pages, the CLI, the packet) can rely on it: a
record whose `evidence` is a string, or an entry without `sha256`, is a problem, not a
traceback further on.

Must not: read or write files (data.signoffs does), or judge whether a record is true
(whether its evidence still holds is analysis.review's question).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from typing import Any

REQUIRED_KEYS = ("suite", "release", "decision", "time", "by")
# a policy's registration (`relidash policy register`): a ledger record, not a sign-off
REGISTRATION = "policy-registration"
REGISTRATION_KEYS = ("kind", "policy_sha256", "time", "by")
DECISIONS = ("approved", "conditional", "rejected")
MAX_SIGNOFF_BYTES = 16 << 20  # far above any real record; keeps a stray huge file cheap
_SHA256 = re.compile(r"[0-9a-f]{64}\Z")
_JSON_TYPES = {
    dict: "an object",
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "true or false",
    type(None): "null",
}
# optional keys a reader uses -> the JSON types they may have
_OPTIONAL: dict[str, tuple[type, ...]] = {
    "base": (str, type(None)),
    "comment": (str,),
    "identity_verified": (bool,),
    "identity": (dict, type(None)),
    "policy_sha256": (str, type(None)),
    "review": (dict,),
    "evidence": (list,),
    "kind": (str,),
    "previous": (str, type(None)),
    "previous_sha256": (str, type(None)),
    "unchained_sha256": (list,),
    "registered_policy": (dict, type(None)),
}
_MAX_SHOWN_ERRORS = 4


def parse_signoff(data: bytes) -> dict[str, Any] | str:
    """The record `data` holds, or why it is not a sign-off (phrased to follow a file name)."""
    if len(data) > MAX_SIGNOFF_BYTES:
        return f"is over {MAX_SIGNOFF_BYTES >> 20} MiB, too large to be a sign-off"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"is not UTF-8 text (invalid byte at offset {exc.start})"
    try:
        record = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        return f"is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except (ValueError, RecursionError) as exc:
        return f"is not valid JSON: {exc}"
    if not isinstance(record, dict):
        return f"holds {json_type(record)}, not a sign-off object"
    errors = record_errors(record)
    if errors:
        shown = errors[:_MAX_SHOWN_ERRORS]
        more = len(errors) - len(shown)
        return "; ".join(shown) + (f"; and {more} more" if more else "")
    return record


def record_errors(record: dict[str, Any]) -> list[str]:
    """Everything wrong with a record, each phrased to follow the file name ([] if nothing)."""
    registration = record.get("kind") == REGISTRATION
    required = REGISTRATION_KEYS if registration else REQUIRED_KEYS
    missing = [key for key in required if key not in record]
    errors: list[str] = []
    if "kind" in record and not registration:
        errors.append(f"has kind {record['kind']!r}, not a kind of record relidash writes")
    if missing:
        listed = ", ".join(repr(key) for key in missing)
        errors.append(f"lacks the required key{'s' if len(missing) > 1 else ''} {listed}")
    digest = record.get("policy_sha256")
    if registration and isinstance(digest, str) and not _SHA256.match(digest):
        errors.append("has 'policy_sha256' that is not 64 lowercase hex digits")
    for key in required:
        if key in record and not isinstance(record[key], str):
            errors.append(f"has {key!r} as {json_type(record[key])}, not a string")
    decision = record.get("decision")
    if isinstance(decision, str) and decision not in DECISIONS:
        errors.append(f"has decision {decision!r}, not one of {', '.join(DECISIONS)}")
    time = record.get("time")
    if isinstance(time, str) and parse_time(time) is None:
        errors.append(
            f"has time {time!r}, not a UTC ISO-8601 time ending in Z (like 2026-12-01T07:35:00Z)"
        )
    for key, types in _OPTIONAL.items():
        if key in record and not isinstance(record[key], types):
            wanted = " or ".join(dict.fromkeys(_JSON_TYPES[t] for t in types))
            errors.append(f"has {key!r} as {json_type(record[key])}, not {wanted}")
    if isinstance(record.get("evidence"), list):
        errors.extend(_evidence_errors(record["evidence"]))
    return errors


def _evidence_errors(evidence: list[Any]) -> list[str]:
    errors = []
    for n, item in enumerate(evidence, start=1):
        where = f"evidence entry {n}"
        if not isinstance(item, dict):
            errors.append(f"has {where} as {json_type(item)}, not an object")
            continue
        path, digest = item.get("path"), item.get("sha256")
        if not isinstance(path, str) or not path:
            errors.append(f"has {where} without a file path ('path')")
        if not isinstance(digest, str) or not _SHA256.match(digest):
            errors.append(f"has {where} without a SHA-256 ('sha256': 64 lowercase hex digits)")
    return errors


def parse_time(value: str) -> datetime | None:
    """A record's UTC time (ISO 8601 ending in Z), or None."""
    if not value.endswith("Z"):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.utcoffset() != timedelta(0):
        return None
    return parsed


def json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _no_constant(name: str) -> Any:
    # NaN and Infinity are not JSON; a record holding one was not written by relidash
    raise ValueError(f"{name} is not a JSON value")
