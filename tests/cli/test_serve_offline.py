"""`relidash serve --host 0.0.0.0` asks no one for the machine's address: Streamlit's
external-IP check (checkip.amazonaws.com, for its "External URL" banner and its
WebSocket origin check) is turned off by dashboard/app/launch.py.

The server runs with a sitecustomize that records, in every Python process it starts,
each name resolved (socket.getaddrinfo) and each TCP connection opened; after the start
banner and a WebSocket from another origin, none of them may reach past this machine.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from servers import free_port, healthy, relidash_command, stop_group

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
START_TIMEOUT = 90.0

SPY = """
import json, os, socket, sys

_LOG = os.environ["RELIDASH_NET_LOG"]


def _note(**record):
    with open(_LOG, "a", encoding="utf-8") as out:
        out.write(json.dumps(dict(record, pid=os.getpid())) + "\\n")


_getaddrinfo = socket.getaddrinfo
_connect = socket.socket.connect


def getaddrinfo(host, *args, **kwargs):
    _note(event="resolve", host=host if isinstance(host, str) or host is None else repr(host))
    return _getaddrinfo(host, *args, **kwargs)


def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        _note(event="connect", address=list(address)[:2], tcp=self.type == socket.SOCK_STREAM)
    return _connect(self, address)


socket.getaddrinfo = getaddrinfo
socket.socket.connect = connect
_note(event="started", argv=sys.argv)
"""


def local(host: str | None) -> bool:
    """Whether looking `host` up or connecting to it stays on this machine: no name, a
    loopback or wildcard name, or an address written out (resolved without DNS)."""
    if host in (None, "", "localhost"):
        return True
    try:
        address = ipaddress.ip_address(str(host))
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


def cross_origin_websocket(port: int) -> str:
    """Open the app's stream from another site's page, as a browser would: Streamlit
    checks the Origin against the machine's addresses. The status line of its answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(
            (
                "GET /_stcore/stream HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                "Origin: http://elsewhere.example\r\n\r\n"
            ).encode()
        )
        return conn.recv(4096).decode("latin-1").split("\r\n", 1)[0]


def test_serve_on_every_interface_asks_no_one_for_its_address(tmp_path: Path) -> None:
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(SPY, encoding="utf-8")
    net_log, out_log = tmp_path / "net.jsonl", tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(PYTHONPATH=f"{spy}{os.pathsep}{ROOT}", RELIDASH_NET_LOG=str(net_log))
    port = free_port()
    command = [
        *relidash_command(), "serve", str(SAMPLE),
        "--host", "0.0.0.0", "--port", str(port),
        "--catalog", str(tmp_path / "catalog.duckdb"), "--reviews", str(tmp_path / "r"),
    ]  # fmt: skip
    with open(out_log, "w") as out:
        proc = subprocess.Popen(
            command,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        # the banner is printed once the server listens, after the address look-ups
        while not (healthy(f"http://127.0.0.1:{port}") and "Local URL" in out_log.read_text()):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"relidash serve did not start:\n{out_log.read_text()}")
            time.sleep(0.25)
        status = cross_origin_websocket(port)
    finally:
        stop_group(proc)
    records = [json.loads(line) for line in net_log.read_text().splitlines()]
    servers = {r["pid"] for r in records if r["event"] == "started" and "run" in r["argv"]}
    assert servers, f"the spy did not run in the Streamlit server: {records}"
    assert status.startswith("HTTP/1.1 "), status
    leaving = [
        r
        for r in records
        if (r["event"] == "resolve" and not local(r["host"]))
        # a UDP socket's connect sends nothing (Streamlit finds its network address so)
        or (r["event"] == "connect" and r["tcp"] and not local(r["address"][0]))
    ]
    assert not leaving, leaving
    assert "External URL" not in out_log.read_text()
