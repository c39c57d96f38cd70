"""Where reports come from: a local directory or a prefix in object storage.

`parse_location` turns what a user typed (`DIR`, `s3://bucket/prefix`, `gs://…`,
`az://…`, `abfs://…`) into a `Location`; `open_filesystem` gives the fsspec filesystem
for a remote one (s3fs, gcsfs, adlfs: optional extras, imported only when a URL needs
them). Credentials come from each SDK's own chain (environment, profile, instance role);
`anon=True` reads a public bucket unsigned. S3-compatible stores are reached through the
standard `AWS_ENDPOINT_URL` / `AWS_ENDPOINT_URL_S3` variables.

Must not: write, delete or tag an object (relidash only reads a bucket); import a cloud
package at import time (a machine without the extras still imports this floor); read or
pick credentials itself; show one (`redact_secrets`: credentials a user put into an
endpoint URL, `http://KEY:SECRET@host`, or a signed query string never reach a message,
a page, or the catalog's record of its source).
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Location",
    "SourceError",
    "failure_reason",
    "open_filesystem",
    "parse_location",
    "redact_secrets",
    "s3_endpoint",
]

# userinfo of any URL in a text: scheme://user:password@ (the scheme kept, the rest
# hidden); not in Azure's az://container@account/..., where it names the container
_USERINFO = re.compile(
    r"(?P<scheme>\b(?!(?:az|abfss?|wasbs?)://)[A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s\"'<>]+@",
    re.IGNORECASE,
)
# a query parameter whose name says it holds a secret: SigV4's X-Amz-Credential,
# X-Amz-Signature and X-Amz-Security-Token, an Azure SAS `sig`, `token`, `password`, `key`
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;][^=&;#\s\"'<>]*?(?:sig|token|secret|passw|pwd|key|credential|auth)"
    r"[^=&;#\s\"'<>]*=)[^&;#\s\"'<>]*",
    re.IGNORECASE,
)
REDACTED = "***"


def redact_secrets(text: str) -> str:
    """`text` with the credentials of every URL in it hidden: `http://KEY:SECRET@host`
    becomes `http://***@host`, and `?X-Amz-Signature=abc` becomes `?X-Amz-Signature=***`."""
    text = _USERINFO.sub(rf"\g<scheme>{REDACTED}@", text)
    return _SECRET_PARAM.sub(rf"\g<name>{REDACTED}", text)


class SourceError(Exception):
    """A source cannot be read as asked; the message is one line naming the URL and why,
    with any credential in a URL hidden (it reaches terminals, logs and served pages)."""

    def __init__(self, message: object = "") -> None:
        super().__init__(redact_secrets(str(message)))


# scheme as typed -> (kind, fsspec package, relidash extra)
_SCHEMES: dict[str, tuple[str, str, str]] = {
    "s3": ("s3", "s3fs", "s3"),
    "gs": ("gs", "gcsfs", "gcs"),
    "gcs": ("gs", "gcsfs", "gcs"),
    "az": ("az", "adlfs", "azure"),
    "abfs": ("az", "adlfs", "azure"),
    "abfss": ("az", "adlfs", "azure"),
}
_URL = re.compile(r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<rest>.*)$", re.DOTALL)
_ONE_LINE_MAX = 300


@dataclass(frozen=True)
class Location:
    """A local directory (`path`) or a prefix in a bucket (`kind`, `bucket`, `prefix`).

    `prefix` has no leading or trailing slash ("" is the whole bucket); object keys are
    relative to it. `account` is an Azure storage account given as
    `az://container@account.blob.core.windows.net/…`, else "".
    """

    text: str
    kind: str = "local"  # "local", "s3", "gs" or "az"
    scheme: str = ""  # as typed, lower-cased: "s3", "gs", "gcs", "az", "abfs", "abfss"
    bucket: str = ""
    prefix: str = ""
    account: str = ""
    host: str = ""  # the part after "@" in an Azure URL, kept for `url`
    path: Path | None = None

    @property
    def is_remote(self) -> bool:
        return self.kind != "local"

    @property
    def url(self) -> str:
        """The location as one string, for messages (a local path as typed)."""
        if not self.is_remote:
            return self.text
        netloc = f"{self.bucket}@{self.host}" if self.host else self.bucket
        return f"{self.scheme}://{netloc}" + (f"/{self.prefix}" if self.prefix else "")

    @property
    def root(self) -> str:
        """The prefix as an fsspec path: `bucket/prefix` (or `bucket`)."""
        return f"{self.bucket}/{self.prefix}" if self.prefix else self.bucket

    def object_path(self, key: str) -> str:
        """The fsspec path of the object `key` (relative to the prefix)."""
        return f"{self.root}/{key}"

    def object_url(self, key: str) -> str:
        return f"{self.url}/{key}"

    @property
    def extra(self) -> str:
        """The relidash extra that brings this location's package: s3, gcs or azure."""
        return _SCHEMES[self.scheme][2] if self.is_remote else ""


def parse_location(text: str) -> Location:
    """A local path stays local; `s3://`, `gs://` (`gcs://`), `az://` (`abfs://`) are remote.

    Raises SourceError for a URL with an unknown scheme, without a bucket, or whose
    package (s3fs, gcsfs, adlfs) is not installed; the last names the extra to install.
    """
    match = _URL.match(text)
    if match is None:
        if text.startswith("file:"):
            raise SourceError(f"{text}: give a local directory as a plain path, not a file: URL")
        return Location(text=text, path=Path(text))
    scheme = match["scheme"].lower()
    if scheme not in _SCHEMES:
        known = ", ".join(f"{s}://" for s in _SCHEMES)
        raise SourceError(
            f"{one_line(text)}: unsupported scheme {scheme}:// (use a local path or {known})"
        )
    kind, package, _ = _SCHEMES[scheme]
    netloc, _, rest = match["rest"].partition("/")
    bucket, _, host = netloc.partition("@") if kind == "az" else (netloc, "", "")
    if "@" in bucket:  # s3://KEY:SECRET@bucket: never sent on, never shown (SourceError)
        raise SourceError(
            f"{one_line(text)}: credentials do not belong in the URL; relidash takes them "
            "from the SDK's own chain (environment, profile, instance role)"
        )
    if not bucket or any(c in bucket for c in "/\\?#*[] ") or not bucket.isprintable():
        raise SourceError(f"{one_line(text)}: no valid bucket or container name after {scheme}://")
    account = host.split(".", 1)[0] if host else ""
    location = Location(
        text=text,
        kind=kind,
        scheme=scheme,
        bucket=bucket,
        prefix=rest.strip("/"),
        account=account,
        host=host,
    )
    require_package(location)
    return location


def require_package(location: Location) -> None:
    """SourceError naming the extra when the location's fsspec package is not installed."""
    package = _SCHEMES[location.scheme][1]
    if importlib.util.find_spec(package) is None:
        raise SourceError(missing_package_message(location))


def missing_package_message(location: Location) -> str:
    package = _SCHEMES[location.scheme][1]
    return (
        f"{one_line(location.url)} needs the {package} package: "
        f"pip install 'relidash[{location.extra}]'"
    )


def s3_endpoint() -> str:
    """The S3 endpoint the standard variables name ("" for AWS itself).

    botocore (≥ 1.31, and aiobotocore on top of it) reads these variables itself; relidash
    passes the value explicitly as well, so that older versions reach the same endpoint
    and messages can name it. `AWS_ENDPOINT_URL_S3` wins over `AWS_ENDPOINT_URL`, and
    `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true` turns both off, as in botocore.
    """
    if os.environ.get("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "").strip().lower() == "true":
        return ""
    return (
        os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    ).strip()


def where(location: Location) -> str:
    """The location's URL, with the endpoint when it is not the provider's own: in
    messages, and as the source's identity (which catalog and mirror are its own), so
    with any credential in the endpoint hidden: a key rotated is the same source."""
    endpoint = s3_endpoint() if location.kind == "s3" else ""
    return redact_secrets(f"{location.url} (endpoint {endpoint})" if endpoint else location.url)


def open_filesystem(location: Location, *, anon: bool = False) -> Any:
    """A new fsspec filesystem for a remote location (not shared with other callers).

    Each call builds its own instance (`skip_instance_cache`): fsspec's instance cache is
    keyed by arguments, not by the environment a test or a credential refresh changes.
    Construction errors (an SDK that finds no account or credentials) come out as
    SourceError naming the URL.
    """
    if not location.is_remote:
        raise ValueError(f"{location.text} is a local path, not object storage")
    package = _SCHEMES[location.scheme][1]
    try:
        module = importlib.import_module(package)
    except ImportError as exc:
        raise SourceError(missing_package_message(location)) from exc
    kwargs: dict[str, Any] = {"skip_instance_cache": True}
    try:
        if location.kind == "s3":
            kwargs["anon"] = anon
            if endpoint := s3_endpoint():
                kwargs["endpoint_url"] = endpoint
            return module.S3FileSystem(**kwargs)
        if location.kind == "gs":
            # "google_default" is google.auth's chain (GOOGLE_APPLICATION_CREDENTIALS,
            # gcloud's login, the metadata server); gcsfs's None would fall back to
            # anonymous access silently.
            kwargs["token"] = "anon" if anon else "google_default"
            # gcsfs sends every request to STORAGE_EMULATOR_HOST itself. Its default class
            # (ExtendedGcsFileSystem) first asks the gRPC Storage Control API there for the
            # bucket's layout; an emulator speaks only the JSON API, so each call waits
            # for gcsfs's timeout before falling back. Against an emulator: the JSON-API
            # class itself.
            if os.environ.get("STORAGE_EMULATOR_HOST", "").strip() not in ("", "default"):
                module = importlib.import_module("gcsfs.core")
            # gcsfs logs each failed request's traceback before raising it; with no logging
            # set up, Python's last-resort handler printed it to stderr, above relidash's
            # one-line message. A library's NullHandler: handlers set up elsewhere still get it.
            gcsfs_log = logging.getLogger("gcsfs")
            if not gcsfs_log.handlers:
                gcsfs_log.addHandler(logging.NullHandler())
            return module.GCSFileSystem(**kwargs)
        kwargs["anon"] = anon
        if location.account:
            kwargs["account_name"] = location.account
        return module.AzureBlobFileSystem(**kwargs)
    except Exception as exc:
        raise SourceError(f"cannot open {where(location)}: {failure_reason(exc)}") from exc


# Exception class names (anywhere in the MRO or the cause chain) -> what to tell the user.
_REASONS: tuple[tuple[frozenset[str], str], ...] = (
    (
        frozenset(
            {
                "NoCredentialsError",
                "PartialCredentialsError",
                "CredentialRetrievalError",
                "DefaultCredentialsError",
                "CredentialUnavailableError",
                "ClientAuthenticationError",
            }
        ),
        "no credentials (looked in the environment, the profile and the instance role; "
        "use anonymous access for a public bucket)",
    ),
    (
        frozenset(
            {"ConnectTimeoutError", "ReadTimeoutError", "TimeoutError", "ServerTimeoutError"}
        ),
        "timed out",
    ),
    (
        frozenset(
            {
                "EndpointConnectionError",
                "ConnectionRefusedError",
                "ClientConnectorError",
                "ServiceRequestError",
                "ConnectionError",
            }
        ),
        "could not connect to the endpoint",
    ),
    (frozenset({"PermissionError"}), "access denied"),
    (frozenset({"FileNotFoundError"}), "not found"),
)


def failure_reason(exc: BaseException) -> str:
    """One line saying why a request failed: the kind of failure, then the SDK's words."""
    detail = one_line(redact_secrets(str(exc))) or type(exc).__name__
    seen: BaseException | None = exc
    # the outermost exception that says what happened decides: urllib3's refused
    # connection is a subclass of its connect timeout, under botocore's "could not connect"
    for _ in range(8):
        if seen is None:
            break
        names = {cls.__name__ for cls in type(seen).__mro__}
        for classes, reason in _REASONS:
            if names & classes:
                return f"{reason}: {detail}"
        seen = seen.__cause__ or seen.__context__
    return f"{type(exc).__name__}: {detail}"


def one_line(text: str) -> str:
    """Whitespace collapsed and cut, so a message stays one readable line."""
    flat = " ".join(text.split())
    return flat if len(flat) <= _ONE_LINE_MAX else flat[: _ONE_LINE_MAX - 1] + "…"
