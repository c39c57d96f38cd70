"""Who may see the dashboard: open without [auth], login (and domain allow-list) with it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.app import auth
from dashboard.app.auth import email_allowed

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app" / "main.py")
FIXTURES = Path(__file__).parents[1] / "fixtures"
AUTH = {
    "redirect_uri": "http://localhost:8501/oauth2callback",
    "cookie_secret": "test-only-not-a-secret",
    "client_id": "relidash-test",
    "client_secret": "test-only",
    "server_metadata_url": "https://accounts.example.invalid/.well-known/openid-configuration",
}


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    reports = tmp_path / "reports"
    shutil.copytree(FIXTURES, reports)
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    st.cache_data.clear()
    st.cache_resource.clear()
    return AppTest.from_file(APP, default_timeout=60)


def headings(at: AppTest) -> list[str]:
    return [t.value for t in at.title]


def test_without_auth_every_page_is_open(app: AppTest) -> None:
    app.run()
    assert not app.exception
    assert "Releases" in headings(app)
    assert not [b for b in app.button if b.label == "Sign in"]


def test_with_auth_a_signed_out_viewer_sees_only_the_sign_in(app: AppTest) -> None:
    app.secrets["auth"] = AUTH
    app.user = {"is_logged_in": False}
    app.run()
    assert not app.exception
    assert "Releases" not in headings(app)
    assert [b for b in app.button if b.label == "Sign in"]
    assert not app.dataframe


def test_with_auth_a_signed_in_viewer_sees_the_reports(app: AppTest) -> None:
    app.secrets["auth"] = AUTH
    app.user = {"is_logged_in": True, "email": "ana@example.com", "name": "Ana"}
    app.run()
    assert not app.exception
    assert "Releases" in headings(app)


def test_domain_allow_list_refuses_other_domains(app: AppTest) -> None:
    app.secrets["auth"] = AUTH
    app.secrets["relidash"] = {"allowed_domains": ["example.com"]}
    app.user = {"is_logged_in": True, "email": "mallory@evil.example.org"}
    app.run()
    assert not app.exception
    assert "Releases" not in headings(app)
    assert any("not allowed" in e.value for e in app.error)


@pytest.mark.parametrize(
    ("email", "domains", "allowed"),
    [
        ("a@example.com", [], True),
        ("a@example.com", ["example.com"], True),
        ("a@EXAMPLE.com", ["example.com"], True),
        ("a@sub.example.com", ["example.com"], False),
        ("a@example.com.evil.org", ["example.com"], False),
        (None, ["example.com"], False),
        ("no-at-sign", ["example.com"], False),
    ],
)
def test_email_allowed(email: str | None, domains: list[str], allowed: bool) -> None:
    assert email_allowed(email, domains) is allowed


def test_an_address_the_provider_marks_unverified_is_refused(app: AppTest) -> None:
    app.secrets["auth"] = AUTH
    app.secrets["relidash"] = {"allowed_domains": ["example.com"]}
    app.user = {"is_logged_in": True, "email": "ana@example.com", "email_verified": False}
    app.run()
    assert not app.exception
    assert "Releases" not in headings(app)
    assert any("not allowed" in e.value for e in app.error)
    assert [b for b in app.button if b.label == "Sign out"]


def test_a_signed_in_viewer_sees_who_they_are_and_can_sign_out(app: AppTest) -> None:
    app.secrets["auth"] = AUTH
    app.secrets["relidash"] = {"allowed_domains": ["example.com"]}
    app.user = {"is_logged_in": True, "email": "ana@example.com", "email_verified": True}
    app.run()
    assert not app.exception
    assert "Releases" in headings(app)
    # the caption is Markdown with the address's punctuation escaped
    shown = [c.value.replace("\\", "") for c in app.sidebar.caption]
    assert any("Signed in as ana@example.com" in c for c in shown), shown
    assert [b for b in app.sidebar.button if b.label == "Sign out"]


def xsrf_cookie(token: bytes, mask: bytes) -> str:
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|1700000000"


def test_the_browser_key_is_the_xsrf_token_whatever_its_mask() -> None:
    token = bytes(range(16))
    assert auth._xsrf_token(xsrf_cookie(token, b"\x01\x02\x03\x04")) == token
    assert auth._xsrf_token(xsrf_cookie(token, b"\xff\x00\xaa\x55")) == token
    for broken in (None, "", "2|zz|00|1", "1|0102|0304|1", "2|0102|0304", token.hex()):
        assert auth._xsrf_token(broken) is None


def test_a_requested_page_is_taken_once_and_expires(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "_pending", type(auth._pending)())
    monkeypatch.setattr(auth, "_browser_key", lambda: "browser-a")
    now = [1000.0]
    monkeypatch.setattr(auth.time, "monotonic", lambda: now[0])
    auth._sign_in("lottery", {"suite": "code-agent"})  # st.login is a no-op outside a run
    taken = auth._take_requested()
    assert taken is not None and (taken.url_path, taken.query) == (
        "lottery",
        {"suite": "code-agent"},
    )
    assert auth._take_requested() is None
    auth._sign_in("gates", {})
    now[0] += auth.RETURN_SECONDS + 1
    assert auth._take_requested() is None


def test_the_requested_pages_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth, "_pending", type(auth._pending)())
    for i in range(auth.RETURN_MAX_PENDING + 5):
        monkeypatch.setattr(auth, "_browser_key", lambda i=i: f"browser-{i}")
        auth._sign_in("releases", {})
    assert len(auth._pending) == auth.RETURN_MAX_PENDING
    assert "browser-0" not in auth._pending
