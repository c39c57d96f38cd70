"""A report modified within 2 s of a load may still be being written: the next load reads it.

A load stamps each file it sees: "racy" when the file's mtime is less than RACY_SECONDS
older than the load's own clock (one `time.time_ns()` per walk, in scan_directory). A
racy file is digested again at the next load even when its size and mtime are unchanged,
because a writer can change its bytes again within the same mtime (git's "racy clean"
rule); an older file is trusted on size and mtime alone and not read at all. The
directory check a server runs before it renders (`directory_changed`) distrusts a racy
file the same way.

Each load's clock is pinned, so every age is exact and nothing sleeps: the file's mtime
is set with os.utime to so many seconds before the load, 1.5 s (inside the README's 2 s)
or 2.5 s (outside). The rewrites keep the file's size (one digit becomes another) and its
mtime, so size and mtime alone cannot tell the new bytes from the old.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest
from report_files import case, write_report

from dashboard.data.catalog import open_catalog
from dashboard.data.load.ingest import directory_changed, ingest_directory
from dashboard.data.sources import walk

REPO = Path(__file__).resolve().parents[2]
SECOND = 10**9
LOAD_NS = 1_700_000_000 * SECOND  # the first load's clock (2023-11-14), long before now
NEXT_LOAD_NS = LOAD_NS + 60 * SECOND  # the next load, a minute later
INSIDE = 1.5  # seconds between the last write and the load: may be mid-write
OUTSIDE = 2.5  # settled
# Two cases of 5 runs: "refund" passes 2 (run_pass_rate 0.4), "greeting" all 5. The
# rewrite makes it 3 of 5: one byte of the file changes, its size does not.
BEFORE, AFTER = b'"run_pass_rate": 0.4', b'"run_pass_rate": 0.6'
PASSES_BEFORE, PASSES_AFTER = [2, 5], [3, 5]


class PinnedClock:
    """Stands in for the `time` module of dashboard.data.sources.walk: a load's "now" is `now_ns`."""

    def __init__(self, now_ns: int) -> None:
        self.now_ns = now_ns

    def time_ns(self) -> int:
        return self.now_ns


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> PinnedClock:
    pinned = PinnedClock(LOAD_NS)
    # raising=True (the default): if the walk stops reading the clock through `time`, this
    # fails loudly instead of leaving the real clock in charge of every age below.
    monkeypatch.setattr(walk, "time", pinned)
    return pinned


@pytest.fixture
def catalog_path(tmp_path: Path) -> Path:
    return tmp_path / "catalog" / "relidash.duckdb"  # outside the reports directory


@pytest.fixture
def con(catalog_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_catalog(str(catalog_path))
    yield connection
    connection.close()


def written(tmp_path: Path, seconds_before_load: float) -> tuple[Path, Path]:
    """(reports directory, the one report), last modified that long before the first load."""
    reports = tmp_path / "reports"
    path = write_report(
        reports,
        "support-agent",
        "v1.0.0",
        [case("refund", passes=2, runs=5), case("greeting", passes=5, runs=5)],
    )
    assert path.read_bytes().count(BEFORE) == 1
    mtime = LOAD_NS - int(seconds_before_load * SECOND)
    os.utime(path, ns=(mtime, mtime))
    return reports, path


def rewrite_keeping_size_and_mtime(path: Path) -> None:
    before = path.stat()
    path.write_bytes(path.read_bytes().replace(BEFORE, AFTER))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def pass_counts(con: duckdb.DuckDBPyConnection) -> list[int]:
    """The catalog's pass count of each case of the one report, in file order."""
    rows = con.execute("SELECT pass_count FROM cases ORDER BY report_id, case_idx").fetchall()
    return [count for (count,) in rows]


def summary_record(reports: Path, catalog_path: Path) -> dict[str, Any]:
    """What `relidash summary --json` prints for the one report, on the catalog the test built.

    The CLI's own load runs on the real clock, for which every mtime here is years old.
    """
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli", "summary", str(reports), "--json"]
        + ["--catalog", str(catalog_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    (record,) = json.loads(done.stdout)["reports"]
    return record


def test_a_same_size_rewrite_inside_the_window_is_read_at_the_next_load(
    tmp_path: Path, clock: PinnedClock, con: duckdb.DuckDBPyConnection, catalog_path: Path
) -> None:
    reports, path = written(tmp_path, INSIDE)
    first = ingest_directory(con, reports)
    assert (first.parsed, first.unchanged) == (1, 0)
    assert pass_counts(con) == PASSES_BEFORE

    rewrite_keeping_size_and_mtime(path)  # the writer was not done
    clock.now_ns = NEXT_LOAD_NS
    second = ingest_directory(con, reports)
    assert (second.parsed, second.unchanged) == (1, 0), "the racy file was trusted"
    assert pass_counts(con) == PASSES_AFTER

    # Seen settled by that load, it is trusted from now on.
    third = ingest_directory(con, reports)
    assert (third.parsed, third.unchanged) == (0, 1)
    con.close()
    record = summary_record(reports, catalog_path)
    assert record["pass_at_k"]["1"]["value"] == pytest.approx((3 / 5 + 5 / 5) / 2)


def test_a_same_size_rewrite_outside_the_window_is_trusted_unread(
    tmp_path: Path, clock: PinnedClock, con: duckdb.DuckDBPyConnection, catalog_path: Path
) -> None:
    """The other side of the rule, pinned so the window cannot silently grow: a file last
    written 2.5 s before a load is taken as settled, and a later rewrite that keeps its size
    and mtime (which no ordinary writer does) is not seen."""
    reports, path = written(tmp_path, OUTSIDE)
    first = ingest_directory(con, reports)
    assert (first.parsed, first.unchanged) == (1, 0)

    rewrite_keeping_size_and_mtime(path)
    clock.now_ns = NEXT_LOAD_NS
    second = ingest_directory(con, reports)
    assert (second.parsed, second.unchanged) == (0, 1), "a settled file was read again"
    assert pass_counts(con) == PASSES_BEFORE
    con.close()
    record = summary_record(reports, catalog_path)
    assert record["pass_at_k"]["1"]["value"] == pytest.approx((2 / 5 + 5 / 5) / 2)


@pytest.mark.parametrize(("seconds_before_load", "changed"), [(INSIDE, True), (OUTSIDE, False)])
def test_the_directory_check_distrusts_a_file_inside_the_window(
    tmp_path: Path,
    clock: PinnedClock,
    con: duckdb.DuckDBPyConnection,
    seconds_before_load: float,
    changed: bool,
) -> None:
    """Nothing on disk changes after the load: a racy file still makes the directory
    "changed" (a server then reloads instead of serving what it has), a settled one does not."""
    reports, _ = written(tmp_path, seconds_before_load)
    ingest_directory(con, reports)
    clock.now_ns = NEXT_LOAD_NS
    assert directory_changed(con, reports) is changed

    # A load that sees the file settled ends the doubt either way.
    ingest_directory(con, reports)
    assert directory_changed(con, reports) is False
