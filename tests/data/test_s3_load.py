"""Loading reports from object storage: `relidash summary s3://bucket/prefix`, incremental by
ETag, a failed listing that drops nothing, replicas seeded from a catalog built elsewhere,
and the dashboard served from a bucket in Chromium.

Against moto's S3 server on 127.0.0.1 behind the counting proxy (tests/support/s3_server.py): every
"downloads nothing" is counted on the wire. The tests upload, change and delete objects
straight at moto, past the proxy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from cli_run import run_cli
from report_files import write_tree
from s3_server import (
    AWS_CLEARED,
    PREFIX,
    Proxy,
    Store,
    aws_variables,
    closed_port_url,
    new_store,
    sample_files,
)
from servers import STOP_BEFORE_EXEC, free_port, healthy, stop_group

from dashboard.analysis import cases, loading
from dashboard.data.catalog import SCHEMA_VERSION
from dashboard.data.load.snapshot import ServedCatalog
from dashboard.data.names import cache_root
from dashboard.data.sources.objects import datetime_ns
from dashboard.data.sources.reports import (
    BucketSource,
    catalog_location,
    default_remote_catalog_path,
    open_source,
)

ROOT = Path(__file__).resolve().parents[2]
MANY = 1500
# keys a directory walk would skip (a name or a folder starting with "."), and keys DuckDB
# would read as glob patterns: both must give the numbers a directory of the same files gives
HIDDEN = (".hidden/x.json", "support-agent/.draft.json")
PATTERN_KEY = "odd/[v1] a?b*.json"


def summary(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    code, out, err = run_cli(["summary", *argv, "--json"], capsys)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


def history(store: Store) -> dict[str, bytes]:
    """The sample reports (multivon-eval 0.4 → 0.20 and Inspect .eval logs), a copy of one
    under a pattern-like key, and hidden keys that must be skipped."""
    files = sample_files()
    assert {Path(k).suffix for k in files} == {".json", ".eval"}  # both harnesses
    odd = dict(files)
    odd[PATTERN_KEY] = files["support-agent/2026-01-05_v1.4.0.json"]
    for key in HIDDEN:
        odd[key] = b"{ not even json"
    store.put_many(odd)
    return odd


def url_of(store: Store) -> str:
    return f"s3://{store.bucket}/{PREFIX}"


def catalog_rows(path: Path) -> dict[str, int]:
    with duckdb.connect(str(path), read_only=True) as con:
        return {
            table: int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
            for table in ("files", "reports", "cases", "problems")
        }


def report_gets(proxy: Proxy, bucket: str) -> list[str]:
    """Report objects fetched (relidash.toml and a seed catalog left out)."""
    return [k for k in proxy.object_gets(bucket) if k.endswith((".json", ".eval"))]


# ---- the numbers --------------------------------------------------------------------------


def test_bucket_numbers_equal_the_directory_numbers(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = history(store)
    listed = store.objects()
    stamps = {key: datetime_ns(listed[f"{PREFIX}/{key}"]["LastModified"]) for key in files}
    local = write_tree(tmp_path / "local", files, stamps)

    from_dir = summary(capsys, str(local), "--catalog", str(tmp_path / "dir.duckdb"))
    from_bucket = summary(capsys, url_of(store))  # the catalog in relidash's cache

    # same files, same keys: nothing in either document depends on where they were read
    assert from_bucket == from_dir
    assert len(from_dir["reports"]) == len(files) - len(HIDDEN)
    assert PATTERN_KEY in {r["file"] for r in from_bucket["reports"]}
    assert not {p["file"] for p in from_bucket["problems"]} & set(HIDDEN)
    assert {r["harness"] for r in from_bucket["reports"]} == {"multivon-eval", "inspect-ai"}
    by_release = summary(capsys, url_of(store), "--by", "release")
    assert by_release == summary(
        capsys, str(local), "--by", "release", "--catalog", str(tmp_path / "dir.duckdb")
    )
    # one catalog per URL under $XDG_CACHE_HOME/relidash/, beside the mirror
    source = open_source(url_of(store))
    assert isinstance(source, BucketSource)
    catalog = default_remote_catalog_path(source.location)
    assert catalog.is_file() and catalog.parent == cache_root()
    assert catalog_location(source, None) == str(catalog)
    assert source.mirror.root.is_relative_to(cache_root())


def test_relidash_toml_is_read_from_the_bucket(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = sample_files()
    store.put_many(files)
    store.put("relidash.toml", b'[releases]\nkey = "file_stem"\n')
    doc = summary(capsys, url_of(store))
    assert {r["release"] for r in doc["reports"]} == {Path(k).stem for k in files}
    store.delete("relidash.toml")
    store.proxy.reset()
    doc = summary(capsys, url_of(store))
    assert "2026-01-05_v1.4.0" not in {r["release"] for r in doc["reports"]}
    assert report_gets(store.proxy, store.bucket) == []  # re-ranked, nothing downloaded


# ---- incremental by ETag ------------------------------------------------------------------


def test_a_second_load_downloads_nothing_and_a_change_is_the_only_fetch(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    files = history(store)
    written = store.etags()
    loaded = [k for k in files if k not in HIDDEN]
    store.proxy.reset()
    first = summary(capsys, url_of(store))
    assert report_gets(store.proxy, store.bucket) == sorted(loaded)  # each object once

    store.proxy.reset()
    assert summary(capsys, url_of(store)) == first
    assert report_gets(store.proxy, store.bucket) == []
    assert store.proxy.listings(store.bucket) == 1

    # the same size, other bytes (another suite name): size alone would miss it, and so
    # would LastModified within the same second; the ETag tells
    changed = "support-agent/2026-03-30_v1.10.0.json"
    body = files[changed].replace(b'"support-agent"', b'"support-agenT"', 1)
    assert len(body) == len(files[changed]) and body != files[changed]
    store.put(changed, body)
    written = {**written, f"{PREFIX}/{changed}": store.etags()[f"{PREFIX}/{changed}"]}
    # as if the overwrite had landed in the same second: the record's LastModified is the
    # new one, so only the ETag differs
    stamp = datetime_ns(store.objects()[f"{PREFIX}/{changed}"]["LastModified"])
    catalog = catalog_location(open_source(url_of(store)), None)
    with duckdb.connect(catalog) as con:
        con.execute("UPDATE files SET mtime_ns = $m WHERE path = $p", {"m": stamp, "p": changed})
    store.proxy.reset()
    after = summary(capsys, url_of(store))
    assert report_gets(store.proxy, store.bucket) == [changed]
    assert {r["suite"] for r in after["reports"] if r["file"] == changed} == {"support-agenT"}

    # a deleted object is dropped from the catalog and the mirror; nothing is fetched
    deleted = "code-agent/2026-01-08_v1.6.0.json"
    store.delete(deleted)
    del written[f"{PREFIX}/{deleted}"]
    store.proxy.reset()
    gone = summary(capsys, url_of(store))
    assert deleted not in {r["file"] for r in gone["reports"]}
    assert len(gone["reports"]) == len(after["reports"]) - 1
    assert report_gets(store.proxy, store.bucket) == []
    source = open_source(url_of(store))
    assert isinstance(source, BucketSource) and deleted not in source.mirror.mirrored_keys()

    # relidash only read: GETs and HEADs, and no ETag moved
    assert {method for method, _, _ in store.proxy.seen()} <= {"GET", "HEAD"}
    assert store.etags() == written


def test_1500_objects_page_through_a_load(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    many = {
        f"many/{i:05d}.json": json.dumps(
            {
                "suite": "many",
                "model": f"m-{i:05d}",
                "cases": [
                    {"input": f"q{j}", "passed": (i + j) % 3 > 0, "runs": 1} for j in range(3)
                ],
            }
        ).encode()
        for i in range(MANY)
    }
    store.put_many(many)
    store.proxy.reset()
    doc = summary(capsys, url_of(store))
    assert sorted(r["file"] for r in doc["reports"]) == sorted(many)
    assert doc["problems"] == []
    assert store.proxy.listings(store.bucket) >= 2  # ListObjectsV2 answers 1,000 a page
    assert len(report_gets(store.proxy, store.bucket)) == MANY


# ---- a failed listing drops nothing -------------------------------------------------------


def test_an_unreachable_endpoint_exits_2_and_the_next_load_is_warm(
    store: Store, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store.put_many(sample_files())
    first = summary(capsys, url_of(store))
    catalog = Path(catalog_location(open_source(url_of(store)), None))
    rows = catalog_rows(catalog)

    monkeypatch.setenv("AWS_ENDPOINT_URL", closed_port_url())
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    code, out, err = run_cli(["summary", url_of(store), "--json"], capsys)
    assert code == 2 and out == ""
    assert f"cannot list {url_of(store)}" in err and "could not connect" in err
    assert len(err.strip().splitlines()) == 1
    assert catalog_rows(catalog) == rows  # no row dropped because the listing failed

    monkeypatch.setenv("AWS_ENDPOINT_URL", store.proxy.url)
    store.proxy.reset()
    assert summary(capsys, url_of(store)) == first
    assert report_gets(store.proxy, store.bucket) == []  # still warm

    # a download that fails (403 on the one changed object) is exit 2 too, and drops nothing
    changed = "code-agent/2026-03-19_v1.11.0.json"
    store.put(changed, sample_files()[changed] + b"\n")
    store.proxy.deny_paths = {f"/{store.bucket}/{PREFIX}/{changed}"}
    code, _, err = run_cli(["summary", url_of(store)], capsys)
    assert code == 2 and f"cannot download {url_of(store)}/{changed}" in err
    assert catalog_rows(catalog) == rows
    store.proxy.reset()
    summary(capsys, url_of(store))
    assert report_gets(store.proxy, store.bucket) == [changed]


def command_line(command: str, source: str, reviews: Path) -> list[str]:
    """`relidash COMMAND SOURCE` with what else it needs to get as far as the source."""
    extra = {
        "summary": [],
        "gate": ["--suite", "s", "--k", "1", "--min-ci-low", "0"],
        "compare": ["--suite", "s", "--base", "a", "--head", "b"],
        "review": ["--suite", "s", "--out", str(reviews.parent / "packet.html")],
        "signoff": ["--suite", "s", "--decision", "approved", "--by", "me"],
        "reviews": [],
    }[command]
    needs_reviews = command in ("review", "signoff", "reviews")
    return [command, source, *extra, *(["--reviews", str(reviews)] if needs_reviews else [])]


@pytest.mark.parametrize("command", ["summary", "gate", "compare", "review", "signoff", "reviews"])
def test_every_command_takes_a_url_and_a_missing_bucket_or_package_is_one_line(
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    missing = f"s3://{store.bucket}-none/x"
    code, _, err = run_cli(command_line(command, missing, tmp_path / "reviews"), capsys)
    if command != "reviews":  # `reviews` reads no report until a sign-off names one
        assert code == 2 and missing in err and "not found" in err, err
        assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "packet.html").exists()
    monkeypatch.setitem(sys.modules, "gcsfs", None)  # as if not installed
    code, _, err = run_cli(command_line(command, "gs://bucket/reports", tmp_path / "r"), capsys)
    assert code == 2 and "pip install 'relidash[gcs]'" in err, err
    assert len(err.strip().splitlines()) == 1


# ---- replicas that start warm -------------------------------------------------------------


def serve_until_exec(
    url: str, env: dict[str, str], *extra: str
) -> subprocess.CompletedProcess[str]:
    """`relidash serve URL …` stopped where it would become the Streamlit server."""
    return subprocess.run(
        [sys.executable, "-c", STOP_BEFORE_EXEC, "serve", url, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )


def replica_env(store: Store, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in AWS_CLEARED}
    env.update(aws_variables(store.proxy.url, home))
    return env


def test_a_seeded_replica_starts_warm(
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store.put_many(sample_files())
    # CI: build the catalog once and upload it next to the reports
    built = tmp_path / "ci" / "relidash.duckdb"
    expected = summary(capsys, url_of(store), "--catalog", str(built))
    assert not Path(str(built) + ".wal").exists()  # the file alone holds it
    store.put("relidash.duckdb", built.read_bytes())

    # a replica with an empty cache
    home = tmp_path / "replica"
    store.proxy.reset()
    done = serve_until_exec(
        url_of(store),
        replica_env(store, home),
        "--seed-catalog",
        f"{url_of(store)}/relidash.duckdb",
    )
    assert done.returncode == 0, done.stderr
    assert "seeded the catalog" in done.stderr
    assert report_gets(store.proxy, store.bucket) == []
    [seeded] = list((home / "cache" / "relidash").glob("s3-*.duckdb"))
    assert catalog_rows(seeded) == catalog_rows(built)

    # the server's first session: one listing, no report downloaded
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    source = open_source(url_of(store))
    served = ServedCatalog(source, catalog_location(source, None))
    assert catalog_location(source, None) == str(seeded)
    store.proxy.reset()
    result = served.refresh(lambda con: pytest.fail("a warm start must not load"))
    assert result is not None and result.files == len(sample_files())
    assert report_gets(store.proxy, store.bucket) == []
    assert store.proxy.listings(store.bucket) == 1
    assert summary(capsys, url_of(store)) == expected
    assert report_gets(store.proxy, store.bucket) == []

    # a transcript is read from the object on demand: that one object, once
    overview = (
        served.cursor()
        .execute(
            "SELECT report_id, file FROM reports WHERE cases_with_trials > 0 ORDER BY file LIMIT 1"
        )
        .fetchall()
    )
    report_id, file = overview[0]
    trials = cases.case_trials(served.cursor(), report_id, 1, source)
    assert not trials.empty
    cases.case_trials(served.cursor(), report_id, 1, source)
    assert report_gets(store.proxy, store.bucket) == [file]

    # then incrementally: an object changed since the seed was built is the one fetched
    changed = "support-agent/2026-02-02_v1.6.0.json"
    store.put(changed, sample_files()[changed] + b"\n")
    store.proxy.reset()
    assert served.stale() is True
    served.refresh(lambda con: loading.refresh_catalog(con, source))
    assert report_gets(store.proxy, store.bucket) == [changed]


def test_a_seed_of_another_schema_is_ignored_with_a_notice(
    store: Store,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store.put_many(sample_files())
    built = tmp_path / "ci" / "relidash.duckdb"
    summary(capsys, url_of(store), "--catalog", str(built))
    with duckdb.connect(str(built)) as con:
        con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        con.execute("CHECKPOINT")

    home = tmp_path / "replica"
    done = serve_until_exec(url_of(store), replica_env(store, home), "--seed-catalog", str(built))
    assert done.returncode == 0, done.stderr
    assert f"the seed catalog {built} is ignored" in done.stderr
    assert "schema 1), not relidash" in done.stderr and f"schema {SCHEMA_VERSION})" in done.stderr
    assert not list((home / "cache" / "relidash").glob("*.duckdb"))  # nothing copied

    # then the first load is a cold one, from the bucket
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    store.proxy.reset()
    summary(capsys, url_of(store))
    assert len(report_gets(store.proxy, store.bucket)) == len(sample_files())

    # a seed for another source, or one that is not there, is ignored as well
    store.put("relidash.duckdb", b"not a catalog")
    for seed, words in (
        (f"{url_of(store)}/relidash.duckdb", "not a DuckDB catalog"),
        (f"{url_of(store)}/none.duckdb", "cannot be read"),
    ):
        again = serve_until_exec(
            url_of(store), replica_env(store, tmp_path / "other"), "--seed-catalog", seed
        )
        assert again.returncode == 0 and words in again.stderr, again.stderr


def test_a_failed_listing_keeps_serving_the_last_good_catalog(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put_many(sample_files())
    source = open_source(url_of(store))
    served = ServedCatalog(source, catalog_location(source, None))
    served.refresh(lambda con: loading.refresh_catalog(con, source))
    shown = served.cursor().execute("SELECT count(*) FROM reports").fetchall()

    store.proxy.deny = True  # every request now 403
    assert served.stale() is False
    assert served.notice and f"cannot list {url_of(store)}" in served.notice
    assert served.refresh(lambda con: loading.refresh_catalog(con, source)) is not None
    assert served.cursor().execute("SELECT count(*) FROM reports").fetchall() == shown

    # a server restarted while the bucket is unreachable serves the catalog on disk
    restarted = ServedCatalog(open_source(url_of(store)), served.location)
    restarted.refresh(lambda con: loading.refresh_catalog(con, source))
    assert restarted.notice and "access denied" in restarted.notice
    assert restarted.cursor().execute("SELECT count(*) FROM reports").fetchall() == shown

    store.proxy.deny = False
    assert served.stale() is False and served.notice is None


# ---- the dashboard, served from a bucket, in Chromium -------------------------------------


@pytest.fixture(scope="module")
def bucket_server(
    moto_url: str, proxy: Proxy, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Store]]:
    from chromium import unavailable as browser_unavailable

    if not Path("/usr/bin/chromium").is_file():
        browser_unavailable("Chromium is not installed at /usr/bin/chromium")
    home = tmp_path_factory.mktemp("served")
    store = new_store(moto_url, proxy)
    store.put_many(sample_files())
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = home / "server.log"
    env = replica_env(store, home)
    command = Path(sys.executable).with_name("relidash")
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [
                str(command),
                "serve",
                url_of(store),
                "--port",
                str(port),
                "--reviews",
                str(home / "reviews"),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"relidash serve did not start:\n{log_path.read_text()}")
            time.sleep(0.25)
        yield url, store
    finally:
        stop_group(proc)


@pytest.mark.browser
def test_serve_from_a_bucket_renders_the_releases_page(
    bucket_server: tuple[str, Store],
) -> None:
    from chromium import CHROMIUM, CHROMIUM_ARGS, TABLES, assert_no_exception, heading, settle
    from playwright.sync_api import sync_playwright

    url, store = bucket_server
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            store.proxy.reset()
            page.goto(url + "/releases")
            settle(page)
            assert_no_exception(page)
            assert heading(page) == "Releases"
            page.locator(TABLES).first.wait_for(state="visible")
            sidebar = page.locator('[data-testid="stSidebar"]').inner_text()
            assert f"s3://{store.bucket}/{PREFIX}" in sidebar.replace("\\", "")
            assert len(report_gets(store.proxy, store.bucket)) == len(sample_files())

            # a new session on an unchanged bucket: one listing, no download
            store.proxy.reset()
            second = browser.new_page()
            second.goto(url + "/releases")
            settle(second)
            assert heading(second) == "Releases"
            assert report_gets(store.proxy, store.bucket) == []

            # the bucket unreachable: a warning, and the last good catalog still shown
            store.proxy.deny = True
            third = browser.new_page()
            third.goto(url + "/releases")
            settle(third)
            assert_no_exception(third)
            alert = third.locator('[data-testid="stAlert"]').first
            alert.wait_for(state="visible")
            assert "cannot list" in alert.inner_text()
            third.locator(TABLES).first.wait_for(state="visible")
        finally:
            store.proxy.deny = False
            browser.close()
