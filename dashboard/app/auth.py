"""Who may see the dashboard.

When `[auth]` is configured in .streamlit/secrets.toml (Streamlit's OIDC login,
`streamlit[auth]` extra), every page requires a signed-in user, optionally from an
allow-listed e-mail domain (`[relidash] allowed_domains = ["example.com"]`). When it is
not configured, anyone who can reach the port can read every report: the server binds to
127.0.0.1 unless told otherwise. Nothing from a report may be sent before the check
passes: `require_login` runs before any report is loaded.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from dashboard.render.formatting import md

# Streamlit's OAuth callback always lands on the app's root, and a sign-in starts a new
# session, so the page first asked for (a deep link with its query) is remembered here,
# on the server, for RETURN_SECONDS. It is keyed by a digest of the browser's XSRF token:
# the one value the browser presents both before and after the provider's redirect that
# the app can read (Streamlit preserves its token across requests). Only an allow-listed
# page path and its query are stored, never a URL, so no redirect can leave the app.
XSRF_COOKIE = "_streamlit_xsrf"
RETURN_SECONDS = 600.0
RETURN_MAX_PENDING = 1000


@dataclass(frozen=True)
class Requested:
    url_path: str
    query: dict[str, str]
    at: float


_pending: OrderedDict[str, Requested] = OrderedDict()
_pending_lock = threading.Lock()


def auth_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def allowed_domains() -> list[str]:
    try:
        domains = st.secrets.get("relidash", {}).get("allowed_domains", [])
    except Exception:
        return []
    return [str(d).lower().lstrip("@") for d in domains]


def email_allowed(email: str | None, domains: list[str]) -> bool:
    if not domains:
        return True
    if not email or "@" not in email:
        return False
    return email.rsplit("@", 1)[1].lower() in domains


def viewer_allowed() -> bool:
    """Whether the viewer may see the reports (always, when login is not configured)."""
    if not auth_configured():
        return True
    user: Any = st.user
    return bool(user.get("is_logged_in")) and _claims_allowed(user)


def _claims_allowed(user: Any) -> bool:
    # A provider that says the address is unverified does not vouch for its domain.
    if user.get("email_verified") is False:
        return False
    return email_allowed(user.get("email"), allowed_domains())


def require_login(current: Any, pages: Sequence[Any]) -> None:
    """Stop the script unless the viewer may see the reports.

    `current` is the page `st.navigation` chose and `pages` all of them: a signed-out
    viewer's request is remembered when they sign in, and after the provider's redirect
    (which lands on the root) they are sent on to that page with its query.
    """
    if not auth_configured():
        return
    user: Any = st.user
    if not user.get("is_logged_in"):
        st.title("relidash")
        st.write("Sign in to see the reliability reports.")
        st.button(
            "Sign in",
            on_click=_sign_in,
            args=(str(current.url_path), st.query_params.to_dict()),
        )
        st.stop()
    requested = _take_requested()
    if not _claims_allowed(user):
        st.title("relidash")
        who = user.get("email") or user.get("sub") or "this account"
        st.error(
            f"You are signed in as {md(who)}, which is not allowed to see these reports. "
            "Sign out to sign in with another account."
        )
        st.button("Sign out", on_click=st.logout)
        st.stop()
    with st.sidebar:
        st.caption(f"Signed in as {md(user.get('email') or user.get('sub'))}")
        st.button("Sign out", on_click=st.logout, key="relidash_sign_out")
    if requested is not None:
        _return_to(requested, current, pages)


def _sign_in(url_path: str, query: dict[str, str]) -> None:
    key = _browser_key()
    if key is not None:
        now = time.monotonic()
        with _pending_lock:
            for old in [k for k, r in _pending.items() if now - r.at > RETURN_SECONDS]:
                del _pending[old]
            _pending.pop(key, None)
            _pending[key] = Requested(url_path, dict(query), now)
            while len(_pending) > RETURN_MAX_PENDING:
                _pending.popitem(last=False)
    st.login()


def _take_requested() -> Requested | None:
    key = _browser_key()
    if key is None:
        return None
    with _pending_lock:
        requested = _pending.pop(key, None)
    if requested is None or time.monotonic() - requested.at > RETURN_SECONDS:
        return None
    return requested


def _return_to(requested: Requested, current: Any, pages: Sequence[Any]) -> None:
    target = next((p for p in pages if p.url_path == requested.url_path), None)
    if target is None:
        return
    if target.url_path == current.url_path and requested.query == st.query_params.to_dict():
        return
    st.switch_page(target, query_params=requested.query)


def _browser_key() -> str | None:
    """A digest of the browser's XSRF token, or None when it has none we can read."""
    try:
        raw = st.context.cookies.get(XSRF_COOKIE)
    except Exception:  # no client context (AppTest, bare mode)
        return None
    token = _xsrf_token(raw)
    return hashlib.sha256(token).hexdigest() if token else None


def _xsrf_token(raw: str | None) -> bytes | None:
    """The token inside a version-2 XSRF cookie (`2|mask|masked token|time`): the mask
    is new on every response that sets the cookie, the token is not."""
    if not raw:
        return None
    parts = raw.strip("\"'").split("|")
    if len(parts) != 4 or parts[0] != "2":
        return None
    try:
        mask = bytes.fromhex(parts[1])
        masked = bytes.fromhex(parts[2])
    except ValueError:
        return None
    if len(mask) != 4 or not masked:
        return None
    return bytes(b ^ mask[i % 4] for i, b in enumerate(masked))


def signed_in_identity() -> dict[str, Any] | None:
    """The provider's claims for the signed-in user (issuer, subject, e-mail), or None
    when login is not configured: a sign-off then carries a typed, unverified name."""
    if not auth_configured():
        return None
    user: Any = st.user
    if not user.get("is_logged_in"):
        return None
    return {
        "issuer": user.get("iss"),
        "subject": user.get("sub"),
        "email": user.get("email"),
        "name": user.get("name"),
    }
