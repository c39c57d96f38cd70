"""Sign-in end to end: Chromium against `relidash serve` and a real OpenID Connect provider.

The provider is oidc-provider-mock (authorization-code flow, discovery document, a form
where the test types the subject, which doubles as the e-mail claim), started here on
127.0.0.1. The server runs with a temporary HOME holding .streamlit/secrets.toml and a
temporary working directory, so no secret is ever written into the repository. Without
Chromium, Playwright, Streamlit's auth extra or the provider these tests skip on a
workstation and fail under `make test` and CI (tests/support/required_tools.py).

Also here: `relidash serve --host` on a non-loopback address warns when no [auth] is
configured (the command is run up to the point where it would become the server).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import parse_qs, urlparse

import pytest
import required_tools
from chromium import TABLES
from chromium import settle as settle_page
from servers import STOP_BEFORE_EXEC, free_port, healthy, relidash_command, stop_group

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
START_TIMEOUT = 90.0  # seconds for the server to answer
SETTLE_TIMEOUT = 60.0  # seconds for a page's script to finish

COOKIE_SECRET = "relidash-oidc-test-cookie-secret-a"
OTHER_SECRET = "relidash-oidc-test-cookie-secret-b"
USER_COOKIE = "_streamlit_user"  # Streamlit's identity cookie (itsdangerous, salt = name)
ALLOWED = "ada@example.com"
OUTSIDER = "eve@evil.test"

PAGES = [
    ("/releases", "Releases"),
    ("/slices", "Slices"),
    ("/lottery", "Lottery cases"),
    ("/gates", "Gates"),
    ("/calculator", "Calculator"),
    ("/data", "Data"),
    ("/review", "Release review"),
    ("/reviews", "Reviews"),
]
DEEP_LINK = {"suite": "code-agent", "release": "v1.9.0"}


def unavailable(reason: str) -> NoReturn:
    required_tools.unavailable(
        reason, tests="the sign-in tests", install="pip install -e '.[test]'; Debian's chromium"
    )


def secrets_toml(app_url: str, issuer: str, cookie_secret: str) -> str:
    return f"""\
[auth]
redirect_uri = "{app_url}/oauth2callback"
cookie_secret = "{cookie_secret}"
client_id = "relidash-test"
client_secret = "test-only-not-a-secret"
server_metadata_url = "{issuer}/.well-known/openid-configuration"

[relidash]
allowed_domains = ["example.com"]
"""


# ---- the provider, the server --------------------------------------------------------------


@pytest.fixture(scope="module")
def dependencies() -> None:
    """Checked before anything is started: no browser or provider, no server."""
    for module, what in (
        ("playwright.sync_api", "the playwright package"),
        ("authlib", "streamlit[auth] (Authlib)"),
        ("oidc_provider_mock", "oidc-provider-mock"),
        ("itsdangerous", "itsdangerous"),
    ):
        try:
            __import__(module)
        except ImportError:
            unavailable(f"{what} is not installed")
    if not (CHROMIUM.is_file() and os.access(CHROMIUM, os.X_OK)):
        unavailable(f"Chromium is not installed at {CHROMIUM}")


@pytest.fixture(scope="module")
def issuer(dependencies: None) -> Iterator[str]:
    """The OpenID provider on 127.0.0.1 (its issuer is the URL it is reached at)."""
    import oidc_provider_mock
    import werkzeug.serving

    provider = werkzeug.serving.make_server(
        "127.0.0.1", 0, oidc_provider_mock.app(require_nonce=True), threaded=True
    )
    thread = threading.Thread(target=provider.serve_forever, args=(0.1,), daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{provider.server_port}"
        with urllib.request.urlopen(f"{url}/.well-known/openid-configuration") as response:
            assert json.load(response)["issuer"] == url
        yield url
    finally:
        provider.shutdown()
        thread.join(5)
        provider.server_close()


@dataclass(frozen=True)
class Deployment:
    url: str
    issuer: str
    reports: Path
    reviews: Path
    secret_text: list[str] = field(default_factory=list)  # report text that must not leak


def report_text(reports: Path) -> list[str]:
    """Strings only a signed-in user may receive: suite names, a file name, a case input."""
    latest = sorted((reports / "support-agent").glob("*.json"))[-1]
    report = json.loads(latest.read_text(encoding="utf-8"))
    inputs = [c["input"] for c in report["cases"] if isinstance(c.get("input"), str)]
    assert inputs, latest
    return ["support-agent", "code-agent", latest.name, max(inputs, key=len)[:60]]


@pytest.fixture(scope="module")
def deployment(issuer: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    base = tmp_path_factory.mktemp("oidc")
    reports, reviews, home, cwd = (base / n for n in ("reports", "reviews", "home", "cwd"))
    shutil.copytree(SAMPLE, reports)
    (home / ".streamlit").mkdir(parents=True)
    cwd.mkdir()
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    (home / ".streamlit" / "secrets.toml").write_text(
        secrets_toml(url, issuer, COOKIE_SECRET), encoding="utf-8"
    )
    env = dict(
        os.environ,
        HOME=str(home),
        XDG_CACHE_HOME=str(base / "cache"),
        XDG_DATA_HOME=str(base / "data"),
    )
    log_path = base / "server.log"
    with open(log_path, "w") as log:
        # Its own process group: Streamlit runs as a child that outlives a plain SIGTERM.
        proc = subprocess.Popen(
            [
                *relidash_command(),
                "serve",
                str(reports),
                "--port",
                str(port),
                "--catalog",
                str(base / "catalog.duckdb"),
                "--reviews",
                str(reviews),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not healthy(url):
            if proc.poll() is not None:
                pytest.fail(
                    f"relidash serve exited with {proc.returncode}:\n{log_path.read_text()}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"relidash serve did not answer on {url}:\n{log_path.read_text()}")
            time.sleep(0.25)
        assert not (ROOT / ".streamlit" / "secrets.toml").exists()
        yield Deployment(url, issuer, reports, reviews, report_text(reports))
    finally:
        stop_group(proc)


# ---- the browser --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(dependencies: None) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


class Tab:
    """One browser context (its own cookies) and page, recording every websocket frame."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.page = context.new_page()
        self.frames: list[bytes] = []
        self.page.on("websocket", self._watch)

    def _watch(self, ws: Any) -> None:
        ws.on("framereceived", self._record)

    def _record(self, payload: bytes | str) -> None:
        self.frames.append(payload.encode("utf-8") if isinstance(payload, str) else payload)

    def leaked(self, texts: list[str], since: int = 0) -> list[str]:
        """The texts found in the page or in a frame received after the first `since`."""
        html = self.page.content()
        frames = self.frames[since:]
        return [t for t in texts if t in html or any(t.encode("utf-8") in f for f in frames)]

    def open(self, url: str) -> Tab:
        self.page.goto(url)
        self.settle()
        return self

    def settle(self) -> None:
        """Wait for the app to connect, show a heading, and finish running its script."""
        settle_page(self.page)

    def heading(self) -> str:
        return str(self.page.locator("h1").first.inner_text()).strip()

    def body(self) -> str:
        return str(self.page.inner_text("body"))

    def no_exception(self) -> None:
        errors = self.page.locator('[data-testid="stException"]')
        assert errors.count() == 0, errors.all_inner_texts()

    def shows_the_sign_in(self) -> bool:
        return (
            self.heading() == "relidash"
            and "Sign in to see the reliability reports." in self.body()
            and self.page.get_by_role("button", name="Sign in").count() == 1
        )

    def sign_in(self, email: str, app_url: str) -> None:
        """From the prompt, through the provider's form, back to the app."""
        self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_selector('input[name="sub"]')
        self.page.fill('input[name="sub"]', email)
        self.page.get_by_role("button", name="Authorize").click()
        self.page.wait_for_url(f"{app_url}/**")
        self.settle()

    def sign_out(self, app_url: str) -> None:
        """The app's Sign out, then the provider's end-session form, back to the app."""
        self.page.get_by_role("button", name="Sign out").click()
        self.page.get_by_role("button", name="End session").click()
        self.page.wait_for_url(f"{app_url}/**")
        self.settle()

    def user_cookie(self) -> dict[str, Any] | None:
        return next((c for c in self.context.cookies() if c["name"] == USER_COOKIE), None)


@pytest.fixture
def new_tab(browser: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def make() -> Tab:
        context = browser.new_context()
        context.set_default_timeout(SETTLE_TIMEOUT * 1000)
        contexts.append(context)
        return Tab(context)

    try:
        yield make
    finally:
        for context in contexts:
            context.close()


# ---- not signed in ------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.parametrize("path", ["/", *(p for p, _ in PAGES)])
def test_signed_out_every_page_shows_only_the_sign_in(
    deployment: Deployment, new_tab: Any, path: str
) -> None:
    tab = new_tab().open(deployment.url + path)
    tab.no_exception()
    assert tab.shows_the_sign_in(), tab.body()
    assert not tab.page.locator(TABLES).count()
    assert not tab.page.locator('[data-testid="stSidebarNav"]').count()
    assert tab.frames, "no websocket frame was recorded"
    assert tab.leaked(deployment.secret_text) == []


# ---- signed in ----------------------------------------------------------------------------


@pytest.mark.browser
def test_sign_in_lands_on_the_deep_link_and_every_page_works(
    deployment: Deployment, new_tab: Any
) -> None:
    tab = new_tab().open(f"{deployment.url}/lottery?suite=code-agent&release=v1.9.0")
    assert tab.shows_the_sign_in(), tab.body()
    # The query's own words come back in the page's URL; nothing else from a report.
    before = [t for t in deployment.secret_text if t not in DEEP_LINK.values()]
    assert tab.leaked(before) == []

    tab.sign_in(ALLOWED, deployment.url)
    tab.no_exception()
    assert tab.heading() == "Lottery cases", tab.body()
    url = urlparse(tab.page.url)
    assert url.path == "/lottery"
    params = parse_qs(url.query)
    assert {k: params.get(k) for k in DEEP_LINK} == {k: [v] for k, v in DEEP_LINK.items()}
    # the page's selectors show the link's choice (they mirror it into the query)
    assert "not in the loaded reports" not in tab.body()
    for label, value in (("Suite", "code-agent"), ("Release", "v1.9.0")):
        box = tab.page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
        assert box.locator("input").input_value() == value, box.inner_html()
    assert f"Signed in as {ALLOWED}" in tab.page.locator('[data-testid="stSidebar"]').inner_text()
    # the recorder sees report text once it may be sent: the checks above can fail
    assert "support-agent" in tab.leaked(deployment.secret_text)

    for path, title in PAGES:
        tab.open(deployment.url + path)
        tab.no_exception()
        assert tab.heading() == title, (path, tab.body())
        assert urlparse(tab.page.url).path == path
        # Reviews lists the sign-offs, or says there are none yet
        shown = TABLES
        if path == "/reviews":
            shown += ', [data-testid="stAlert"]'
        tab.page.locator(shown).first.wait_for(state="visible")


@pytest.mark.browser
def test_an_outside_email_is_refused_and_can_sign_out(deployment: Deployment, new_tab: Any) -> None:
    tab = new_tab().open(f"{deployment.url}/releases")
    tab.sign_in(OUTSIDER, deployment.url)
    tab.no_exception()
    assert tab.heading() == "relidash"
    alert = tab.page.locator('[data-testid="stAlert"]').inner_text()
    assert OUTSIDER in alert and "not allowed to see these reports" in alert
    assert not tab.page.locator('[data-testid="stSidebarNav"]').count()
    assert tab.leaked(deployment.secret_text) == []
    assert tab.user_cookie() is not None  # signed in, and still refused

    tab.sign_out(deployment.url)
    assert tab.shows_the_sign_in(), tab.body()
    assert tab.user_cookie() is None
    assert tab.leaked(deployment.secret_text) == []


@pytest.mark.browser
def test_sign_out_returns_to_the_prompt(deployment: Deployment, new_tab: Any) -> None:
    tab = new_tab().open(f"{deployment.url}/gates")
    tab.sign_in(ALLOWED, deployment.url)
    assert tab.heading() == "Gates"
    signed_in = len(tab.frames)
    tab.sign_out(deployment.url)
    assert tab.shows_the_sign_in(), tab.body()
    assert tab.user_cookie() is None
    tab.open(f"{deployment.url}/gates")  # a new session: still signed out
    assert tab.shows_the_sign_in(), tab.body()
    assert tab.leaked(deployment.secret_text, since=signed_in) == []


@pytest.mark.browser
def test_a_cookie_signed_with_another_secret_is_not_accepted(
    deployment: Deployment, new_tab: Any
) -> None:
    from itsdangerous import URLSafeTimedSerializer

    tab = new_tab().open(f"{deployment.url}/releases")
    tab.sign_in(ALLOWED, deployment.url)
    assert tab.heading() == "Releases"
    cookie = tab.user_cookie()
    assert cookie is not None
    claims = URLSafeTimedSerializer(COOKIE_SECRET, salt=USER_COOKIE).loads(cookie["value"])
    assert json.loads(claims)["email"] == ALLOWED

    def visit_with(value: str) -> Tab:
        other = new_tab()
        other.context.add_cookies([{**cookie, "value": value}])
        return other.open(f"{deployment.url}/releases")

    # The same claims signed anew with the server's secret are accepted, so the forgery
    # below is refused for its signature alone.
    resigned = URLSafeTimedSerializer(COOKIE_SECRET, salt=USER_COOKIE).dumps(claims)
    assert visit_with(resigned).heading() == "Releases"
    forged = visit_with(URLSafeTimedSerializer(OTHER_SECRET, salt=USER_COOKIE).dumps(claims))
    forged.no_exception()
    assert forged.shows_the_sign_in(), forged.body()
    assert forged.leaked(deployment.secret_text) == []


@pytest.mark.browser
def test_a_sign_off_carries_the_providers_verified_identity(
    deployment: Deployment, new_tab: Any
) -> None:
    tab = new_tab().open(f"{deployment.url}/review?suite=support-agent")
    tab.sign_in(ALLOWED, deployment.url)
    tab.no_exception()
    assert tab.heading() == "Release review"
    form = tab.page.locator('[data-testid="stForm"]')
    assert form.get_by_role("textbox").count() == 1  # the comment, and no name to type
    assert form.get_by_role("textbox", name="Comment").count() == 1
    assert tab.page.get_by_role("textbox", name="Your name").count() == 0
    assert f"Signing as {ALLOWED}" in form.inner_text()

    before = set(deployment.reviews.glob("*.json"))
    form.get_by_text("approved", exact=True).click()
    form.get_by_role("textbox", name="Comment").fill("signed in through the provider")
    tab.page.get_by_role("button", name="Record the sign-off").click()
    tab.settle()
    tab.no_exception()
    written = sorted(set(deployment.reviews.glob("*.json")) - before)
    assert len(written) == 1, written
    record = json.loads(written[0].read_text(encoding="utf-8"))
    assert record["suite"] == "support-agent"
    assert record["decision"] == "approved"
    assert record["identity_verified"] is True
    assert record["by"] == ALLOWED
    identity = record["identity"]
    assert (identity["issuer"], identity["subject"], identity["email"]) == (
        deployment.issuer,
        ALLOWED,
        ALLOWED,
    )


# ---- the warning on a non-loopback address ---------------------------------------------------

# `relidash serve` up to the moment it would become the Streamlit server: os.execve prints
# the command instead, so nothing listens anywhere.
WARNING = "anyone who can reach this port can read every report"


@pytest.mark.parametrize(
    ("host", "secrets_in", "auth", "warned"),
    [
        ("0.0.0.0", None, False, True),
        ("::", None, False, True),
        ("0.0.0.0", "home", False, True),  # a secrets file with [relidash] but no [auth]
        ("0.0.0.0", "home", True, False),
        ("0.0.0.0", "cwd", True, False),
        ("127.0.0.1", None, False, False),
    ],
)
def test_serve_warns_on_a_public_address_without_auth(
    tmp_path: Path, host: str, secrets_in: str | None, auth: bool, warned: bool
) -> None:
    home, cwd, reports = tmp_path / "home", tmp_path / "cwd", tmp_path / "reports"
    for d in (home, cwd, reports):
        d.mkdir()
    if secrets_in is not None:
        folder = (home if secrets_in == "home" else cwd) / ".streamlit"
        folder.mkdir()
        text = secrets_toml("http://relidash.example.com:8501", "https://id.example.com", "x" * 32)
        if not auth:
            text = '[relidash]\nallowed_domains = ["example.com"]\n'
        (folder / "secrets.toml").write_text(text, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            STOP_BEFORE_EXEC,
            "serve",
            str(reports),
            "--host",
            host,
            "--port",
            "8501",
            "--catalog",
            str(tmp_path / "catalog.duckdb"),
            "--reviews",
            str(tmp_path / "reviews"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=dict(os.environ, HOME=str(home), PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr
    argv = json.loads(done.stdout.strip().splitlines()[-1])
    # the project's config.toml says 127.0.0.1 first; the last flag given is the one used
    addresses = [argv[i + 1] for i, a in enumerate(argv) if a == "--server.address"]
    assert addresses[-1] == host, argv
    assert f"serving {reports}" in done.stderr
    assert (WARNING in done.stderr) is warned, done.stderr
    if warned:
        assert f"WARNING: serving on {host}" in done.stderr
