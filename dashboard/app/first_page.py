"""Each page's address answered with Streamlit's first page, telling the browser where
the server is (server.py mounts these routes beside the app).

Streamlit's frontend does not know its server's root: on a page's address (`/releases`)
it asks `/releases/_stcore/health` and `/host-config` first, gets 404, waits 100 ms and
asks again one level up (streamlit/streamlit#7074). Every visit to a page's address,
which is every visit from a shared link, pays two round trips and the wait before it
can connect: a noticeable part of a light page, less of a heavy one, whose browser has
other work to do meanwhile. Hosts that embed Streamlit name
the server's root in `window.__streamlit.BACKEND_BASE_URL` before the frontend's scripts
run; the first page served at a page's address does the same, naming the directory that
holds the address (so a proxy's path prefix is kept). The root itself is left to
Streamlit: the frontend asks there first. A frontend that ignores the setting probes as
it does without it.

`relidash serve` runs server.py; AppTest and `streamlit run main.py` run the app
without these routes, unchanged.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from streamlit.url_util import make_url_path  # how Streamlit joins its own routes

from dashboard.app.pages import URL_PATHS

# Runs before the frontend's module scripts: they read window.__streamlit when loaded.
BASE_SCRIPT = (
    "<script>window.__streamlit = Object.assign({}, window.__streamlit, "
    '{BACKEND_BASE_URL: new URL(".", window.location.href).href});</script>'
)


@cache
def first_page() -> tuple[bytes, str]:
    """Streamlit's index.html with BASE_SCRIPT ahead of its scripts, and its ETag."""
    from streamlit import file_util

    html = (Path(file_util.get_static_dir()) / "index.html").read_text(encoding="utf-8")
    at = html.find("<script")
    body = (html[:at] + BASE_SCRIPT + html[at:] if at >= 0 else html).encode()
    return body, '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


async def page(request: Request) -> Response:
    body, etag = first_page()
    headers = {"Cache-Control": "no-cache", "ETag": etag}  # as Streamlit serves index.html
    if request.headers.get("if-none-match") == etag:
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="text/html; charset=utf-8", headers=headers)


def routes(base: str) -> list[Route]:
    """A route per page address under the server's base path (`server.baseUrlPath`)."""
    return [Route(make_url_path(base, path), page, methods=["GET", "HEAD"]) for path in URL_PATHS]
