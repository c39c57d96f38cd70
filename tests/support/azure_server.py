"""Azurite's Blob service (Microsoft's Azure Storage emulator) on 127.0.0.1 and a counting
proxy in front of it, for the `az://container/prefix` tests (tests/data/test_azure_source.py).

relidash reaches the emulator the way it reaches a real account: through the standard
`AZURE_STORAGE_CONNECTION_STRING`, which adlfs reads itself (relidash passes no endpoint).
The connection string names the proxy (tests/support/s3_server.py's `counting_proxy`), which records
every request before forwarding it, so "a second load downloads nothing" and "relidash only
reads" are counted on the wire. The tests upload and overwrite blobs straight at Azurite,
past the proxy, with azure-storage-blob (which adlfs brings).

Azurite is an npm package, installed into the git-ignored .tools/azurite/ by

    python tests/support/azure_server.py install

(`npm install --prefix .tools/azurite azurite@AZURITE_VERSION`, no standard input); the
`RELIDASH_AZURITE_BLOB` variable may name another `azurite-blob` instead. Without Azurite,
Node.js or adlfs the tests skip on a workstation and fail under `make test` and CI
(tests/support/required_tools.py), where a missing package must not pass silently. A test module uses the fixtures by importing them:
`from azure_server import azure_env, azure_proxy, azurite_url, container`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
import s3_server
from s3_server import (
    Proxy,
    child_server,
    closed_port_url,
    counting_proxy,
    fixture_server,
    free_port,
    require_modules,
)

from dashboard.data.sources import Location, parse_location

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"
AZURITE_DIR = TOOLS / "azurite"
AZURITE_VERSION = "3.35.0"
PREFIX = "reports"
# Azurite's well-known development account and key (published in Azurite's README; they
# open nothing but a local emulator)
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


AZURE_TESTS = "the Azure Blob tests"
AZURE_INSTALL = "pip install 'relidash[azure]'; python tests/support/azure_server.py install"


def unavailable(reason: str) -> NoReturn:
    s3_server.unavailable(reason, tests=AZURE_TESTS, install=AZURE_INSTALL)


def azurite_command() -> str | None:
    """The `azurite-blob` to run: $RELIDASH_AZURITE_BLOB, .tools/azurite's, or one on PATH."""
    named = os.environ.get("RELIDASH_AZURITE_BLOB", "").strip()
    if named:
        return shutil.which(named)  # None when it names nothing runnable
    local = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if local.is_file():
        return str(local)
    return shutil.which("azurite-blob")


def require_packages() -> str:
    """The azurite-blob command, once adlfs, azure-storage-blob, Node.js and Azurite are here."""
    require_modules(
        (("adlfs", "adlfs"), ("azure.storage.blob", "azure-storage-blob")),
        tests=AZURE_TESTS,
        install=AZURE_INSTALL,
    )
    if shutil.which("node") is None:
        unavailable("Node.js (node) is not on PATH; Azurite needs it")
    command = azurite_command()
    if command is None:
        unavailable(f"azurite-blob is not installed in {AZURITE_DIR} nor on PATH")
    assert command is not None
    return command


def install_azurite() -> Path:
    """Azurite into .tools/azurite (git-ignored by .tools/.gitignore); its azurite-blob."""
    AZURITE_DIR.mkdir(parents=True, exist_ok=True)
    (TOOLS / ".gitignore").write_text("# local tools (tests/support/azure_server.py install)\n*\n")
    subprocess.run(
        [
            "npm",
            "install",
            "--prefix",
            str(AZURITE_DIR),
            "--no-audit",
            "--no-fund",
            f"azurite@{AZURITE_VERSION}",
        ],
        check=True,
        stdin=subprocess.DEVNULL,
    )
    command = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if not command.is_file():
        raise SystemExit(f"npm installed azurite but {command} is missing")
    return command


# ---- Azurite's Blob service --------------------------------------------------------------


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/{ACCOUNT}?comp=list", timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # an unsigned request refused: the service answers


@contextmanager
def azurite_server(command: str, workspace: Path) -> Iterator[str]:
    """azurite-blob in a child process on 127.0.0.1 (its data in `workspace`); yields the
    blob endpoint's URL (http://127.0.0.1:PORT, without the account)."""
    port = free_port()
    data = workspace / "data"
    data.mkdir(parents=True, exist_ok=True)
    arguments = [
        command,
        "--blobHost",
        "127.0.0.1",
        "--blobPort",
        str(port),
        "--location",
        str(data),
        "--silent",
        "--skipApiVersionCheck",  # azure-storage-blob may be newer than Azurite
        "--disableTelemetry",  # Azurite 3.35 reports usage by default
    ]
    with child_server("azurite-blob", arguments, port, workspace / "azurite.log", _answers) as url:
        yield url


@pytest.fixture(scope="module")
def azurite_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    command = require_packages()
    with fixture_server(azurite_server(command, tmp_path_factory.mktemp("azurite"))) as url:
        yield url


@pytest.fixture(scope="module")
def azure_proxy(azurite_url: str) -> Iterator[Proxy]:
    with counting_proxy(azurite_url) as counting:
        yield counting


def connection_string(endpoint: str) -> str:
    """The dev account's connection string with `endpoint` (http://host:port) as its blob
    service, in Azurite's path style (the account is the first path segment)."""
    return (
        f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
        f"BlobEndpoint={endpoint}/{ACCOUNT};"
    )


# variables that could point adlfs or azure-identity at a real account or identity
AZURE_CLEARED = (
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CLIENT_ID",
    "AZURE_STORAGE_CLIENT_SECRET",
    "AZURE_STORAGE_TENANT_ID",
    "AZURE_STORAGE_ANON",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_TENANT_ID",
    "AZURE_FEDERATED_TOKEN_FILE",
)


def azure_variables(endpoint: str, home: Path) -> dict[str, str]:
    """The connection string naming `endpoint` and relidash's cache under `home` (set
    them; unset AZURE_CLEARED)."""
    return {
        "AZURE_STORAGE_CONNECTION_STRING": connection_string(endpoint),
        "XDG_CACHE_HOME": str(home / "cache"),
    }


@pytest.fixture
def azure_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, azure_proxy: Proxy) -> None:
    """The connection string naming the proxy, no other Azure identity, a fresh cache."""
    for name in AZURE_CLEARED:
        monkeypatch.delenv(name, raising=False)
    for name, value in azure_variables(azure_proxy.url, tmp_path).items():
        monkeypatch.setenv(name, value)


def fail_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    """No retries in the Azure clients adlfs builds (in this process).

    azure-storage-blob's default ExponentialRetry waits 15 s, 18 s, 24 s between connection
    attempts, and adlfs's `find` makes more than one request: `relidash summary` against a
    closed port waits minutes before it says "could not connect". adlfs passes no client
    options through, so the test asks for `retry_total=0` where adlfs creates its client.
    """
    from azure.storage.blob.aio import BlobServiceClient

    original = BlobServiceClient.from_connection_string.__func__  # type: ignore[attr-defined]

    def no_retries(cls: type, conn_str: str, **kwargs: Any) -> Any:
        return original(cls, conn_str, retry_total=0, **kwargs)

    monkeypatch.setattr(BlobServiceClient, "from_connection_string", classmethod(no_retries))


# ---- one container per test --------------------------------------------------------------


@dataclass
class Container:
    client: Any  # azure-storage-blob's ContainerClient, straight at Azurite
    name: str
    proxy: Proxy
    location: Location

    @property
    def url(self) -> str:
        return f"az://{self.name}/{PREFIX}"

    def put(self, key: str, body: bytes) -> None:
        self.client.upload_blob(f"{PREFIX}/{key}", body, overwrite=True)

    def put_many(self, items: dict[str, bytes]) -> None:
        for key, body in items.items():
            self.put(key, body)

    def blobs(self) -> dict[str, Any]:
        """Every blob of the container (full name -> BlobProperties), from Azurite."""
        return {blob.name: blob for blob in self.client.list_blobs()}

    def etags(self) -> dict[str, str]:
        return {name: str(blob.etag) for name, blob in self.blobs().items()}

    # ---- what the proxy saw --------------------------------------------------------------

    def blob_gets(self) -> list[str]:
        """Keys (relative to the prefix) fetched with GET through the proxy since its reset."""
        base = f"/{ACCOUNT}/{self.name}/{PREFIX}/"
        return sorted(
            path[len(base) :]
            for method, path, _ in self.proxy.seen()
            if method == "GET" and path.startswith(base)
        )

    def listings(self) -> int:
        """List Blobs requests through the proxy since its reset."""
        return sum(
            1
            for method, path, query in self.proxy.seen()
            if method == "GET" and path == f"/{ACCOUNT}/{self.name}" and "comp=list" in query
        )


def new_container(azurite_url: str, proxy: Proxy) -> Container:
    """A new, empty container (created straight at Azurite); the proxy's counts reset."""
    from azure.storage.blob import BlobServiceClient

    service = BlobServiceClient.from_connection_string(connection_string(azurite_url))
    name = f"relidash-{uuid.uuid4().hex[:12]}"
    client = service.create_container(name)
    proxy.reset()
    return Container(client, name, proxy, parse_location(f"az://{name}/{PREFIX}/"))


@pytest.fixture
def container(azurite_url: str, azure_proxy: Proxy, azure_env: None) -> Container:
    return new_container(azurite_url, azure_proxy)


__all__ = [
    "ACCOUNT",
    "ACCOUNT_KEY",
    "AZURE_CLEARED",
    "PREFIX",
    "Container",
    "azure_env",
    "azure_variables",
    "azure_proxy",
    "azurite_url",
    "closed_port_url",
    "connection_string",
    "container",
    "fail_fast",
    "install_azurite",
]


if __name__ == "__main__":
    if sys.argv[1:] != ["install"]:
        raise SystemExit("usage: python tests/support/azure_server.py install")
    print(install_azurite())
