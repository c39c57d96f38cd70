"""moto's S3 server on 127.0.0.1 and a counting proxy in front of it, for the object-storage
tests (tests/data/test_sources.py, tests/data/test_s3_load.py) and the benchmark.

relidash talks to the server through the proxy, which records every request before
answering it, so "a second load downloads nothing" and "relidash only reads" are counted
on the wire, not taken from relidash's own statistics. The tests themselves upload,
change and delete objects straight at moto, past the proxy.

Without moto's server, s3fs or boto3 the tests skip on a workstation and fail under
`make test` and CI (tests/support/required_tools.py), where a missing package must not pass
silently. A test module uses the fixtures by importing them:
`from s3_server import aws_env, moto_url, proxy, store`.
"""

from __future__ import annotations

import http.client
import importlib.util
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import unquote

import pytest
import required_tools

from dashboard.data.sources import Location, parse_location

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
PREFIX = "reports"
START_TIMEOUT = 60.0


def unavailable(
    reason: str,
    *,
    tests: str = "the object-storage tests",
    install: str = "pip install 'moto[server]' s3fs",
) -> NoReturn:
    """Skip on a workstation; fail where every tool is required (tests/support/required_tools.py)."""
    required_tools.unavailable(reason, tests=tests, install=install)


def require_modules(needed: tuple[tuple[str, str], ...], *, tests: str, install: str) -> None:
    """unavailable() unless every (module, package it comes from) can be imported."""
    for module, package in needed:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # a parent package (azure.storage, say) is missing
            found = False
        if not found:
            unavailable(f"{package} is not installed", tests=tests, install=install)


def require_packages() -> None:
    require_modules(
        (("moto", "moto[server]"), ("flask", "moto[server]"), ("boto3", "boto3"), ("s3fs", "s3fs")),
        tests="the object-storage tests",
        install="pip install 'moto[server]' s3fs",
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---- moto's server and the counting proxy in front of it ---------------------------------


class ServerFailed(RuntimeError):
    pass


@contextmanager
def fixture_server(server: AbstractContextManager[str]) -> Iterator[str]:
    """A server for a fixture: one that does not start fails the tests that need it
    (benchmarks use the servers as they are, and see ServerFailed)."""
    try:
        with server as url:
            yield url
    except ServerFailed as exc:
        pytest.fail(str(exc))


@contextmanager
def child_server(
    name: str, command: list[str], port: int, log: Path, answers: Callable[[str], bool]
) -> Iterator[str]:
    """`command` in a child process serving http://127.0.0.1:`port` (its output in `log`):
    yields the URL once `answers(url)` is true (an OSError means not yet), and stops the
    process at the end. The object-storage servers of tests/support/gcs_server.py and
    tests/support/azure_server.py start this way too."""
    with open(log, "wb") as out:
        server = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if server.poll() is not None:
                raise ServerFailed(f"{name} exited: {log.read_text(errors='replace')}")
            try:
                if answers(url):
                    break
            except OSError as exc:
                if time.monotonic() > deadline:
                    raise ServerFailed(f"{name} did not answer in {START_TIMEOUT:.0f} s") from exc
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def _opens(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=2):
        return True


@contextmanager
def moto_server(log: Path) -> Iterator[str]:
    """moto's S3 server in a child process on 127.0.0.1; yields its URL."""
    port = free_port()
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with child_server(
        "moto's server", command, port, log, lambda url: _opens(url + "/moto-api/")
    ) as url:
        yield url


@pytest.fixture(scope="module")
def moto_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_packages()
    with fixture_server(moto_server(tmp_path_factory.mktemp("moto") / "server.log")) as url:
        yield url


HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "te",
    "trailer",
    "upgrade",
    "content-length",
    "server",
    "date",
}
ACCESS_DENIED = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>'
    b"<Message>Access Denied</Message></Error>"
)


@dataclass
class Proxy:
    """Forwards to moto; records (method, unquoted path, query) before answering."""

    upstream_port: int
    url: str = ""
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    authorized: list[bool] = field(default_factory=list)
    deny: bool = False
    deny_paths: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                path, _, query = self.path.partition("?")
                with proxy.lock:
                    proxy.requests.append((self.command, unquote(path), query))
                    proxy.authorized.append("Authorization" in self.headers)
                if proxy.deny or unquote(path) in proxy.deny_paths:
                    self.send_response(403)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(ACCESS_DENIED)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(ACCESS_DENIED)
                    return
                upstream = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                try:
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    response = upstream.getresponse()
                    data = response.read()
                    self.send_response(response.status, response.reason)
                    for name, value in response.getheaders():
                        if name.lower() not in HOP_BY_HOP:
                            self.send_header(name, value)
                    if self.command == "HEAD":
                        self.send_header(
                            "Content-Length", response.getheader("Content-Length", "0")
                        )
                    else:
                        self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    upstream.close()

            do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = forward

        return Handler

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()
            self.authorized.clear()
            self.deny = False
            self.deny_paths = set()

    def seen(self) -> list[tuple[str, str, str]]:
        with self.lock:
            return list(self.requests)

    def signed(self) -> list[bool]:
        with self.lock:
            return list(self.authorized)

    def object_gets(self, bucket: str) -> list[str]:
        """Keys (relative to the prefix) fetched with GET since the last reset."""
        base = f"/{bucket}/{PREFIX}/"
        return sorted(
            path[len(base) :]
            for method, path, query in self.seen()
            if method == "GET" and path.startswith(base) and "list-type" not in query
        )

    def listings(self, bucket: str) -> int:
        return sum(
            1
            for method, path, query in self.seen()
            if method == "GET" and path == f"/{bucket}" and "list-type=2" in query
        )


@contextmanager
def counting_proxy(upstream_url: str) -> Iterator[Proxy]:
    """A Proxy in front of `upstream_url`, served from a thread on 127.0.0.1."""
    counting = Proxy(upstream_port=int(upstream_url.rsplit(":", 1)[1]))
    server = ThreadingHTTPServer(("127.0.0.1", 0), counting.handler())
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="s3-proxy", daemon=True)
    thread.start()
    counting.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield counting
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def proxy(moto_url: str) -> Iterator[Proxy]:
    with counting_proxy(moto_url) as counting:
        yield counting


# ---- one bucket per test -----------------------------------------------------------------


@dataclass
class Store:
    client: Any  # boto3's S3 client, straight at moto
    bucket: str
    proxy: Proxy
    location: Location

    def put(self, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=self.bucket, Key=f"{PREFIX}/{key}", Body=body)

    def put_many(self, items: dict[str, bytes]) -> None:
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(lambda kv: self.put(*kv), items.items()))

    def delete(self, key: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=f"{PREFIX}/{key}")

    def objects(self) -> dict[str, dict[str, Any]]:
        """Every object of the bucket (full key -> ETag, Size, LastModified), from moto."""
        out: dict[str, dict[str, Any]] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket):
            for item in page.get("Contents", []):
                out[item["Key"]] = item
        return out

    def etags(self) -> dict[str, str]:
        return {key: item["ETag"] for key, item in self.objects().items()}


def sample_files() -> dict[str, bytes]:
    files = {
        path.relative_to(SAMPLE).as_posix(): path.read_bytes()
        for path in sorted(SAMPLE.rglob("*"))
        if path.suffix in (".json", ".eval") and path.is_file()
    }
    assert len(files) >= 10
    return files


# variables that could point botocore at a real account, a profile or instance metadata
AWS_CLEARED = (
    "AWS_PROFILE",
    "AWS_SESSION_TOKEN",
    "AWS_ENDPOINT_URL_S3",
    "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
)


def aws_variables(endpoint: str, home: Path) -> dict[str, str]:
    """Dummy credentials, no profile, no instance metadata, `endpoint` as the endpoint and
    relidash's cache under `home` (set them; unset AWS_CLEARED)."""
    return {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true",  # never ask 169.254.169.254
        "AWS_CONFIG_FILE": str(home / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(home / "no-aws-credentials"),
        "AWS_ENDPOINT_URL": endpoint,
        "XDG_CACHE_HOME": str(home / "cache"),
    }


@pytest.fixture
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, proxy: Proxy) -> None:
    """Dummy credentials, no profile, no instance metadata, the proxy as the endpoint."""
    for name in AWS_CLEARED:
        monkeypatch.delenv(name, raising=False)
    for name, value in aws_variables(proxy.url, tmp_path).items():
        monkeypatch.setenv(name, value)


def s3_client(moto_url: str) -> Any:
    """boto3's S3 client straight at moto (past the proxy)."""
    import boto3

    return boto3.client(
        "s3",
        endpoint_url=moto_url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def new_store(moto_url: str, proxy: Proxy) -> Store:
    """A new, empty bucket; the proxy's counts reset."""
    client = s3_client(moto_url)
    bucket = f"relidash-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=bucket)
    proxy.reset()
    return Store(client, bucket, proxy, parse_location(f"s3://{bucket}/{PREFIX}/"))


@pytest.fixture
def store(moto_url: str, proxy: Proxy, aws_env: None) -> Store:
    return new_store(moto_url, proxy)


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"
