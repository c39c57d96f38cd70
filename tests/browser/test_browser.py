"""Real-browser tests: Playwright driving Debian's Chromium against `relidash serve`.

One server per module, on a free port, over a private copy of sample_reports/ (plus one
hostile report written here) and a private catalog file. Test tools cannot download a
browser here, so Chromium is launched from /usr/bin/chromium. Without it (or without the
playwright package) these tests skip on a workstation and fail under `make test` and CI
(tests/support/required_tools.py), where a missing browser must not pass silently.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
import required_tools
from chromium import (  # noqa: F401  the helpers other browser tests take from here
    CHROMIUM,
    CHROMIUM_ARGS,
    QUIET,
    SETTLE_TIMEOUT,
    STATIC_TABLE,
    TABLES,
    assert_no_exception,
    heading,
    settle,
    unavailable,
)
from servers import free_port, healthy, relidash_command, stop_group

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
START_TIMEOUT = 90.0  # seconds for the server to answer
CHARTS = '[data-testid="stImage"] img[src^="data:image/svg+xml"]'
CHARTS_ON = {"/": 2, "/releases": 2, "/slices": 1, "/gates": 1, "/calculator": 1, "/review": 1}

PAGES = [
    ("/", "Releases"),
    ("/releases", "Releases"),
    ("/slices", "Slices"),
    ("/lottery", "Lottery cases"),
    ("/gates", "Gates"),
    ("/calculator", "Calculator"),
    ("/data", "Data"),
    ("/review", "Release review"),
    ("/reviews", "Reviews"),
]

HOSTILE_SUITE = "hostile-agent"
SCRIPT = "<script>window.__pwned=1</script>"
IMG = '<img src=x onerror="window.__pwned=2">'
MARKDOWN_LINK = "[click me](javascript:window.__pwned=3)"
JS_URL = "javascript:window.__pwned=4"
PAYLOADS = [SCRIPT, IMG, MARKDOWN_LINK, JS_URL]
# a tag of the hostile case: its slice's name lands in the Slices page's static tables
# (no quotes or dashes, which Streamlit's Markdown would set typographically)
TAG_IMG = "<img src=x onerror=window.__pwned=5>"
TAG_LINK = "[click me](javascript:window.__pwned=6)"
HOSTILE_TAG = f"risk_tier:{TAG_IMG} {TAG_LINK}"


# ---- the reports, the catalog and the server ---------------------------------------------


@dataclass(frozen=True)
class Workspace:
    reports: Path
    catalog: Path
    hostile_case: str  # the deep-link key (case_id) of the edited lottery case
    reviews: Path  # the server's sign-off records (never the user's own)


def write_hostile_report(reports: Path) -> str:
    """A copy of a 0.18+ report whose one lottery case has transcripts full of markup.

    It goes in as its own suite so the sample suites' numbers do not move.
    """
    for source in sorted(reports.rglob("*.json"), reverse=True):
        try:
            report = json.loads(source.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(report, dict) or not isinstance(report.get("cases"), list):
            continue
        for case in report["cases"]:
            # A lottery case under either error policy: some passes, some quality failures,
            # and no error or skipped trial.
            trials = case.get("trials") or []
            statuses = {t.get("status") for t in trials}
            if (
                case.get("case_id")
                and case.get("status") in ("passed", "failed_quality")
                and 0 < int(case.get("pass_count") or 0) < int(case.get("runs") or 0)
                and statuses == {"passed", "failed_quality"}
            ):
                break
        else:
            continue
        base = [
            "[user] Please summarise the attached page.",
            *(f"[assistant] {p}" for p in PAYLOADS),
        ]
        passing = "\n".join([*base, "[assistant] Done: **bold** and `code`."])
        failing = "\n".join([*base, f"[assistant] Gave up {IMG.replace('=2', '=5')} **bold**"])
        for trial in trials:
            trial["output"] = passing if trial.get("status") == "passed" else failing
        case["output"] = trials[-1]["output"]
        case["tags"] = [HOSTILE_TAG]
        report["suite"] = HOSTILE_SUITE
        target = reports / HOSTILE_SUITE / "2026-05-01_hostile.json"
        target.parent.mkdir()
        target.write_text(json.dumps(report, indent=1), encoding="utf-8")
        return str(case["case_id"])
    pytest.fail("no 0.18+ sample report has a lottery case with passing and failing trials")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    base = tmp_path_factory.mktemp("browser")
    reports = base / "reports"
    shutil.copytree(SAMPLE, reports)
    case = write_hostile_report(reports)
    return Workspace(reports, base / "cache" / "catalog.duckdb", case, base / "reviews")


def summary(ws: Workspace) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            *relidash_command(),
            "summary",
            str(ws.reports),
            "--json",
            "--by",
            "file",
            "--catalog",
            str(ws.catalog),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def summary_doc(workspace: Workspace) -> dict[str, Any]:
    done = summary(workspace)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    assert HOSTILE_SUITE in {r["suite"] for r in doc["reports"]}, doc["problems"]
    return doc


@pytest.fixture(scope="module")
def server(workspace: Workspace, summary_doc: dict[str, Any]) -> Iterator[str]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = workspace.catalog.parent.parent / "server.log"
    with open(log_path, "w") as log:
        # Its own process group: `relidash serve` runs Streamlit as a child and does not
        # pass SIGTERM on (the child would outlive it, holding the port), so the whole
        # group is stopped when the tests end.
        proc = subprocess.Popen(
            [
                *relidash_command(),
                "serve",
                str(workspace.reports),
                "--port",
                str(port),
                "--catalog",
                str(workspace.catalog),
                "--reviews",
                str(workspace.reviews),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
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
        yield url
    finally:
        stop_group(proc)


# ---- the browser --------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def browser_available() -> None:
    """Checked before anything is started: no browser, no server."""
    required_tools.require_browser(CHROMIUM)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(accept_downloads=True)
    context.set_default_timeout(SETTLE_TIMEOUT * 1000)
    try:
        yield context.new_page()
    finally:
        context.close()


def open_path(page: Any, url: str) -> Any:
    page.goto(url)
    settle(page)
    return page


def download_button(page: Any, name: str) -> Any:
    """The button of the page's CSV download `name` (dashboard/app/widgets.py download):
    by its key, which Streamlit writes into a class of its element, since a page may have
    several buttons labelled "Download CSV" (the first in the DOM may be another's)."""
    key = re.sub(r"[^a-zA-Z0-9_-]", "-", f"dl_{name}")
    return page.locator(f".st-key-{key}").get_by_role("button", name="Download CSV")


# ---- tests --------------------------------------------------------------------------------


@pytest.mark.parametrize("path, title", PAGES)
def test_every_page_loads_without_an_exception(
    server: str, page: Any, path: str, title: str
) -> None:
    open_path(page, server + path)
    assert_no_exception(page)
    assert heading(page) == title
    assert urlparse(page.url).path == (path if path != "/" else "/releases")
    # before the meeting test signs anything, Reviews says there is nothing yet
    shown = '[data-testid="stAlert"]' if path == "/reviews" else TABLES
    page.locator(shown).first.wait_for(state="visible")
    # each chart, drawn on the server (widgets.chart), decoded as an image: none broken
    drawn = page.locator(CHARTS).evaluate_all(
        "(imgs) => imgs.map((i) => [i.complete, i.naturalWidth, i.alt])"
    )
    assert len(drawn) == CHARTS_ON.get(path, 0), drawn
    assert all(complete and width > 100 and alt for complete, width, alt in drawn), drawn


def test_a_deep_link_connects_at_the_server_root_at_once(server: str, page: Any) -> None:
    """Every page's address answers with a first page naming the server's root
    (dashboard/app/server.py), so the frontend asks the root for its health and
    host-config and opens its stream there, without first asking below the page's
    address (404, then a 100 ms wait). The menu's links still lead to the pages."""
    asked: list[str] = []
    page.on("request", lambda request: asked.append(urlparse(request.url).path))
    open_path(page, server + "/slices?suite=support-agent")
    core = [path for path in asked if "/_stcore/" in path]
    assert "/_stcore/health" in core and "/_stcore/host-config" in core, core
    assert not [path for path in core if not path.startswith("/_stcore/")], core
    assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == server + "/"
    links = page.locator('[data-testid="stSidebarNav"] a').evaluate_all(
        "(links) => links.map((a) => new URL(a.href).pathname)"
    )
    assert "/releases" in links and "/gates" in links, links
    page.locator('[data-testid="stSidebarNav"] a[href$="/gates"]').click()
    page.wait_for_url(re.compile(r"/gates(\?|$)"))
    settle(page)
    assert heading(page) == "Gates"


def lottery_target(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A 0.18+ sample report and one of its lottery cases that is not the page's default."""
    candidates = [
        r
        for r in doc["reports"]
        if r["suite"] != HOSTILE_SUITE
        and r["harness"] == "multivon-eval"  # the Inspect sample suite: tests/data/test_inspect.py
        and len(r["lottery"]) >= 2
        and r["lottery"][-1].get("case_id")
        and tuple(int(x) for x in r["format"].split("-")[-1].split(".")[:2]) >= (0, 18)
    ]
    assert candidates, "no 0.18+ sample report has two lottery cases"
    latest = {r["suite"]: r["release"] for r in doc["reports"]}
    # Prefer a release that is not its suite's latest, so the link's release matters too.
    report = next((r for r in candidates if r["release"] != latest[r["suite"]]), candidates[-1])
    return report, report["lottery"][-1]


def test_deep_link_opens_the_lottery_diff_of_that_case(
    server: str, page: Any, summary_doc: dict[str, Any]
) -> None:
    report, case = lottery_target(summary_doc)
    query = {"suite": report["suite"], "release": report["release"], "case": case["case_id"]}
    open_path(page, f"{server}/lottery?{urlencode(query)}")
    assert_no_exception(page)
    assert heading(page) == "Lottery cases"
    assert "not in the loaded reports" not in page.locator("body").inner_text()
    params = parse_qs(urlparse(page.url).query)
    assert {k: params[k] for k in query} == {k: [v] for k, v in query.items()}
    assert (
        page.locator('[data-testid="stCode"]').first.inner_text().strip() == case["input"].strip()
    )

    diff = page.locator("table.rd")
    diff.wait_for(state="visible")
    first = diff.locator("tr.first")
    assert first.count() == 1
    assert "▶" in first.inner_text()
    labels = [h.strip() for h in diff.locator("th").all_inner_texts() if h.strip()]
    assert (
        len(labels) == 2 and labels[0].endswith("(passed)") and not labels[1].endswith("(passed)")
    )


def test_csv_download(server: str, page: Any, summary_doc: dict[str, Any]) -> None:
    suite = sorted({r["suite"] for r in summary_doc["reports"]})[0]
    open_path(page, f"{server}/releases?{urlencode({'suite': suite, 'k': 3})}")
    assert_no_exception(page)
    with page.expect_download() as info:
        download_button(page, f"releases-{suite}-k3").click()
    download = info.value
    assert download.suggested_filename == f"releases-{suite}-k3.csv"
    data = Path(download.path()).read_bytes()
    assert data
    rows = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert rows[0] == [
        "release",
        "pass@1",
        "pass@3",
        "pass^3",
        "Δ pass^3",
        "envelope",
        "cases (evaluated / errored / skipped)",
        "runs",
        "format",
    ]
    releases = {r["release"] for r in summary_doc["reports"] if r["suite"] == suite}
    assert {row[0] for row in rows[1:]} == releases
    assert len(rows) == 1 + len(releases)


def test_hostile_transcript_is_shown_as_text_and_runs_nothing(
    server: str, page: Any, workspace: Workspace
) -> None:
    query = {"suite": HOSTILE_SUITE, "case": workspace.hostile_case}
    open_path(page, f"{server}/lottery?{urlencode(query)}")
    assert_no_exception(page)
    assert heading(page) == "Lottery cases"
    diff = page.locator("table.rd")
    diff.wait_for(state="visible")
    page.wait_for_timeout(500)  # an injected <img onerror> fires after its load fails

    text = diff.inner_text()
    for payload in PAYLOADS:
        assert payload in text, f"{payload!r} is not shown as text"
    assert diff.locator("script, img, a").count() == 0
    assert page.locator("img[src='x'], a[href^='javascript:' i]").count() == 0
    for frame in page.frames:
        assert frame.evaluate("typeof window.__pwned") == "undefined", f"script ran in {frame.url}"


def test_report_text_in_a_static_table_is_shown_as_text(
    server: str, page: Any, workspace: Workspace
) -> None:
    value = HOSTILE_TAG.split(":", 1)[1]
    query = {"suite": HOSTILE_SUITE, "dim": "risk_tier", "slice": value}
    open_path(page, f"{server}/slices?{urlencode(query)}")
    assert_no_exception(page)
    assert heading(page) == "Slices"
    static = page.locator(STATIC_TABLE)
    static.first.wait_for(state="visible")
    assert static.count() == 3  # the counts, the slices, and the cases of the hostile slice
    page.wait_for_timeout(500)  # an injected <img onerror> fires after its load fails

    for i in range(2):  # the slice's name: the counts' row label, the slices' first column
        assert value in " ".join(static.nth(i).inner_text().split()), i
    assert page.locator(f"{STATIC_TABLE} :is(img, script)").count() == 0
    hrefs = page.locator(f"{STATIC_TABLE} a").evaluate_all("(a) => a.map((e) => e.href)")
    assert hrefs and all(urlparse(h).path == "/case" for h in hrefs), hrefs
    for frame in page.frames:
        assert frame.evaluate("typeof window.__pwned") == "undefined", f"script ran in {frame.url}"


def test_two_sessions_at_once(server: str, browser: Any, summary_doc: dict[str, Any]) -> None:
    report, case = lottery_target(summary_doc)
    urls = [
        f"{server}/releases",
        f"{server}/lottery?{urlencode({'suite': report['suite'], 'release': report['release'], 'case': case['case_id']})}",
    ]
    contexts = [browser.new_context() for _ in urls]
    try:
        pages = [c.new_page() for c in contexts]
        for p, url in zip(pages, urls, strict=True):
            p.set_default_timeout(SETTLE_TIMEOUT * 1000)
            p.goto(url)  # returns at the load event; both scripts then run side by side
        for p in pages:
            settle(p)
            assert_no_exception(p)
        assert [heading(p) for p in pages] == ["Releases", "Lottery cases"]
        pages[0].locator(TABLES).first.wait_for(state="visible")
        pages[1].locator("table.rd").wait_for(state="visible")
    finally:
        for c in contexts:
            c.close()


def test_summary_cli_shares_the_catalog_with_a_running_server(
    server: str, page: Any, workspace: Workspace
) -> None:
    open_path(page, f"{server}/data")  # the server has refreshed the catalog file
    done = summary(workspace)
    assert done.returncode == 0, done.stderr
    suites = {r["suite"] for r in json.loads(done.stdout)["reports"]}
    assert {"code-agent", "support-agent", HOSTILE_SUITE} <= suites
    assert healthy(server)
    open_path(page, f"{server}/releases")  # and a new session still loads after it
    assert_no_exception(page)
    assert heading(page) == "Releases"


def test_the_release_review_meeting(server: str, page: Any, workspace: Workspace) -> None:
    """The meeting: open the review of the latest release, sign it off, find the record
    on the Reviews page and in the reviews directory, bound to the file's digest."""
    import hashlib

    open_path(page, f"{server}/review?suite=support-agent")
    assert_no_exception(page)
    assert heading(page) == "Release review"
    body = page.inner_text("body")
    assert "v1.11.0" in body and "Provenance" in body
    page.get_by_text("conditional", exact=True).click()
    page.get_by_role("textbox", name="Comment").fill("ship behind the refund flag")
    page.get_by_role("textbox", name="Your name").fill("Ada Lovelace")
    page.get_by_role("button", name="Record the sign-off").click()
    settle(page)
    assert_no_exception(page)
    records = sorted(workspace.reviews.glob("*.json"))
    assert len(records) == 1, records
    record = json.loads(records[0].read_text(encoding="utf-8"))
    assert (record["suite"], record["release"], record["decision"], record["by"]) == (
        "support-agent",
        "v1.11.0",
        "conditional",
        "Ada Lovelace",
    )
    for item in record["evidence"]:
        digest = hashlib.sha256((workspace.reports / item["path"]).read_bytes()).hexdigest()
        assert item["sha256"] == digest
    open_path(page, f"{server}/reviews")
    assert_no_exception(page)
    assert heading(page) == "Reviews"
    download = page.locator('[data-testid="stDownloadButton"] button').first
    with page.expect_download() as info:
        download.click()
    listed = Path(info.value.path()).read_text(encoding="utf-8")
    assert "Ada Lovelace" in listed and "conditional" in listed and "unchanged" in listed
