"""Reports in Google Cloud Storage: `gs://bucket/prefix` listed, loaded, loaded again
incrementally and failing cleanly, end to end against a real GCS JSON API server.

gcp-storage-emulator runs on 127.0.0.1 behind the counting proxy (tests/support/gcs_server.py);
relidash finds it through the standard STORAGE_EMULATOR_HOST variable and reads it with
gcsfs, anonymously (`--anon`). Every "downloads nothing" is counted on the wire. The tests
upload objects straight at the emulator, past the proxy.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from gcs_server import PREFIX, Bucket, bucket_fixture, gcs_env, gcs_proxy, gcs_url  # noqa: F401
from report_files import is_report, write_tree
from s3_server import closed_port_url

from dashboard.data.sources import SourceError, parse_location
from dashboard.data.sources.objects import datetime_ns, list_objects

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
SMALL = 100_000
LOADED = re.compile(
    r"(\d+) report files: (\d+) parsed, (\d+) unchanged, (\d+) removed, (\d+) problems"
)
# a listing that waits for gcsfs's gRPC bucket-layout probe runs into gcsfs's own timeout;
# a real one is far quicker than this
LISTING_SECONDS = 15.0
# `relidash ARGV` with gcsfs's waits between retries cut to nothing (the retries stay)
NO_BACKOFF = (
    "import asyncio, sys, types\n"
    "import gcsfs.retry\n"
    "async def no_wait(seconds):\n"
    "    await asyncio.sleep(0)\n"
    "gcsfs.retry.asyncio = types.SimpleNamespace(sleep=no_wait)\n"
    "from dashboard.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def small_reports() -> dict[str, bytes]:
    """The multivon-eval fixtures under 100 kB (0.6 → 0.18), every other one in a
    sub-folder so that the listing must recurse."""
    paths = [
        p for p in sorted(FIXTURES.glob("*.json")) if p.stat().st_size < SMALL and is_report(p)
    ]
    assert len(paths) >= 5
    files = {
        (f"archive/{p.name}" if i % 2 else p.name): p.read_bytes() for i, p in enumerate(paths)
    }
    assert len({json.loads(body)["suite"] for body in files.values()}) >= 2, "want two suites"
    return files


def load(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict[str, Any], list[int]]:
    """`relidash summary ARGV --json`: the document and (files, parsed, unchanged, removed,
    problems) from the load's closing line."""
    code, out, err = run_cli(["summary", *argv, "--json"], capsys)
    assert code == 0, err
    counts = LOADED.search(err)
    assert counts is not None, err
    return json.loads(out), [int(n) for n in counts.groups()]


# ---- the listing --------------------------------------------------------------------------


def test_listing_returns_every_report_object_with_size_and_etag(bucket: Bucket) -> None:
    """Every *.json under the prefix, in sub-folders too, with the size, ETag and `updated`
    time the server holds; not a non-report key, nor a key of a neighbouring prefix
    (`reports-old/`, which starts with the same letters). The listing does not stall on
    gcsfs's gRPC probe, which an emulator cannot answer."""
    files = small_reports()
    bucket.put_many(files)
    bucket.put("notes.txt", b"not a report")
    outside = {"reports-old/x.json": b"{}", "other/y.json": b"{}"}
    for name, body in outside.items():  # beside the prefix, not under it
        bucket.put_name(name, body)
    held = bucket.objects()

    started = time.monotonic()
    entries = list_objects(parse_location(bucket.url), anon=True)
    assert time.monotonic() - started < LISTING_SECONDS

    assert [e.key for e in entries] == sorted(files)
    for entry in entries:
        item = held[f"{PREFIX}/{entry.key}"]
        assert entry.size == len(files[entry.key]) == int(item["size"])
        assert entry.etag and entry.etag == item["etag"]
        assert entry.last_modified_ns == datetime_ns(item["updated"]) > 0
    assert bucket.listings() == 1  # one page: fewer than 1,000 objects
    assert {method for method, _, _ in bucket.proxy.seen()} == {"GET"}


def test_a_missing_bucket_is_not_an_empty_listing(bucket: Bucket) -> None:
    """A bucket that does not exist raises SourceError naming the URL ("not found"); only
    an existing prefix without reports lists as []."""
    assert list_objects(parse_location(bucket.url), anon=True) == []
    missing = f"gs://{bucket.name}-none/{PREFIX}"
    with pytest.raises(SourceError, match=re.escape(f"cannot list {missing}: not found")):
        list_objects(parse_location(missing), anon=True)


# ---- the numbers --------------------------------------------------------------------------


def test_bucket_numbers_equal_the_directory_numbers(
    bucket: Bucket, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`relidash summary gs://…` gives, report by report, the pass@k and pass^k (values and
    intervals) that `relidash summary DIR` gives for the same files: the whole document is
    equal, and it holds every report."""
    files = small_reports()
    bucket.put_many(files)
    listed = bucket.objects()
    stamps = {key: datetime_ns(listed[f"{PREFIX}/{key}"]["updated"]) for key in files}
    local = write_tree(tmp_path / "local", files, stamps)

    from_dir, _ = load(capsys, str(local), "--catalog", str(tmp_path / "dir.duckdb"))
    from_bucket, counts = load(
        capsys, bucket.url, "--anon", "--catalog", str(tmp_path / "bucket.duckdb")
    )

    assert counts[:2] == [len(files), len(files)] and counts[4] == 0
    assert {r["file"] for r in from_bucket["reports"]} == set(files)
    assert {r["harness"] for r in from_bucket["reports"]} == {"multivon-eval"}
    by_file = {r["file"]: r for r in from_dir["reports"]}
    for report in from_bucket["reports"]:
        expected = by_file[report["file"]]
        assert report["pass_at_k"] == expected["pass_at_k"]
        assert report["pass_hat_k"] == expected["pass_hat_k"]
        assert report["pass_at_k"]["1"]["value"] is not None  # numbers, not all UNKNOWN
    assert from_bucket == from_dir


# ---- incremental by ETag ------------------------------------------------------------------


def test_a_second_load_parses_nothing_and_a_change_is_the_only_fetch(
    bucket: Bucket, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first load downloads each object once; the second lists once, downloads nothing
    and parses nothing; after one object is overwritten with other bytes of the same size,
    exactly that one is downloaded and parsed, and its new content shows. Every request
    relidash made was a GET."""
    files = small_reports()
    bucket.put_many(files)
    catalog = ["--anon", "--catalog", str(tmp_path / "bucket.duckdb")]

    bucket.proxy.reset()
    first, counts = load(capsys, bucket.url, *catalog)
    assert counts[:3] == [len(files), len(files), 0]
    assert bucket.object_gets() == sorted(files)

    bucket.proxy.reset()
    again, counts = load(capsys, bucket.url, *catalog)
    assert again == first
    assert counts[:3] == [len(files), 0, len(files)]
    assert bucket.object_gets() == []
    assert bucket.listings() == 1

    changed = sorted(files)[-1]
    suite = json.loads(files[changed])["suite"]
    body = files[changed].replace(f'"{suite}"'.encode(), f'"{suite[:-1]}X"'.encode(), 1)
    assert len(body) == len(files[changed]) and body != files[changed]
    bucket.put(changed, body)
    bucket.proxy.reset()
    after, counts = load(capsys, bucket.url, *catalog)
    assert counts[:3] == [len(files), 1, len(files) - 1]
    assert bucket.object_gets() == [changed]
    assert {r["suite"] for r in after["reports"] if r["file"] == changed} == {f"{suite[:-1]}X"}
    assert {method for method, _, _ in bucket.proxy.seen()} == {"GET"}


# ---- failures -----------------------------------------------------------------------------


def test_a_closed_port_exits_2_naming_the_url_and_keeps_the_catalog(
    bucket: Bucket,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With STORAGE_EMULATOR_HOST on a closed port, `relidash summary gs://…` (a process of
    its own: its real stderr, without pytest's log handlers) exits 2 with one line naming
    the gs:// URL and "could not connect", no traceback from gcsfs's logger, and prints no
    document; the catalog keeps every report, so the next load parses nothing.

    gcsfs retries a refused connection six times, waiting 1 + 2 + 4 + 8 + 16 s between
    attempts (35 s in all); the process keeps the attempts and drops the waits."""
    files = small_reports()
    bucket.put_many(files)
    catalog = ["--anon", "--catalog", str(tmp_path / "bucket.duckdb")]
    first, _ = load(capsys, bucket.url, *catalog)

    env = {**os.environ, "STORAGE_EMULATOR_HOST": closed_port_url()}
    done = subprocess.run(
        [sys.executable, "-c", NO_BACKOFF, "summary", bucket.url, "--json", *catalog],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == "", done.stderr
    assert f"cannot list {bucket.url}: could not connect" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr

    bucket.proxy.reset()
    again, counts = load(capsys, bucket.url, *catalog)
    assert again == first and counts[1] == 0
    assert bucket.object_gets() == []


def test_without_anon_and_without_credentials_exits_2_not_anonymous(
    bucket: Bucket, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without `--anon`, relidash asks google.auth's chain for credentials and, finding
    none, exits 2 with one line saying so; it does not fall back to reading anonymously
    (the server would have answered), and it sends the server no request."""
    bucket.put_many(small_reports())
    bucket.proxy.reset()
    code, out, err = run_cli(
        ["summary", bucket.url, "--json", "--catalog", str(tmp_path / "c.duckdb")], capsys
    )
    assert code == 2 and out == ""
    assert f"cannot open {bucket.url}: no credentials" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert bucket.proxy.seen() == []
