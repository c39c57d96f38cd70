"""Who may see the dashboard.

When `[auth]` is configured in .streamlit/secrets.toml (Streamlit's OIDC login,
`streamlit[auth]` extra), every page requires a signed-in user, optionally from an
allow-listed e-mail domain (`[relidash] allowed_domains = ["example.com"]`). When it is
not configured, anyone who can reach the port can read every report: the server binds to
127.0.0.1 unless told otherwise.
"""

from __future__ import annotations

from typing import Any

import streamlit as st


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


def require_login() -> None:
    """Stop the script unless the viewer may see the reports."""
    if not auth_configured():
        return
    user: Any = st.user
    if not user.get("is_logged_in"):
        st.title("relidash")
        st.write("Sign in to see the reliability reports.")
        st.button("Sign in", on_click=st.login)
        st.stop()
    if not email_allowed(user.get("email"), allowed_domains()):
        st.title("relidash")
        st.error(f"{user.get('email')} is not allowed to see these reports.")
        st.button("Sign out", on_click=st.logout)
        st.stop()


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
