"""A page that fails: the viewer sees a short message with a reference, the server's log
gets the traceback under the same reference.

A traceback names source paths, cache and catalog paths, process ids and whatever text the
exception carried; none of it helps the person reading the page, and all of it helps
someone probing the server. `client.showErrorDetails` (set to "none" in
.streamlit/config.toml, which `relidash serve` passes on) covers what Streamlit itself
shows; this catches a page's exceptions before Streamlit does, so the viewer is told
something useful and the operator can find the matching log entry. A developer who asks
Streamlit for full details (`--client.showErrorDetails full`) gets the exception as
Streamlit shows it.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit import config

LOG = logging.getLogger("relidash.app")


def details_shown() -> bool:
    """Whether Streamlit is set to show an exception's message and traceback (its
    default, "full", or the legacy true)."""
    value = config.get_option("client.showErrorDetails")
    return value in ("full", "true", "True", True)


@contextmanager
def page_boundary(page: str) -> Iterator[None]:
    """Run a page: an exception it raises is logged with its traceback and a reference,
    and the viewer sees the reference and a short message instead. Streamlit's own
    control flow (st.stop, st.rerun, st.switch_page) raises BaseException and passes."""
    try:
        yield
    except Exception:
        if details_shown():
            raise
        ref = secrets.token_hex(4)
        LOG.exception("page %s failed (reference %s)", page, ref)
        st.error(
            f"This page could not be shown because of an error on the server (reference "
            f"{ref}). Reloading may help; if it does not, give the reference to whoever "
            "runs relidash: the server's log has the details."
        )
