"""Who may see the dashboard: open without [auth], login (and domain allow-list) with it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.app.auth import email_allowed

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app" / "main.py")
FIXTURES = Path(__file__).parent / "fixtures"
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
