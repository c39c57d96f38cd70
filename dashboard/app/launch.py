"""`relidash serve`'s server process: Streamlit's own command line (`streamlit run`), with
Nagle's algorithm turned off on the connections its server accepts, and no look-up of
the machine's external address.

Streamlit 1.67 binds its listening socket itself and hands it to uvicorn. The socket is
made with `socket.socket(family)`, so its protocol number is 0; accepted connections
inherit that, and asyncio turns TCP_NODELAY on only for sockets that say IPPROTO_TCP
(the defect uvicorn has on its own pre-bound path, Kludex/uvicorn#3149). With Nagle on,
a small response written in two parts (its headers, then its body) waits for the
client's delayed acknowledgement: 40 ms on Linux, up to 200 ms on Windows. A client
fetching the app's startup files over a few keep-alive connections pays that wait again
and again: with TCP_NODELAY the fetch takes a fraction of the time, and a fraction of
that again with the files served from memory as well (static_assets.py). The same holds
for the small WebSocket messages a page is drawn from, on a real network.

TCP_NODELAY set on the listening socket is inherited by every connection it accepts
(Linux). If Streamlit no longer has the function wrapped here, the server runs as
Streamlit made it.

Streamlit asks checkip.amazonaws.com for the machine's public address (net_util's
get_external_ip: a DNS look-up and an HTTP request, then HTTPS when that fails) to print
an "External URL" when headless on a wildcard address (`--host 0.0.0.0`), and again, with
no caching of a failure, whenever a WebSocket's Origin is another host than the one it
connects to (server_util.is_url_from_allowed_origins). A dashboard of private reports
must not tell a third party it runs, nor wait on it offline; no setting turns the
look-up off (`browser.serverAddress` skips only the banner's), so the function answers
"unknown", as it does when the request fails: the banner lists the local and network
addresses, and a cross-origin WebSocket is allowed only from the hosts Streamlit lists
without it (localhost, the server's own addresses, `server.corsAllowedOrigins`).
"""

from __future__ import annotations

import socket
import sys
from typing import Any


def nodelay_listener() -> bool:
    """Make Streamlit's server set TCP_NODELAY on its listening socket; False if this
    Streamlit binds its socket some other way (nothing is changed then)."""
    from streamlit.web.server.starlette import starlette_server

    bind = getattr(starlette_server, "_bind_socket", None)
    if bind is None or getattr(bind, "nodelay", False):
        return bind is not None

    def bind_nodelay(*args: Any, **kwargs: Any) -> socket.socket:
        sock: socket.socket = bind(*args, **kwargs)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    bind_nodelay.nodelay = True  # type: ignore[attr-defined]
    starlette_server._bind_socket = bind_nodelay  # noqa: SLF001 (the hook there is)
    return True


def no_external_ip() -> None:
    """Make Streamlit's external-address look-up answer None without asking anyone."""
    from streamlit import net_util

    def unknown() -> None:
        return None

    net_util.get_external_ip = unknown


def main() -> None:
    nodelay_listener()
    no_external_ip()
    from streamlit.web.cli import main as streamlit

    sys.argv[0] = "streamlit"
    streamlit()  # click: exits with the server's status


if __name__ == "__main__":
    main()
