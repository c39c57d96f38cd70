"""What a load records about its files: a file's row in `files`, the problems that keep a
file or a case out, DuckDB's refusals in words, and the staged rows' findings (several
JSON values, no `cases` list, NaN signs) applied to a batch.

Must not: parse files or run the readers (dashboard/data/formats/multivon/staging.py does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from dashboard.data.catalog.schema import REPORT_TABLES
from dashboard.data.load.facts import strict_json_problem
from dashboard.data.sources.walk import FileEntry


@dataclass(frozen=True)
class Findings:
    """What the staged rows say about their files, keyed by absolute path: the files that
    hold several JSON values or no `cases` list (path, values), and the files the strict
    parse saw NaN / Infinity in."""

    odd: list[tuple[str, int]]
    flagged: list[str]


def staged_findings(con: duckdb.DuckDBPyConnection, *, strict: bool) -> Findings:
    """Findings of `stage` (strict: it holds strictly parsed rows, which flag NaN)."""
    odd = con.execute(
        "SELECT filename, count(*) FROM stage GROUP BY filename "
        "HAVING count(*) > 1 OR bool_or(cases IS NULL)"
    ).fetchall()
    flagged = (
        con.execute("SELECT DISTINCT filename FROM stage WHERE maybe_constants").fetchall()
        if strict
        else []
    )
    return Findings([(f, n) for f, n in odd], [f for (f,) in flagged])


def reject_files(
    con: duckdb.DuckDBPyConnection, findings: Findings, path_of: dict[str, str]
) -> set[str]:
    """Drop the staged files that hold several JSON values or no `cases` list, then those
    flagged for NaN / Infinity that hold such a literal (multivon-eval refuses them);
    record why."""
    rows = []
    for abspath, values in findings.odd:
        if abspath not in path_of:
            continue  # not this batch's (a framed row without its file is refused before)
        if values > 1:
            reason = f"holds {values} JSON values; a report file holds one object"
        else:
            reason = "is JSON but not a multivon-eval report: it has no `cases` list"
        rows.append((path_of[abspath], "file", reason))
    odd = {path for path, _, _ in rows}
    for abspath in findings.flagged:
        if abspath in path_of and path_of[abspath] not in odd:
            problem = strict_json_problem(abspath)
            if problem:
                rows.append((path_of[abspath], "file", problem))
    return _drop_from_batch(con, rows)


def _drop_from_batch(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, str]]) -> set[str]:
    """Record each (path, scope, reason) problem and take its file out of the batch."""
    if rows:
        record_problems(con, rows)
        con.execute(
            "DELETE FROM batch_files WHERE path IN (SELECT unnest($p))", {"p": [r[0] for r in rows]}
        )
    return {r[0] for r in rows}


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


_DUCKDB_NOISE = re.compile(r"^(Invalid Input Error|Conversion Error|Binder Error|IO Error): ")


def duckdb_reason(exc: Exception, abspath: str) -> str:
    """DuckDB's message, first line, without its prefix, advice or our absolute path."""
    if isinstance(exc, UnicodeDecodeError):
        return (
            "could not be read as a multivon-eval report: a field holds a value of the wrong "
            "type (DuckDB's own message about it could not be decoded)"
        )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    first = _DUCKDB_NOISE.sub("", first).replace(f' in file "{abspath}"', "")
    first = first.replace(abspath, "the file")
    if "UTF-8" in first:
        return f"is not UTF-8 text: {first}"
    if "duplicate key" in first:
        return f"has a duplicate key: {first}"
    if "Malformed JSON" in first or "unexpected end" in first:
        return f"is not valid JSON (truncated or malformed): {first}"
    return f"could not be read as a multivon-eval report: {first}"


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
