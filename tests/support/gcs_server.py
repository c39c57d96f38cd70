"""gcp-storage-emulator (a GCS JSON API server) on 127.0.0.1 and a counting proxy in front of
it, for the gs:// tests (tests/data/test_gcs_source.py).

relidash reaches the emulator through the standard `STORAGE_EMULATOR_HOST` variable, set to
the proxy (tests/support/s3_server.py's, which forwards any HTTP), so that "a second load downloads
nothing" and "relidash only reads" are counted on the wire. The tests themselves create
buckets and upload objects straight at the emulator, past the proxy, with plain HTTP.

Without gcp-storage-emulator or gcsfs the tests skip on a workstation and fail under
`make test` and CI (tests/support/required_tools.py), where a missing package must not pass silently. A test module uses the fixtures by
importing them:
`from gcs_server import bucket_fixture, gcs_env, gcs_proxy, gcs_url` (fixture `bucket`).
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from s3_server import (
    Proxy,
    child_server,
    counting_proxy,
    fixture_server,
    free_port,
    require_modules,
)

from dashboard.data.sources import Location, parse_location

PREFIX = "reports"
HTTP_TIMEOUT = 30.0


def require_packages() -> None:
    require_modules(
        (("gcp_storage_emulator", "gcp-storage-emulator"), ("gcsfs", "gcsfs")),
        tests="the gs:// tests",
        install="pip install gcp-storage-emulator gcsfs",
    )


def _healthy(url: str) -> bool:
    with urllib.request.urlopen(url + "/", timeout=2) as answer:
        return bool(answer.read() == b"OK")  # the emulator's health check


@contextmanager
def emulator_server(log: Path) -> Iterator[str]:
    """gcp-storage-emulator in a child process on 127.0.0.1, in memory; yields its URL."""
    port = free_port()
    command = [sys.executable, "-m", "gcp_storage_emulator", "start"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--in-memory", "--quiet"]
    with child_server("the GCS emulator", command, port, log, _healthy) as url:
        yield url


@pytest.fixture(scope="module")
def gcs_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_packages()
    with fixture_server(emulator_server(tmp_path_factory.mktemp("gcs") / "server.log")) as url:
        yield url


@pytest.fixture(scope="module")
def gcs_proxy(gcs_url: str) -> Iterator[Proxy]:
    with counting_proxy(gcs_url) as counting:
        yield counting


# ---- one bucket per test -----------------------------------------------------------------


def call(url: str, method: str = "GET", body: bytes | None = None, **headers: str) -> Any:
    """One JSON API request straight at the emulator; the decoded JSON answer."""
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as answer:
            return json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise AssertionError(f"{method} {url}: {exc.code} {exc.read()[:300]!r}") from exc


@dataclass
class Bucket:
    server: str  # the emulator's URL (past the proxy)
    name: str
    proxy: Proxy
    location: Location

    @property
    def url(self) -> str:
        return f"gs://{self.name}/{PREFIX}"

    def put(self, key: str, body: bytes) -> None:
        """Upload (or overwrite) the object PREFIX/key."""
        self.put_name(f"{PREFIX}/{key}", body)

    def put_name(self, name: str, body: bytes) -> None:
        """Upload (or overwrite) the object `name` (from the bucket's root), sent as bytes:
        the emulator would decode a body sent as JSON."""
        call(
            f"{self.server}/upload/storage/v1/b/{self.name}/o"
            f"?uploadType=media&name={quote(name, safe='')}",
            "POST",
            body,
            **{"Content-Type": "application/octet-stream"},
        )

    def put_many(self, items: dict[str, bytes]) -> None:
        for key, body in items.items():  # the emulator serves one request at a time
            self.put(key, body)

    def objects(self) -> dict[str, dict[str, Any]]:
        """Every object of the bucket (full name -> its JSON resource), from the emulator."""
        out: dict[str, dict[str, Any]] = {}
        token = ""
        while True:
            page = call(
                f"{self.server}/storage/v1/b/{self.name}/o"
                + (f"?pageToken={quote(token, safe='')}" if token else "")
            )
            for item in page.get("items", []):
                out[item["name"]] = item
            token = page.get("nextPageToken") or ""
            if not token:
                return out

    def object_gets(self) -> list[str]:
        """Keys (relative to the prefix) downloaded through the proxy since the last reset."""
        base = f"/download/storage/v1/b/{self.name}/o/{PREFIX}/"
        return sorted(
            path[len(base) :]
            for method, path, query in self.proxy.seen()
            if method == "GET" and path.startswith(base) and "alt=media" in query
        )

    def listings(self) -> int:
        """Object listings (GET …/b/NAME/o) through the proxy since the last reset."""
        return sum(
            1
            for method, path, _ in self.proxy.seen()
            if method == "GET" and path == f"/storage/v1/b/{self.name}/o"
        )


def new_bucket(server: str, proxy: Proxy) -> Bucket:
    """A new, empty bucket; the proxy's counts reset."""
    name = f"relidash-{uuid.uuid4().hex[:12]}"
    call(
        f"{server}/storage/v1/b?project=relidash-test",
        "POST",
        json.dumps({"name": name}).encode(),
        **{"Content-Type": "application/json"},
    )
    proxy.reset()
    return Bucket(server, name, proxy, parse_location(f"gs://{name}/{PREFIX}/"))


# variables that could point google.auth or gcsfs at a real account or another endpoint
GCS_CLEARED = (
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_UNIVERSE_DOMAIN",
    "GOOGLE_API_USE_MTLS_ENDPOINT",
    "GOOGLE_API_USE_CLIENT_CERTIFICATE",
    "GCSFS_DEFAULT_PROJECT",
    "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT",
)


def gcs_variables(endpoint: str, home: Path) -> dict[str, str]:
    """`endpoint` as the GCS emulator, no gcloud login, no metadata server, and relidash's
    cache under `home` (set them; unset GCS_CLEARED)."""
    return {
        "STORAGE_EMULATOR_HOST": endpoint,
        "CLOUDSDK_CONFIG": str(home / "no-gcloud"),  # no `gcloud auth` login found
        "NO_GCE_CHECK": "true",  # gcsfs: do not probe for the metadata server
        "GCE_METADATA_HOST": "127.0.0.1:9",  # google.auth: never ask 169.254.169.254
        "GCE_METADATA_IP": "127.0.0.1:9",
        "XDG_CACHE_HOME": str(home / "cache"),
    }


@pytest.fixture
def gcs_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, gcs_proxy: Proxy) -> None:
    """The proxy as the GCS emulator, no credentials, relidash's cache in tmp_path."""
    for name in GCS_CLEARED:
        monkeypatch.delenv(name, raising=False)
    for name, value in gcs_variables(gcs_proxy.url, tmp_path).items():
        monkeypatch.setenv(name, value)


@pytest.fixture(name="bucket")
def bucket_fixture(gcs_url: str, gcs_proxy: Proxy, gcs_env: None) -> Bucket:
    """A new, empty bucket for the test (fixture `bucket`), the environment pointing at it."""
    return new_bucket(gcs_url, gcs_proxy)
