"""The object-storage source against a real S3 HTTP API: moto's server on 127.0.0.1.

relidash talks to the server through a counting proxy (also on 127.0.0.1, tests/support/s3_server.py)
that records every request before answering it, so "a second sync downloads nothing" and
"relidash only reads" are counted on the wire, not taken from relidash's own statistics.
The test itself uploads, changes and deletes objects straight at moto, past the proxy.

Without moto's server, s3fs or boto3 these tests skip on a workstation and fail under
CI, where a missing package must not pass silently.
"""

from __future__ import annotations

import hashlib
import sys
from datetime import datetime
from pathlib import Path

import pytest
from s3_server import PREFIX, Store, closed_port_url, sample_files

from dashboard.data import sources
from dashboard.data.sources import SourceError, parse_location, s3_endpoint
from dashboard.data.sources.mirror import (
    MANIFEST,
    Mirror,
    default_mirror_root,
    key_problem,
    local_name,
)
from dashboard.data.sources.objects import ObjectEntry, datetime_ns, list_objects

ODD_KEYS = [
    "[x].json",
    "a?b.json",
    "star*.json",
    "space name.json",
    "ünï/κλειδί.json",
    "x%20y.json",
    "plus+sign.json",
]
REFUSED_KEYS = ["a/../b.json", "./c.json", "d//e.json", "v?versionId=1.json"]


def mirror_for(store: Store, tmp_path: Path) -> Mirror:
    return Mirror(tmp_path / "mirror", store.location)


# ---- locations (no server) ---------------------------------------------------------------


def test_local_paths_stay_local_and_urls_are_remote() -> None:
    local = parse_location("sample_reports")
    assert not local.is_remote and local.path == Path("sample_reports")
    assert parse_location("/tmp/a b/[x]").path == Path("/tmp/a b/[x]")
    s3 = parse_location("s3://bucket/a/b/")
    assert (s3.kind, s3.bucket, s3.prefix, s3.url, s3.root) == (
        "s3",
        "bucket",
        "a/b",
        "s3://bucket/a/b",
        "bucket/a/b",
    )
    assert s3.object_path("c/d.json") == "bucket/a/b/c/d.json"
    assert parse_location("s3://bucket").prefix == ""


@pytest.mark.parametrize(
    ("url", "module", "extra"),
    [
        ("s3://bkt/p", "s3fs", "s3"),
        ("gs://bkt/p", "gcsfs", "gcs"),
        ("gcs://bkt/p", "gcsfs", "gcs"),
        ("az://container/p", "adlfs", "azure"),
        ("abfs://container@acct.dfs.core.windows.net/p", "adlfs", "azure"),
    ],
)
def test_a_missing_package_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, url: str, module: str, extra: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # find_spec answers None: not installed
    with pytest.raises(SourceError) as caught:
        parse_location(url)
    message = str(caught.value)
    assert f"pip install 'relidash[{extra}]'" in message
    assert message.startswith(url) and module in message and "\n" not in message


def test_azure_account_and_bad_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "require_package", lambda location: None)  # as if installed
    az = parse_location("abfs://reports@myacct.dfs.core.windows.net/ci/")
    assert (az.kind, az.bucket, az.account, az.prefix) == ("az", "reports", "myacct", "ci")
    assert az.url == "abfs://reports@myacct.dfs.core.windows.net/ci"
    for bad in ("s3://", "s3:///prefix", "ftp://host/x", "file:///tmp/x"):
        with pytest.raises(SourceError):
            parse_location(bad)


def test_endpoint_comes_from_the_standard_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS"):
        monkeypatch.delenv(name, raising=False)
    assert s3_endpoint() == ""
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9000")
    assert s3_endpoint() == "http://127.0.0.1:9000"
    monkeypatch.setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9001")
    assert s3_endpoint() == "http://127.0.0.1:9001"
    monkeypatch.setenv("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true")
    assert s3_endpoint() == ""


@pytest.mark.parametrize(
    "key",
    [
        "a/../b.json",
        "../x.json",
        "./x.json",
        "a/./b.json",
        "/x.json",
        "a//b.json",
        "",
        "a\x00.json",
    ],
)
def test_keys_that_are_no_path_are_refused(key: str) -> None:
    assert key_problem(key) is not None


@pytest.mark.parametrize("key", ODD_KEYS + ["..x.json", "a/.hidden.json", "x" * 600 + ".json"])
def test_odd_keys_map_to_digest_names(key: str) -> None:
    assert key_problem(key) is None
    name = local_name(key)
    digest = hashlib.sha256(key.encode()).hexdigest()
    assert name == f"objects/{digest[:2]}/{digest}.json"
    assert not set(name) & set("[]?*{} \\")


# ---- listing -----------------------------------------------------------------------------


def test_listing_returns_every_report_object(store: Store) -> None:
    files = sample_files()
    odd = {key: f"odd {key}".encode() for key in ODD_KEYS}
    odd["inspect/2026-01-01_task.eval"] = b"PK\x05\x06" + bytes(18)  # an empty zip
    store.put_many({**files, **odd})
    store.put("notes.txt", b"not a report")
    store.put("folder/", b"")  # a "directory" placeholder
    store.client.put_object(Bucket=store.bucket, Key="elsewhere.json", Body=b"{}")  # outside
    store.proxy.reset()

    entries = list_objects(store.location)

    assert store.proxy.listings(store.bucket) == 1
    expected = {**files, **odd}
    assert [e.key for e in entries] == sorted(expected)
    truth = store.objects()
    for entry in entries:
        item = truth[f"{PREFIX}/{entry.key}"]
        assert entry.size == len(expected[entry.key]) == item["Size"]
        assert entry.etag == item["ETag"].strip('"') and entry.etag
        assert entry.last_modified_ns == datetime_ns(item["LastModified"]) > 0


def test_each_listing_is_fresh(store: Store) -> None:
    store.put("one.json", b"{}")
    assert [e.key for e in list_objects(store.location)] == ["one.json"]
    store.put("two.json", b"{}")
    store.delete("one.json")
    assert [e.key for e in list_objects(store.location)] == ["two.json"]
    assert store.proxy.listings(store.bucket) == 2


def test_listing_pages_past_a_thousand_objects(store: Store) -> None:
    store.put_many({f"many/{i:05d}.json": b"{}" for i in range(1500)})
    store.proxy.reset()
    entries = list_objects(store.location)
    assert [e.key for e in entries] == [f"many/{i:05d}.json" for i in range(1500)]
    assert store.proxy.listings(store.bucket) >= 2  # ListObjectsV2 answers 1,000 a page


def test_an_empty_prefix_is_an_empty_list(store: Store) -> None:
    store.client.put_object(Bucket=store.bucket, Key="other/a.json", Body=b"{}")
    assert list_objects(store.location) == []


@pytest.mark.parametrize("failure", ["closed port", "missing bucket", "no credentials", "denied"])
def test_a_failed_listing_raises_naming_the_url(
    store: Store, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    store.put("a.json", b"{}")
    location = store.location
    if failure == "closed port":
        dead = closed_port_url()
        monkeypatch.setenv("AWS_ENDPOINT_URL", dead)
        monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")  # botocore's default retries take ~11 s
        expected = ["could not connect", dead]
    elif failure == "missing bucket":
        location = parse_location(f"s3://{store.bucket}-missing/{PREFIX}")
        expected = ["not found", "bucket does not exist"]
    elif failure == "no credentials":
        monkeypatch.delenv("AWS_ACCESS_KEY_ID")
        monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
        expected = ["no credentials"]
    else:
        store.proxy.deny = True
        expected = ["access denied"]
    with pytest.raises(SourceError) as caught:
        list_objects(location)
    message = str(caught.value)
    assert message.startswith(f"cannot list {location.url}")
    assert "\n" not in message
    for words in expected:
        assert words in message


def test_anonymous_listing_needs_no_credentials(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put("public.json", b"{}")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    store.proxy.reset()
    assert [e.key for e in list_objects(store.location, anon=True)] == ["public.json"]
    assert store.proxy.signed() == [False]  # one request, unsigned


# ---- the mirror --------------------------------------------------------------------------


def keys_of(entries: list[ObjectEntry]) -> list[str]:
    return [e.key for e in entries]


def test_sync_downloads_once_then_only_what_changed(store: Store, tmp_path: Path) -> None:
    files = sample_files()
    store.put_many(files)
    written = store.etags()
    mirror = mirror_for(store, tmp_path)
    store.proxy.reset()

    entries = list_objects(store.location)
    first = mirror.sync(entries, keys_of(entries))
    assert (first.downloaded, first.bytes) == (len(files), sum(map(len, files.values())))
    assert store.proxy.object_gets(store.bucket) == sorted(files)  # each object once
    for entry in entries:
        local = mirror.path_of(entry.key)
        assert local.read_bytes() == files[entry.key]
        assert local.stat().st_mtime_ns == entry.last_modified_ns
        assert local.resolve().is_relative_to((tmp_path / "mirror").resolve())

    store.proxy.reset()
    second = mirror.sync(list_objects(store.location), keys_of(entries))
    assert (second.downloaded, second.bytes) == (0, 0)
    assert store.proxy.object_gets(store.bucket) == []

    # the same size, other bytes: only the ETag tells
    changed = "support-agent/2026-01-05_v1.4.0.json"
    new_bytes = files[changed][::-1]
    store.put(changed, new_bytes)
    written = {**written, **{k: v for k, v in store.etags().items() if k.endswith(changed)}}
    store.proxy.reset()
    entries = list_objects(store.location)
    third = mirror.sync(entries, keys_of(entries))
    assert (third.downloaded, third.bytes) == (1, len(new_bytes))
    assert store.proxy.object_gets(store.bucket) == [changed]
    assert mirror.path_of(changed).read_bytes() == new_bytes

    # a deleted object: gone from the listing, dropped from the mirror
    deleted = "code-agent/2026-01-08_v1.6.0.json"
    store.delete(deleted)
    del written[f"{PREFIX}/{deleted}"]
    entries = list_objects(store.location)
    assert deleted not in keys_of(entries)
    mirror.drop(mirror.mirrored_keys() - set(keys_of(entries)))
    assert not mirror.path_of(deleted).exists() and deleted not in mirror.mirrored_keys()

    # a new process on the same root starts warm from the manifest
    store.proxy.reset()
    again = mirror_for(store, tmp_path)
    assert again.mirrored_keys() == set(keys_of(entries))
    assert again.sync(entries, keys_of(entries)).downloaded == 0
    assert store.proxy.object_gets(store.bucket) == []

    # relidash only read: every request it made was a GET or a HEAD, and no ETag moved
    assert store.etags() == written
    assert {method for method, _, _ in store.proxy.seen()} <= {"GET", "HEAD"}


def test_a_local_copy_that_changed_is_fetched_again(store: Store, tmp_path: Path) -> None:
    store.put_many({"a.json": b'{"a": 1}', "b.json": b'{"b": 2}'})
    mirror = mirror_for(store, tmp_path)
    entries = list_objects(store.location)
    mirror.sync(entries, ["a.json", "b.json"])
    mirror.path_of("a.json").write_bytes(b"tampered")
    mirror.path_of("b.json").unlink()
    store.proxy.reset()
    assert mirror.sync(entries, ["a.json", "b.json"]).downloaded == 2
    assert mirror.path_of("a.json").read_bytes() == b'{"a": 1}'
    assert store.proxy.object_gets(store.bucket) == ["a.json", "b.json"]


def test_odd_keys_are_mirrored_to_safe_files(store: Store, tmp_path: Path) -> None:
    bodies = {key: f"bytes of {key}".encode() for key in ODD_KEYS + REFUSED_KEYS}
    store.put_many(bodies)
    entries = list_objects(store.location)
    assert set(keys_of(entries)) == set(bodies)  # listed as they are
    mirror = mirror_for(store, tmp_path)
    stats = mirror.sync(entries, keys_of(entries))
    assert stats.downloaded == len(ODD_KEYS)
    assert sorted(p.key for p in stats.problems) == sorted(REFUSED_KEYS)
    assert all(p.reason for p in stats.problems)
    root = (tmp_path / "mirror").resolve()
    for key in ODD_KEYS:
        local = mirror.path_of(key)
        assert local.read_bytes() == bodies[key]
        assert local.resolve().is_relative_to(root)
        assert not set(local.name) & set("[]?*{} ")
    with pytest.raises(SourceError):
        mirror.local_path("a/../b.json")
    files = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert files == {MANIFEST, "manifest.lock"} | {local_name(k) for k in ODD_KEYS}


def test_local_path_downloads_on_demand(store: Store, tmp_path: Path) -> None:
    store.put_many({"case.json": b'{"v": 1}', "relidash.toml": b"[releases]\n"})
    mirror = mirror_for(store, tmp_path)
    entries = list_objects(store.location)
    mirror.sync(entries, [])  # the listing is known, nothing fetched yet
    assert store.proxy.object_gets(store.bucket) == []

    store.proxy.reset()
    assert mirror.local_path("case.json").read_bytes() == b'{"v": 1}'
    assert mirror.local_path("case.json").read_bytes() == b'{"v": 1}'
    assert store.proxy.object_gets(store.bucket) == ["case.json"]  # once

    store.put("case.json", b'{"v": 2}')
    mirror.sync(list_objects(store.location), [])  # a newer listing: the copy is stale
    assert mirror.local_path("case.json").read_bytes() == b'{"v": 2}'

    # a key no listing named (not a report file): one HEAD, then the GET
    assert mirror.local_path("relidash.toml").read_bytes() == b"[releases]\n"
    with pytest.raises(FileNotFoundError):
        mirror.local_path("nowhere.json")


def test_a_failed_sync_keeps_what_it_fetched(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put_many({f"r{i}.json": f'{{"i": {i}}}'.encode() for i in range(5)})
    entries = list_objects(store.location)
    first = mirror_for(store, tmp_path).sync(entries, keys_of(entries))
    assert (first.downloaded, first.problems) == (5, ())
    store.put_many({"r0.json": b'{"i": "new 0"}', "r1.json": b'{"i": "new 1"}'})
    fresh = list_objects(store.location)

    store.proxy.deny_paths = {f"/{store.bucket}/{PREFIX}/r1.json"}  # 403 for this one GET
    with pytest.raises(SourceError) as caught:
        mirror_for(store, tmp_path).sync(fresh, keys_of(fresh))
    message = str(caught.value)
    assert message.startswith(f"cannot download {store.location.url}/r1.json")
    assert "access denied" in message

    store.proxy.reset()
    back = mirror_for(store, tmp_path)
    assert back.sync(fresh, keys_of(fresh)).downloaded == 1  # r0 was kept
    assert store.proxy.object_gets(store.bucket) == ["r1.json"]
    assert back.path_of("r1.json").read_bytes() == b'{"i": "new 1"}'

    monkeypatch.setenv("AWS_ENDPOINT_URL", closed_port_url())
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with pytest.raises(SourceError, match="could not connect") as caught:
        Mirror(tmp_path / "elsewhere", store.location).local_path("r2.json")
    assert f"{store.location.url}/r2.json" in str(caught.value)


def test_a_vanished_object_is_a_problem_not_an_error(store: Store, tmp_path: Path) -> None:
    store.put_many({"stays.json": b"{}", "goes.json": b"{}"})
    entries = list_objects(store.location)
    store.delete("goes.json")
    stats = mirror_for(store, tmp_path).sync(entries, keys_of(entries))
    assert stats.downloaded == 1
    assert [p.key for p in stats.problems] == ["goes.json"]


def test_a_broken_manifest_means_a_cold_mirror(store: Store, tmp_path: Path) -> None:
    store.put_many({"a.json": b"{}", "b.json": b"[]"})
    entries = list_objects(store.location)
    mirror_for(store, tmp_path).sync(entries, keys_of(entries))
    (tmp_path / "mirror" / MANIFEST).write_text("{ not json", encoding="utf-8")
    assert mirror_for(store, tmp_path).sync(entries, keys_of(entries)).downloaded == 2
    leftovers = [p.name for p in (tmp_path / "mirror").iterdir() if p.name.startswith(".")]
    assert leftovers == []  # no temporary manifest left behind


def test_default_root_is_in_the_cache_directory(store: Store, tmp_path: Path) -> None:
    root = default_mirror_root(store.location)
    assert root.is_relative_to(tmp_path / "cache" / "relidash")
    other = default_mirror_root(parse_location(f"s3://{store.bucket}/other"))
    assert root != other


def test_listing_times_are_exact_nanoseconds() -> None:
    stamp = datetime.fromisoformat("2026-03-04T05:06:07.123456+00:00")
    assert datetime_ns(stamp) == 1772600767_123456000
    assert datetime_ns("2026-03-04T05:06:07.123456Z") == 1772600767_123456000


def test_a_whole_bucket_lists_from_its_root(store: Store) -> None:
    store.client.put_object(Bucket=store.bucket, Key="top.json", Body=b"{}")
    store.put("a.json", b"{}")
    whole = parse_location(f"s3://{store.bucket}")
    assert [e.key for e in list_objects(whole)] == [f"{PREFIX}/a.json", "top.json"]
