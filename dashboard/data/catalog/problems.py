"""What a load records about its files: a file's row in `files`, the problems that keep a
file or a case out, and forgetting a file's rows when it changes or goes.

Must not: parse files or run a harness's reader.
"""

from __future__ import annotations

import duckdb

from dashboard.data.catalog.schema import REPORT_TABLES
from dashboard.data.sources.walk import FileEntry


def record_files(
    con: duckdb.DuckDBPyConnection, rows: list[tuple[FileEntry, str, int | None]]
) -> None:
    """Upsert `files` rows in one statement (row-at-a-time inserts cost ms each)."""
    con.execute(
        "INSERT OR REPLACE INTO files SELECT unnest($paths), CAST(unnest($sizes) AS BIGINT), "
        "CAST(unnest($mtimes) AS BIGINT), CAST(unnest($digests) AS VARCHAR), "
        "CAST(unnest($ids) AS INTEGER), CAST(unnest($racy) AS BOOLEAN), "
        "CAST(unnest($etags) AS VARCHAR)",
        {
            "etags": [e.etag for e, _, _ in rows],
            "paths": [e.path for e, _, _ in rows],
            "sizes": [e.size for e, _, _ in rows],
            "mtimes": [e.mtime_ns for e, _, _ in rows],
            "digests": [d for _, d, _ in rows],
            "ids": [r for _, _, r in rows],
            "racy": [e.racy or not d for e, d, _ in rows],
        },
    )


def record_problems(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, str]]) -> None:
    if rows:
        con.executemany("INSERT INTO problems VALUES (?, ?, ?)", rows)


def record_file(
    con: duckdb.DuckDBPyConnection, entry: FileEntry, digest: str, report_id: int | None
) -> None:
    record_files(con, [(entry, digest, report_id)])


# Up to this many files are forgotten by filters on each table's column, which let DuckDB
# skip row groups by their min and max; more by a join, which reads every row group. The
# filters cost less for a few files; the two break even at about twice this many.
FEW_FILES = 8


def forget_files(con: duckdb.DuckDBPyConnection, paths: list[str]) -> set[str]:
    """Drop every row of these files; the suites their reports belonged to."""
    if not paths:
        return set()
    if len(paths) <= FEW_FILES:
        # by the reports' own column: one file may hold several reports
        rows = con.execute(
            "SELECT report_id, suite FROM reports WHERE list_contains($p, file)", {"p": paths}
        ).fetchall()
        ids = [report_id for report_id, _ in rows if report_id is not None]
        for table in REPORT_TABLES if ids else ():
            # allow-listed names
            con.execute(f"DELETE FROM {table} WHERE list_contains($ids, report_id)", {"ids": ids})
        con.execute("DELETE FROM problems WHERE list_contains($p, file)", {"p": paths})
        con.execute("DELETE FROM files WHERE list_contains($p, path)", {"p": paths})
        return {suite for _, suite in rows if suite is not None}
    con.execute(
        "CREATE OR REPLACE TEMP TABLE gone_files AS SELECT unnest($p) AS path", {"p": paths}
    )
    gone_ids = "SELECT report_id FROM reports WHERE file IN (SELECT path FROM gone_files)"
    suites = {
        suite
        for (suite,) in con.execute(
            f"SELECT DISTINCT suite FROM reports WHERE report_id IN ({gone_ids})"
        ).fetchall()
    }
    for table in REPORT_TABLES:
        con.execute(f"DELETE FROM {table} WHERE report_id IN ({gone_ids})")  # allow-listed names
    con.execute("DELETE FROM problems WHERE file IN (SELECT path FROM gone_files)")
    con.execute("DELETE FROM files WHERE path IN (SELECT path FROM gone_files)")
    return suites
