"""A warm load whose listing equals the one the last load ended with compares no file
(dashboard/data/load/freshness.py ListingParts); a difference in one part of the listing (a
top-level directory), or a racy file there last time, brings back the file-by-file
comparison of that part's files only. And a load skips the metrics pass's search for
reports without metrics only while the catalog says none lacks them."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from report_files import is_report

from dashboard.analysis import loading
from dashboard.data.catalog import open_catalog
from dashboard.data.load import freshness, ingest, plan
from dashboard.data.sources.walk import part_of

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OLD_NS = 1_600_000_000 * 10**9


@pytest.fixture
def root(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    reports.mkdir()
    for source in sorted(p for p in FIXTURES.glob("*.json") if is_report(p))[:5]:
        shutil.copyfile(source, reports / source.name)
        os.utime(reports / source.name, ns=(OLD_NS, OLD_NS))
    return reports


@pytest.fixture
def con(tmp_path: Path) -> Any:
    connection = open_catalog(tmp_path / "catalog.duckdb")
    yield connection
    connection.close()


def counting_known_files(monkeypatch: pytest.MonkeyPatch) -> list[set[str] | None]:
    """The parts each comparison made by this thread asked the catalog's records of
    (None: every file). Another test's served catalog may still be renewing its check in
    a thread of its own, through the same function: in a full run such a call would be
    counted here."""
    calls: list[set[str] | None] = []
    real = freshness.known_files
    mine = threading.get_ident()

    def counted(con: Any, parts: set[str] | None = None) -> Any:
        if threading.get_ident() == mine:
            calls.append(parts)
        return real(con, parts)

    monkeypatch.setattr(plan, "known_files", counted)
    monkeypatch.setattr(freshness, "known_files", counted)
    return calls


def test_an_unchanged_listing_compares_no_file(
    root: Path, con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    loading.refresh_catalog(con, root)
    calls = counting_known_files(monkeypatch)
    result = loading.refresh_catalog(con, root)
    assert (result.parsed, result.files) == (0, 5)
    assert calls == []
    assert not freshness.directory_changed(con, root)
    assert calls == []


def test_a_changed_file_is_found_and_parsed(
    root: Path, con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    loading.refresh_catalog(con, root)
    calls = counting_known_files(monkeypatch)
    victim = sorted(root.glob("*.json"))[2]
    data = json.loads(victim.read_text())
    data["cases"] = data["cases"][:-1]
    victim.write_text(json.dumps(data))
    os.utime(victim, ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    assert freshness.directory_changed(con, root)
    result = loading.refresh_catalog(con, root)
    assert result.parsed == 1
    assert calls, "the changed listing was not compared file by file"
    cases = con.execute(
        "SELECT r.cases_total FROM reports r JOIN files f USING (report_id) WHERE f.path = $p",
        {"p": victim.name},
    ).fetchall()
    assert cases == [(len(data["cases"]),)]
    calls.clear()
    assert loading.refresh_catalog(con, root).parsed == 0
    assert calls == [], "the listing after the change was not remembered"


def test_a_removed_and_an_added_file_are_seen(root: Path, con: Any) -> None:
    loading.refresh_catalog(con, root)
    gone = sorted(root.glob("*.json"))[0]
    copy = root / "added.json"
    shutil.copyfile(sorted(root.glob("*.json"))[1], copy)
    os.utime(copy, ns=(OLD_NS, OLD_NS))
    gone.unlink()
    result = loading.refresh_catalog(con, root)
    assert (result.removed, result.parsed, result.files) == (1, 1, 5)


def test_after_a_racy_file_the_next_load_compares_again(
    root: Path, con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = sorted(root.glob("*.json"))[0]
    now = time.time_ns()
    os.utime(fresh, ns=(now, now))  # modified just now: may still be being written
    loading.refresh_catalog(con, root)
    assert con.execute("SELECT * FROM listing_parts").fetchall() == []  # all at the top
    calls = counting_known_files(monkeypatch)
    loading.refresh_catalog(con, root)
    assert calls == [{""}], "a listing with a racy file was trusted"


@pytest.fixture
def suites(root: Path) -> Path:
    """The reports in three directories and one at the top."""
    files = sorted(root.glob("*.json"))
    for i, path in enumerate(files[:4]):
        (root / f"suite{i % 3}").mkdir(exist_ok=True)
        path.rename(root / f"suite{i % 3}" / path.name)
    return root


def test_a_change_in_one_directory_compares_only_its_files(
    suites: Path, con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    loading.refresh_catalog(con, suites)
    assert {p for (p,) in con.execute("SELECT part FROM listing_parts").fetchall()} == {
        "", "suite0", "suite1", "suite2",
    }  # fmt: skip
    calls = counting_known_files(monkeypatch)
    victim = sorted((suites / "suite1").glob("*.json"))[0]
    os.utime(victim, ns=(OLD_NS + 10**9, OLD_NS + 10**9))  # the same bytes, a new mtime
    assert freshness.directory_changed(con, suites)
    assert calls == [{"suite1"}]
    result = loading.refresh_catalog(con, suites)
    assert (result.parsed, result.files) == (0, 5)
    assert calls == [{"suite1"}, {"suite1"}]
    assert not freshness.directory_changed(con, suites)
    # a directory gone: its files are removed, and only its records were read
    shutil.rmtree(suites / "suite2")
    assert freshness.directory_changed(con, suites)
    result = loading.refresh_catalog(con, suites)
    assert (result.removed, result.files) == (1, 4)
    assert calls[-1] == {"suite2"}
    assert con.execute(
        "SELECT count(*) FROM files WHERE starts_with(path, 'suite2/')"
    ).fetchall() == [(0,)]


def test_a_racy_file_keeps_only_its_own_directory_from_being_trusted(
    suites: Path, con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = sorted((suites / "suite0").glob("*.json"))[0]
    now = time.time_ns()
    os.utime(fresh, ns=(now, now))
    loading.refresh_catalog(con, suites)
    assert {p for (p,) in con.execute("SELECT part FROM listing_parts").fetchall()} == {
        "", "suite1", "suite2",
    }  # fmt: skip
    calls = counting_known_files(monkeypatch)
    loading.refresh_catalog(con, suites)
    assert calls == [{"suite0"}]


def test_metrics_missing_after_an_interrupted_load_are_computed(root: Path, con: Any) -> None:
    """ingest without the metrics pass (a process killed between the two) leaves the mark
    cleared: the next load, with nothing to parse, still computes every report's metrics."""
    ingest.ingest_directory(con, root)
    assert con.execute("SELECT count(*) FROM metrics").fetchall() == [(0,)]
    result = loading.refresh_catalog(con, root)
    assert result.parsed == 0
    reports = con.execute("SELECT count(*) FROM reports").fetchall()[0][0]
    with_metrics = con.execute("SELECT count(DISTINCT report_id) FROM metrics").fetchall()[0][0]
    assert reports == with_metrics == 5
    assert con.execute("SELECT value FROM meta WHERE key = 'metrics_complete'").fetchall() == [
        ("1",)
    ]


def test_an_unchanged_listing_writes_nothing(root: Path, con: Any, tmp_path: Path) -> None:
    """Not even values that are already there: a commit syncs the log, and the log grows."""
    loading.refresh_catalog(con, root)
    con.execute("CHECKPOINT")
    wal = tmp_path / "catalog.duckdb.wal"
    before = wal.stat().st_size if wal.exists() else 0
    version = freshness.catalog_version(con)
    result = loading.refresh_catalog(con, root)
    assert (result.parsed, result.unchanged) == (0, 5)
    assert (wal.stat().st_size if wal.exists() else 0) == before
    assert freshness.catalog_version(con) == version
    # a changed mtime (same bytes) is written: the record and the part's digest
    victim = sorted(root.glob("*.json"))[1]
    os.utime(victim, ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    loading.refresh_catalog(con, root)
    assert (wal.stat().st_size if wal.exists() else 0) > before
    assert not freshness.directory_changed(con, root)


@pytest.mark.parametrize("few_parts", [freshness.FEW_PARTS, 0])
def test_known_files_of_parts_are_the_records_whose_part_is_listed(
    con: Any, monkeypatch: pytest.MonkeyPatch, few_parts: int
) -> None:
    """By prefix (a few parts) or by name (many), the records asked for are those whose
    part_of is one of the parts: names with LIKE's wildcards, a prefix of another part's
    name, nested directories and the top level's own files included."""
    monkeypatch.setattr(freshness, "FEW_PARTS", few_parts)
    paths = [
        "a/x.json", "ab/y.json", "a.json", "a_b/z.json", "a%/w.json", "x.json",
        "a/b/c.json", "'q/v.json", "ab/a/u.json",
    ]  # fmt: skip
    con.execute(
        "INSERT INTO files SELECT unnest($p), unnest($s), 0, NULL, NULL, false, ''",
        {"p": paths, "s": list(range(len(paths)))},
    )
    for parts in [{"a"}, {""}, {"a", ""}, {"ab", "a%"}, {"a_b", "'q", "missing"}, set()]:
        expected = {p: (i, 0, False, "") for i, p in enumerate(paths) if part_of(p) in parts}
        assert freshness.known_files(con, parts) == expected, parts
