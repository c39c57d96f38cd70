"""State that travels: the choices every page of a session shares (the suite, each suite's
k), and the agent-errors switch in the URL, so a sidebar link keeps the suite and a copied
link opens the same numbers.

Session state and query parameters only: must not read the catalog or cache results
(that is state.py, the cache boundary).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

# The session's choices that every page shares, by slot: "suite", and "k@SUITE" (a suite's
# k, chosen on any page). A sidebar link opens its page without the URL's parameters; the
# page starts from these instead of its own defaults.
SHARED = "relidash_shared"
AGENT_ERRORS_KEY = "count_agent_errors"  # the sidebar switch's key
AGENT_ERRORS_PARAM = "agent_errors"  # in the URL: `count` when agent errors count


def shared_choice(slot: str) -> str | None:
    value = st.session_state.get(SHARED, {}).get(slot)
    return None if value is None else str(value)


def remember_choice(slot: str, value: Any) -> None:
    st.session_state.setdefault(SHARED, {})[slot] = str(value)


def agent_errors_from_link() -> None:
    """Before the sidebar's switch is drawn: a link's `agent_errors=count` turns it on in
    a session that has not set it yet (a later sidebar link keeps the session's choice)."""
    if AGENT_ERRORS_KEY not in st.session_state:
        st.session_state[AGENT_ERRORS_KEY] = st.query_params.get(AGENT_ERRORS_PARAM) == "count"


def agent_errors_to_link() -> None:
    """After the switch: the URL says when agent errors count, so a copied link opens the
    same numbers."""
    if st.session_state.get(AGENT_ERRORS_KEY):
        st.query_params[AGENT_ERRORS_PARAM] = "count"
    elif AGENT_ERRORS_PARAM in st.query_params:
        del st.query_params[AGENT_ERRORS_PARAM]
