"""List the report objects under a prefix in object storage: one fresh listing per call.

An object is named by its key relative to the prefix (POSIX, as the store spells it:
`[`, `?`, `*`, spaces and any Unicode kept) and identified by (ETag, size,
LastModified): the triple a later load compares to decide, without a download, that an
object is unchanged. Only `*.json` and `*.eval` keys are report files; "directory"
placeholders (keys ending in `/`) are skipped.

A listing that fails (a wrong or closed endpoint, no credentials, a missing bucket,
access denied, a timeout) raises SourceError naming the URL and the reason; it never
comes back as an empty list, which means only "an existing prefix with no reports".

Must not: download, write, delete or tag an object; trust fsspec's listing cache (it is
cleared before every listing, and each call builds its own filesystem).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from dashboard.data.names import REPORT_SUFFIXES
from dashboard.data.sources import (
    Location,
    SourceError,
    failure_reason,
    missing_package_message,
    open_filesystem,
    s3_endpoint,
    where,
)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class ObjectEntry:
    key: str  # relative to the location's prefix, POSIX separators
    size: int
    etag: str  # without the quotes S3 puts around it; "" when the store gives none
    last_modified_ns: int  # nanoseconds since the epoch, UTC

    @property
    def identity(self) -> tuple[str, int, int]:
        """What must match for an object to count as unchanged: (etag, size, LastModified)."""
        return (self.etag, self.size, self.last_modified_ns)


def is_report_key(key: str) -> bool:
    return key.endswith(REPORT_SUFFIXES) and not key.endswith("/")


def list_objects(
    location: Location, *, anon: bool = False, also: Collection[str] = ()
) -> list[ObjectEntry]:
    """Every `*.json` and `*.eval` object under the location's prefix (and those of the
    keys `also` names, such as relidash.toml), sorted by key.

    One fresh listing: a new filesystem, its cache cleared, `find` over the whole prefix
    (s3fs pages ListObjectsV2 past its 1,000 keys a page).
    """
    if not location.is_remote:
        raise ValueError(f"{location.text} is a local path, not object storage")
    try:
        if location.kind == "s3":
            found = _find_s3(location, anon=anon)
        else:
            fs = open_filesystem(location, anon=anon)
            fs.invalidate_cache()
            found = fs.find(location.root, detail=True, withdirs=False)
            # adlfs's find answers {} for a missing container: nothing found must mean an
            # existing, empty prefix
            if not found and not fs.exists(location.bucket):
                raise FileNotFoundError(f"the bucket or container {location.bucket} does not exist")
    except SourceError:
        raise
    except Exception as exc:
        raise SourceError(f"cannot list {where(location)}: {failure_reason(exc)}") from exc
    base = location.root + "/"
    entries = []
    for name, info in found.items():
        if not isinstance(name, str) or not name.startswith(base):
            continue  # the prefix itself, when it names an object rather than a "folder"
        key = name[len(base) :]
        if not (is_report_key(key) or key in also) or info.get("type", "file") != "file":
            continue
        entries.append(entry_from_info(key, info))
    entries.sort(key=lambda e: e.key)
    return entries


def _find_s3(location: Location, *, anon: bool) -> dict[str, Mapping[str, Any]]:
    """ListObjectsV2 pages of the prefix through botocore itself, as s3fs's `find` names
    them ("bucket/prefix/key" -> the object's Key, Size, ETag, LastModified).

    Not through s3fs: importing it (aiobotocore, httpx) and setting up its client cost a
    fresh process more than the listing that finds the objects unchanged. The same
    credential chain and endpoint (AWS_ENDPOINT_URL, AWS_MAX_ATTEMPTS are botocore's own);
    s3fs still downloads. A missing bucket or a refusal is raised as s3fs raises it
    (FileNotFoundError, PermissionError), so that the message says the same.
    """
    if importlib.util.find_spec("s3fs") is None:  # found, not imported: it downloads
        raise SourceError(missing_package_message(location))
    import botocore.session  # comes with s3fs
    from botocore import UNSIGNED
    from botocore.config import Config
    from botocore.exceptions import ClientError

    client = botocore.session.get_session().create_client(
        "s3",
        endpoint_url=s3_endpoint() or None,
        config=Config(signature_version=UNSIGNED) if anon else None,
    )
    bucket, _, prefix = location.root.partition("/")
    found: dict[str, Mapping[str, Any]] = {}
    try:
        for page in client.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=f"{prefix}/" if prefix else ""
        ):
            for item in page.get("Contents", ()):
                found[f"{bucket}/{item['Key']}"] = item
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if code in ("NoSuchBucket", "NoSuchKey", "404"):
            raise FileNotFoundError(str(exc)) from exc
        if code in _DENIED:
            raise PermissionError(str(exc)) from exc
        raise
    return found


# S3 error codes s3fs turns into PermissionError
_DENIED = frozenset(
    {"AccessDenied", "403", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled",
     "InvalidToken", "ExpiredToken", "AccountProblem"}
)  # fmt: skip


def entry_from_info(key: str, info: Mapping[str, Any]) -> ObjectEntry:
    """An ObjectEntry from an fsspec info dict of s3fs, gcsfs or adlfs."""
    size = info.get("size", info.get("Size", 0))
    return ObjectEntry(
        key=key,
        size=int(size or 0),
        etag=_etag(info),
        last_modified_ns=_modified_ns(info),
    )


def _etag(info: Mapping[str, Any]) -> str:
    for field in ("ETag", "etag", "md5Hash", "generation"):
        value = info.get(field)
        if value:
            return str(value).strip('"')
    return ""


def _modified_ns(info: Mapping[str, Any]) -> int:
    # s3fs: LastModified; adlfs: last_modified; gcsfs: updated (RFC 3339 text) or mtime
    for field in ("LastModified", "last_modified", "updated", "mtime"):
        value = info.get(field)
        if value:
            return datetime_ns(value)
    return 0


def datetime_ns(value: object) -> int:
    """Nanoseconds since the epoch of a datetime or RFC 3339 string, in exact integers."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    if isinstance(value, int | float):
        return int(value * 1_000_000_000)
    if not isinstance(value, datetime):
        raise TypeError(f"not a time: {value!r}")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return ((value - _EPOCH) // timedelta(microseconds=1)) * 1000
