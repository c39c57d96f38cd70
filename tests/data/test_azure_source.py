"""`az://container/prefix` end to end against a real Azure Blob API: Azurite on 127.0.0.1.

relidash is pointed at the emulator only by the standard AZURE_STORAGE_CONNECTION_STRING
(adlfs reads it), whose blob endpoint is the counting proxy in front of Azurite
(tests/support/azure_server.py): downloads and listings are counted on the wire, not taken from
relidash's own statistics. The tests upload and overwrite blobs straight at Azurite.

Without Azurite, Node.js or adlfs these tests skip on a workstation and fail under
`make test` and CI (tests/support/required_tools.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import pytest
from azure_server import (
    ACCOUNT_KEY,
    AZURE_CLEARED,
    PREFIX,
    Container,
    azure_env,
    azure_proxy,
    azure_variables,
    azurite_url,
    closed_port_url,
    connection_string,
    container,
    fail_fast,
)
from cli_run import run_cli
from report_files import is_report, write_tree

from dashboard.data.sources import SourceError, parse_location
from dashboard.data.sources.objects import datetime_ns, list_objects
from dashboard.data.sources.reports import catalog_location, open_source

# pytest finds these fixtures by name in this module (tests/conftest.py names only S3's)
_AZURE_FIXTURES = (azure_env, azure_proxy, azurite_url, container)
ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "fixtures"
SMALL = 100_000
NESTED = "nested/deeper/copy.json"  # a report two "folders" down: the listing recurses
SUMMARY_LINE = re.compile(
    r"^relidash: (\d+) report files: (\d+) parsed, (\d+) unchanged, (\d+) removed, "
    r"(\d+) problems \(",
    re.MULTILINE,
)


def small_reports() -> dict[str, bytes]:
    """The multivon-eval fixture reports under 100 kB (several suites and format versions),
    keyed by file name, and a copy of the first under NESTED."""
    paths = [p for p in sorted(REPORTS.glob("*.json")) if is_report(p) and p.stat().st_size < SMALL]
    files = {p.name: p.read_bytes() for p in paths}
    assert len(files) >= 5
    assert len({json.loads(body)["suite"] for body in files.values()}) >= 2
    files[NESTED] = files[paths[0].name]
    return files


def parse_counts(err: str) -> tuple[int, int, int]:
    """(report files, parsed, unchanged) from a load's summary line on stderr."""
    match = SUMMARY_LINE.search(err)
    assert match is not None, err
    return int(match[1]), int(match[2]), int(match[3])


def summary(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict[str, Any], str]:
    code, out, err = run_cli(["summary", *argv, "--json"], capsys)
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc, err


def catalog_rows(path: Path) -> dict[str, int]:
    with duckdb.connect(str(path), read_only=True) as con:
        return {
            table: int(con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
            for table in ("files", "reports", "cases", "problems")
        }


# ---- the listing -------------------------------------------------------------------------


def test_the_listing_names_every_report_blob_with_its_size_etag_and_time(
    container: Container,
) -> None:
    files = small_reports()
    container.put_many(files)
    container.put("notes.txt", b"not a report")  # under the prefix, not a report key
    container.client.upload_blob("other/x.json", b"{}")  # outside the prefix
    container.client.upload_blob(f"{PREFIX}-old/y.json", b"{}")  # a prefix of the prefix
    stored = container.blobs()
    container.proxy.reset()

    entries = list_objects(parse_location(container.url))

    assert [e.key for e in entries] == sorted(files)
    for entry in entries:
        blob = stored[f"{PREFIX}/{entry.key}"]
        assert entry.size == len(files[entry.key]) == blob.size
        assert entry.etag and entry.etag == str(blob.etag).strip('"')
        assert entry.last_modified_ns == datetime_ns(blob.last_modified)
    assert len({e.etag for e in entries}) == len(entries)  # one per blob, not a constant
    # it went through the connection string's endpoint (the proxy), read only, no downloads
    assert container.listings() >= 1
    assert container.blob_gets() == []
    assert {method for method, _, _ in container.proxy.seen()} <= {"GET", "HEAD"}
    # an existing prefix without reports is an empty list
    assert list_objects(parse_location(f"az://{container.name}/nothing-here")) == []


def test_a_wrong_account_key_is_an_error_naming_the_url_not_an_empty_list(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    container.put("a.json", b"{}")
    wrong = connection_string(container.proxy.url).replace(ACCOUNT_KEY, "d3Jvbmc=" * 11)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", wrong)
    with pytest.raises(SourceError) as caught:
        list_objects(container.location)
    message = str(caught.value)
    assert message.startswith(f"cannot list {container.url}: ") and "\n" not in message
    assert "authenticate" in message


def test_a_missing_container_is_an_error_not_an_empty_list(container: Container) -> None:
    missing = parse_location(f"az://{container.name}-missing/{PREFIX}")
    with pytest.raises(SourceError) as caught:
        list_objects(missing)
    assert str(caught.value).startswith(f"cannot list {missing.url}: not found")


# ---- the numbers -------------------------------------------------------------------------


def test_summary_of_the_container_equals_the_summary_of_the_same_files_in_a_directory(
    container: Container, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = small_reports()
    container.put_many(files)
    stored = container.blobs()
    stamps = {key: datetime_ns(stored[f"{PREFIX}/{key}"].last_modified) for key in files}
    local = write_tree(tmp_path / "local", files, stamps)
    from_dir, _ = summary(capsys, str(local), "--catalog", str(tmp_path / "dir.duckdb"))

    # the real command in a fresh process: only the environment points it at Azurite
    env = {k: v for k, v in os.environ.items() if k not in AZURE_CLEARED}
    env.update(azure_variables(container.proxy.url, tmp_path / "process"))
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli", "summary", container.url, "--json"]
        + ["--catalog", str(tmp_path / "az.duckdb")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    from_container = json.loads(done.stdout)

    assert len(from_dir["reports"]) == len(files) and from_dir["problems"] == []
    numbers = {
        r["file"]: (r["cases"], r["runs"], r["pass_at_k"], r["pass_hat_k"])
        for r in from_dir["reports"]
    }
    assert set(numbers) == set(files)
    assert {
        r["file"]: (r["cases"], r["runs"], r["pass_at_k"], r["pass_hat_k"])
        for r in from_container["reports"]
    } == numbers
    assert from_container == from_dir  # and nothing else depends on where they were read
    assert container.blob_gets() == sorted(files)  # each blob downloaded once


# ---- incremental by ETag -----------------------------------------------------------------


def test_a_second_load_parses_nothing_and_an_overwritten_blob_is_the_one_parse(
    container: Container, capsys: pytest.CaptureFixture[str]
) -> None:
    files = small_reports()
    container.put_many(files)
    written = container.etags()
    container.proxy.reset()
    first, err = summary(capsys, container.url)
    assert parse_counts(err) == (len(files), len(files), 0)
    assert container.blob_gets() == sorted(files)

    container.proxy.reset()
    again, err = summary(capsys, container.url)
    assert again == first
    assert parse_counts(err) == (len(files), 0, len(files))
    assert container.blob_gets() == [] and container.listings() >= 1

    # the same size, other bytes (another suite name): size alone would miss it, and so
    # would LastModified within the same second; the ETag tells
    changed = sorted(k for k in files if k != NESTED)[-1]
    suite = json.loads(files[changed])["suite"]
    body = files[changed].replace(f'"{suite}"'.encode(), f'"{suite[:-1]}Z"'.encode(), 1)
    assert len(body) == len(files[changed]) and body != files[changed]
    container.put(changed, body)
    new_etag = container.etags()[f"{PREFIX}/{changed}"]
    assert new_etag != written[f"{PREFIX}/{changed}"]
    # as if the overwrite had landed in the same second: the catalog's record gets the new
    # LastModified, so only the ETag differs
    stamp = datetime_ns(container.blobs()[f"{PREFIX}/{changed}"].last_modified)
    catalog = catalog_location(open_source(container.url), None)
    with duckdb.connect(catalog) as con:
        con.execute("UPDATE files SET mtime_ns = $m WHERE path = $p", {"m": stamp, "p": changed})
    container.proxy.reset()
    after, err = summary(capsys, container.url)
    assert parse_counts(err) == (len(files), 1, len(files) - 1)
    assert container.blob_gets() == [changed]
    assert {r["suite"] for r in after["reports"] if r["file"] == changed} == {f"{suite[:-1]}Z"}

    # relidash only read: GETs and HEADs, and no other blob's ETag moved
    assert {method for method, _, _ in container.proxy.seen()} <= {"GET", "HEAD"}
    assert container.etags() == {**written, f"{PREFIX}/{changed}": new_etag}


# ---- a failed listing --------------------------------------------------------------------


def test_a_closed_port_exits_2_naming_the_url_and_the_next_load_is_warm(
    container: Container, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    files = small_reports()
    container.put_many(files)
    first, _ = summary(capsys, container.url)
    catalog = Path(catalog_location(open_source(container.url), None))
    rows = catalog_rows(catalog)

    fail_fast(monkeypatch)
    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", connection_string(closed_port_url()))
    code, out, err = run_cli(["summary", container.url, "--json"], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"relidash: cannot list {container.url}: could not connect"), err
    assert len(err.strip().splitlines()) == 1
    assert catalog_rows(catalog) == rows  # nothing dropped because the listing failed

    monkeypatch.setenv("AZURE_STORAGE_CONNECTION_STRING", connection_string(container.proxy.url))
    container.proxy.reset()
    again, err = summary(capsys, container.url)
    assert again == first
    assert parse_counts(err) == (len(files), 0, len(files))
    assert container.blob_gets() == []  # still warm
