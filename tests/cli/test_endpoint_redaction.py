"""Credentials in an endpoint URL (`AWS_ENDPOINT_URL=http://KEY:SECRET@host`) or in a signed
query string never reach a CLI error, a served page, or the catalog's record of its source.

The endpoint is a closed local port, so the listing fails at once and says why; the key
and secret must appear nowhere in what is printed or shown.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from cli_run import run_cli
from s3_server import closed_port_url, require_modules
from streamlit.testing.v1 import AppTest

from dashboard.data.sources import SourceError, parse_location, redact_secrets, where
from dashboard.render.formatting import WORD_JOINER

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
KEY, SECRET = "AKIAEXAMPLEKEY", "wJalrXUtnFEMIexamplesecret"
URL = "s3://reports-bucket/evals"

S3FS = (("s3fs", "s3fs"),)
GCSFS = (("gcsfs", "gcsfs"),)
CLIENTS = {"tests": "the endpoint redaction tests", "install": "pip install -e '.[test]'"}


@pytest.fixture(autouse=True)
def _s3fs() -> None:
    require_modules(S3FS, **CLIENTS)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"http://{KEY}:{SECRET}@127.0.0.1:9000", "http://***@127.0.0.1:9000"),
        (f"see https://{KEY}@host/x and more", "see https://***@host/x and more"),
        (
            f'URL: "http://{KEY}:{SECRET}@h/b?list-type=2&X-Amz-Signature=abc&prefix=p"',
            'URL: "http://***@h/b?list-type=2&X-Amz-Signature=***&prefix=p"',
        ),
        (
            "https://a.blob.core.windows.net/c?sv=2024&sig=c2VjcmV0&se=2027",
            "https://a.blob.core.windows.net/c?sv=2024&sig=***&se=2027",
        ),
        ("http://h/x?X-Amz-Credential=AKIA%2F&X-Amz-Security-Token=t", None),
        # no credential: unchanged, an Azure container@account included
        ("az://container@account.blob.core.windows.net/p", "az://container@account.blob.core.windows.net/p"),
        ("s3://bucket/prefix (endpoint http://minio:9000)", "s3://bucket/prefix (endpoint http://minio:9000)"),
        ("mail me@example.com", "mail me@example.com"),
    ],
)  # fmt: skip
def test_redact_secrets(text: str, shown: str | None) -> None:
    redacted = redact_secrets(text)
    if shown is not None:
        assert redacted == shown
    for secret in (KEY, SECRET, "abc", "c2VjcmV0", "AKIA%2F", "=t"):
        if secret in text and secret not in (shown or ""):
            assert secret not in redacted, (secret, redacted)


@pytest.fixture
def endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    host = closed_port_url().removeprefix("http://")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://{KEY}:{SECRET}@{host}")
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    monkeypatch.delenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", raising=False)
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return host


def test_the_source_identity_holds_no_credential(endpoint: str) -> None:
    ident = where(parse_location(URL))
    assert ident == f"{URL} (endpoint http://***@{endpoint})"
    assert str(SourceError(f"cannot list {URL}: http://{KEY}:{SECRET}@x")).count(SECRET) == 0


@pytest.mark.parametrize(
    "command",
    [
        ["summary"],
        ["gate", "--suite", "s", "--k", "1", "--min-ci-low", "0"],
        ["signoff", "--suite", "s", "--decision", "approved", "--by", "me"],
    ],
)
def test_a_cli_error_hides_the_endpoint_credentials(
    endpoint: str, command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command[0], URL, *command[1:], "--catalog", str(tmp_path / "c.duckdb")]
    if command[0] == "signoff":
        argv += ["--reviews", str(tmp_path / "reviews")]
    code, out, err = run_cli(argv, capsys)
    assert code == 2, err
    assert KEY not in out + err and SECRET not in out + err, err
    assert f"http://***@{endpoint}" in err and "could not connect" in err


@pytest.fixture
def served(endpoint: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("RELIDASH_REPORTS", URL)
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield endpoint
    st.cache_data.clear()
    st.cache_resource.clear()


def test_the_served_page_hides_the_endpoint_credentials(served: str) -> None:
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    shown = [e.value for e in [*at.error, *at.warning, *at.info, *at.markdown, *at.caption]]
    shown += [str(x.value) for x in at.exception]
    # Markdown escapes taken out, and md()'s word joiner after a URL's scheme (it keeps
    # the URL from becoming a link; a reader sees the URL as written)
    text = "\n".join(shown).replace("\\", "").replace(WORD_JOINER, "")
    assert "could not connect" in text, text  # the page says why
    assert f"http://***@{served}" in text, text
    assert KEY not in text and SECRET not in text, text


@pytest.mark.parametrize("url", [f"s3://{KEY}:{SECRET}@bucket/x", f"gs://{KEY}@bucket/x"])
def test_credentials_typed_into_a_bucket_url_are_refused_unshown(
    url: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    require_modules(GCSFS, **CLIENTS)
    code, out, err = run_cli(["summary", url], capsys)
    assert code == 2 and "credentials do not belong in the URL" in err, err
    assert KEY not in out + err and SECRET not in out + err
