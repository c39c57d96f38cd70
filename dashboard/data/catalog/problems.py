"""What a load records about its files: a file's row in `files`, the problems that keep a
file or a case out, and forgetting a file's rows when it changes or goes.

Must not: parse files or run a harness's reader.
"""

from __future__ import annotations

import duckdb

from dashboard.data.catalog.queries import execute, execute_many, fetch_rows, fill_template
from dashboard.data.catalog.schema import REPORT_TABLES
from dashboard.data.sources.walk import FileEntry


def record_files(
    con: duckdb.DuckDBPyConnection, rows: list[tuple[FileEntry, str, int | None]]
) -> None:
    """Upsert `files` rows in one statement (a statement per row costs more)."""
    execute(
        con,
        "catalog/record_files",
        etags=[e.etag for e, _, _ in rows],
        paths=[e.path for e, _, _ in rows],
        sizes=[e.size for e, _, _ in rows],
        mtimes=[e.mtime_ns for e, _, _ in rows],
        digests=[d for _, d, _ in rows],
        ids=[r for _, _, r in rows],
        racy=[e.racy or not d for e, d, _ in rows],
    )


def record_problems(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, str]]) -> None:
    if rows:
        execute_many(con, "catalog/insert_problem", rows)


def record_file(
    con: duckdb.DuckDBPyConnection, entry: FileEntry, digest: str, report_id: int | None
) -> None:
    record_files(con, [(entry, digest, report_id)])


# Up to this many files are forgotten by filters on each table's column, which let DuckDB
# skip row groups by their min and max; more by a join, which reads every row group. The
# filters cost less for a few files, the join for many.
FEW_FILES = 8


def forget_files(con: duckdb.DuckDBPyConnection, paths: list[str]) -> set[str]:
    """Drop every row of these files; the suites their reports belonged to."""
    if not paths:
        return set()
    if len(paths) <= FEW_FILES:
        # by the reports' own column: one file may hold several reports
        rows = fetch_rows(con, "catalog/reports_of_files", paths=paths)
        ids = [r["report_id"] for r in rows if r["report_id"] is not None]
        for table in REPORT_TABLES if ids else ():
            con.execute(
                fill_template("catalog/forget_report_rows", table=table), {"report_ids": ids}
            )
        execute(con, "catalog/forget_file_problems", paths=paths)
        execute(con, "catalog/forget_file_records", paths=paths)
        return {r["suite"] for r in rows if r["suite"] is not None}
    execute(con, "catalog/gone_files", paths=paths)
    suites = {r["suite"] for r in fetch_rows(con, "catalog/suites_of_gone_files")}
    for table in REPORT_TABLES:
        con.execute(fill_template("catalog/forget_gone_report_rows", table=table))
    execute(con, "catalog/forget_gone_problems")
    execute(con, "catalog/forget_gone_files")
    return suites
