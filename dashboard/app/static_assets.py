"""Streamlit's frontend code served from memory and gzipped once (server.py installs it).

A new visitor's browser fetches dozens of modules (megabytes) before the app can connect,
then each element's code as the page draws. Streamlit 1.67 serves them from disk, uncompressed,
through Starlette's StaticFiles: it leaves compression to a proxy in front of it (its
comment in starlette_gzip_middleware.py: gzipping at every request costs the origin more
than it saves), and a team's relidash is often served without one. Here each file is read
and gzipped once, on its first request, in a worker thread, and kept: gzip shrinks the
startup modules several times over, and compressing them costs the server once what a
new visit over a network would otherwise pay in transfer each time.

Only GET and HEAD of a file that exists under Streamlit's `static/` folder are answered
here, with Streamlit's headers (the names carry a content hash: cached for a year,
immutable). Anything else, a range request included, goes on to Streamlit unchanged.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import mimetypes
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamlit.url_util import make_url_path

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CACHE_CONTROL = b"public, immutable, max-age=31536000"  # Streamlit's, for hashed names
# zlib's default level: 9 makes the startup modules barely smaller and takes longer
GZIP_LEVEL = 6
# Formats that are compressed already (fonts, images): served as they are.
PACKED_TYPES = ("font/woff2", "image/png", "image/jpeg", "image/gif", "image/webp")


@dataclass(frozen=True)
class Asset:
    body: bytes
    gzipped: bytes | None  # None: gzip would not make it smaller by a tenth
    content_type: bytes
    etag: bytes


def load_asset(path: Path) -> Asset:
    body = path.read_bytes()
    content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    gzipped = None
    if content_type not in PACKED_TYPES and len(body) > 1024:
        packed = gzip.compress(body, GZIP_LEVEL, mtime=0)
        gzipped = packed if len(packed) < 0.9 * len(body) else None
    if content_type.startswith("text/") or content_type.endswith(("javascript", "json")):
        content_type += "; charset=utf-8"
    etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
    return Asset(body, gzipped, content_type.encode(), etag.encode())


def accepts_gzip(accept_encoding: bytes) -> bool:
    """Whether an Accept-Encoding header admits gzip (not refused with q=0)."""
    for part in accept_encoding.lower().split(b","):
        coding, *params = (p.strip() for p in part.split(b";"))
        if coding == b"gzip":
            return all(p.replace(b" ", b"") not in (b"q=0", b"q=0.0", b"q=0.00") for p in params)
    return False


def safe_name(name: str) -> bool:
    """A name below the folder: no empty, `.`, `..` or hidden part, no backslash."""
    return (
        bool(name)
        and "\\" not in name
        and "\0" not in name
        and all(part and not part.startswith(".") for part in name.split("/"))
    )


class StaticAssets:
    """ASGI middleware: Streamlit's `static/` files from memory, else the app below it."""

    def __init__(self, app: ASGIApp, base: str = "") -> None:
        from streamlit import file_util

        self.app = app
        self.root = Path(file_util.get_static_dir()) / "static"
        self.prefix = make_url_path(base, "static/")
        self.assets: dict[str, Asset] = {}  # only files that exist: unknown names pass

    async def asset(self, name: str) -> Asset | None:
        if name not in self.assets:
            path = self.root / name
            if not safe_name(name) or not path.is_file():
                return None
            self.assets[name] = await asyncio.to_thread(load_asset, path)
        return self.assets[name]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        method = scope.get("method")
        headers = dict(scope.get("headers", ())) if path.startswith(self.prefix) else {}
        found = None
        if path.startswith(self.prefix) and method in ("GET", "HEAD") and b"range" not in headers:
            found = await self.asset(path[len(self.prefix) :])
        if found is None:
            await self.app(scope, receive, send)
            return
        common = [
            (b"cache-control", CACHE_CONTROL),
            (b"etag", found.etag),
            (b"vary", b"Accept-Encoding"),
        ]
        if headers.get(b"if-none-match") == found.etag:
            await send({"type": "http.response.start", "status": 304, "headers": common})
            await send({"type": "http.response.body", "body": b""})
            return
        body, encoding = found.body, []
        if found.gzipped is not None and accepts_gzip(headers.get(b"accept-encoding", b"")):
            body, encoding = found.gzipped, [(b"content-encoding", b"gzip")]
        start = [(b"content-type", found.content_type), (b"content-length", b"%d" % len(body))]
        await send(
            {"type": "http.response.start", "status": 200, "headers": start + encoding + common}
        )
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
