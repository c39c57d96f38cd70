"""A report rewritten while a load reads it: the catalog never keeps a digest of one
version of the file beside numbers parsed from another, and a review never binds a
file's SHA-256 to numbers parsed from other bytes.

A load digests each file (scan.file_facts), then parses it; a file of 256 KiB or more is
read a second time by DuckDB for the parse. The race is made deterministic by wrapping
batches._facts, the digest's one call per file: the writer rewrites the report there,
before or after the digest is taken. Every rewrite keeps the file's size and sets its
mtime back (as `cp -p` of a same-size file does), so size and mtime alone cannot tell the
versions apart, and the file's mtime is an hour old, so it is not "racy" either.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest
from report_files import case, write_report

from dashboard.analysis.review import EvidenceChanged, evidence_sha256
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.load import batches
from dashboard.data.load.facts import FileFacts
from dashboard.data.load.ingest import ingest_directory
from dashboard.data.sources.digests import file_digests
from dashboard.data.sources.reports import as_source

# "refund" passes 2 of 5, then 3 of 5: one byte changes, the size does not
OLD, NEW = b'"run_pass_rate": 0.4', b'"run_pass_rate": 0.6'
HOUR_AGO = time.time_ns() - 3600 * 10**9
PADDING = 300 * 1024  # over batches.FRAMED_BELOW: the parse reads the file again


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    path = write_report(
        root, "support-agent", "v1.0.0", [case("refund", 2, 5), case("greeting", 5, 5)]
    )
    with path.open("ab") as handle:
        handle.write(b" " * PADDING)  # JSON allows trailing whitespace
    assert path.stat().st_size > batches.FRAMED_BELOW
    os.utime(path, ns=(HOUR_AGO, HOUR_AGO))
    return root


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_catalog(str(tmp_path / "catalog" / "relidash.duckdb"))
    yield connection
    connection.close()


def report_file(reports: Path) -> Path:
    return reports / "support-agent" / "v1.0.0.json"


def rewrite(path: Path, old: bytes, new: bytes) -> None:
    """Replace `old` by `new` in place, keeping the size and setting the mtime back."""
    before = path.stat()
    path.write_bytes(path.read_bytes().replace(old, new))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def pass_counts(con: duckdb.DuckDBPyConnection) -> list[int]:
    rows = con.execute("SELECT pass_count FROM cases ORDER BY report_id, case_idx").fetchall()
    return [count for (count,) in rows]


def fresh_pass_counts(reports: Path) -> list[int]:
    """The numbers a new catalog reads from the file as it is now."""
    fresh = open_catalog(MEMORY)
    try:
        ingest_directory(fresh, reports)
        return pass_counts(fresh)
    finally:
        fresh.close()


def assert_never_binds_other_bytes(con: duckdb.DuckDBPyConnection, reports: Path) -> None:
    """What a review does with the catalog: bind the file's SHA-256 to the catalog's
    numbers, or refuse (EvidenceChanged). Bound, the numbers are the file's own."""
    ((path, digest),) = con.execute("SELECT path, digest FROM files").fetchall()
    try:
        sha256 = evidence_sha256(as_source(reports), path, digest)
    except EvidenceChanged:
        return
    assert sha256 == file_digests(report_file(reports))[1]
    assert pass_counts(con) == fresh_pass_counts(reports), (
        "the review bound the file's SHA-256 to numbers parsed from other bytes"
    )


def racing(
    monkeypatch: pytest.MonkeyPatch,
    target: Path,
    before: Callable[[], None],
    after: Callable[[], None],
) -> list[int]:
    """Wrap the digest of `target`, once: `before` runs just before it is read, `after`
    just after (then the parse reads the file). Returns a list that counts the races."""
    real = batches._facts
    raced: list[int] = []

    def facts(abspath: str, constants: bool) -> FileFacts:
        if abspath != str(target) or raced:
            return real(abspath, constants)
        raced.append(1)
        before()
        try:
            return real(abspath, constants)
        finally:
            after()

    monkeypatch.setattr(batches, "_facts", facts)
    return raced


def nothing() -> None:
    return None


@pytest.mark.parametrize("order", ["rewritten after the digest", "digest of other bytes"])
def test_a_rewrite_racing_a_load_is_parsed_again_and_never_certified(
    reports: Path, con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    path = report_file(reports)
    if order == "rewritten after the digest":
        # digested as OLD, parsed as NEW
        raced = racing(monkeypatch, path, nothing, lambda: rewrite(path, OLD, NEW))
        parsed, other = NEW, OLD
    else:
        # a writer that puts NEW in and OLD back: digested as NEW, parsed as OLD
        raced = racing(
            monkeypatch, path, lambda: rewrite(path, OLD, NEW), lambda: rewrite(path, NEW, OLD)
        )
        parsed, other = OLD, NEW
    first = ingest_directory(con, reports)
    monkeypatch.undo()
    assert raced == [1] and first.parsed == 1
    assert_never_binds_other_bytes(con, reports)

    # The next load parses the file again: it alone can say which bytes it read.
    second = ingest_directory(con, reports)
    assert second.parsed == 1, "the catalog kept a digest of bytes it did not parse"
    assert pass_counts(con) == fresh_pass_counts(reports)
    ((digest,),) = con.execute("SELECT digest FROM files").fetchall()
    assert digest == file_digests(path)[0]
    assert_never_binds_other_bytes(con, reports)

    # The other version copied back in, size and mtime kept: nothing is bound to it
    # that was parsed from these bytes.
    rewrite(path, parsed, other)
    ingest_directory(con, reports)
    assert_never_binds_other_bytes(con, reports)


def test_a_file_written_just_before_the_load_is_checked_by_its_bytes_and_kept(
    reports: Path, con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file changed within RACY_SECONDS of its digest (the fixture's was written just
    now: its ctime is recent) may change again unseen by its stat: it is digested once
    more after its parse, and, unchanged, its digest is kept and trusted by the next load."""
    reads: list[str] = []
    check_globals = batches.unchanged_since_digest.__globals__
    real = check_globals["file_digests"]

    def counting(path: str | Path) -> tuple[str, str]:
        reads.append(str(path))
        return real(path)

    monkeypatch.setitem(check_globals, "file_digests", counting)
    assert ingest_directory(con, reports).parsed == 1
    assert reads == [str(report_file(reports))]
    ((digest,),) = con.execute("SELECT digest FROM files").fetchall()
    assert digest == file_digests(report_file(reports))[0]
    assert ingest_directory(con, reports).parsed == 0


def test_a_file_written_between_the_listing_and_its_digest_is_judged_by_its_bytes(
    reports: Path, con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Listed empty (its writer had only created it), whole when digested: the load
    judges the bytes it digested, not the listed size, so no "is empty" problem is kept
    beside the digest of a whole report (which the next load would find unchanged)."""
    path = report_file(reports)
    whole = path.read_bytes()
    path.write_bytes(b"")
    raced = racing(monkeypatch, path, lambda: path.write_bytes(whole), nothing)
    first = ingest_directory(con, reports)
    monkeypatch.undo()
    assert raced == [1] and first.parsed == 1
    assert con.execute("SELECT file, reason FROM problems").fetchall() == []
    assert pass_counts(con) == fresh_pass_counts(reports) == [2, 5]
    assert_never_binds_other_bytes(con, reports)
