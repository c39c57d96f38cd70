"""What DuckDB's staging of multivon-eval reports says about their files: the files that
hold several JSON values or no `cases` list, NaN / Infinity signs confirmed by a strict
parse, and DuckDB's refusals in words.

Must not: run the readers (staging.py does).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import duckdb

from dashboard.data.catalog.problems import record_problems
from dashboard.data.catalog.queries import execute, fetch_rows
from dashboard.data.formats.multivon.checks import strict_json_problem


@dataclass(frozen=True)
class Findings:
    """What the staged rows say about their files, keyed by absolute path: the files that
    hold several JSON values or no `cases` list (path, values), and the files the strict
    parse saw NaN / Infinity in."""

    odd: list[tuple[str, int]]
    flagged: list[str]


def staged_findings(con: duckdb.DuckDBPyConnection, *, strict: bool) -> Findings:
    """Findings of `stage` (strict: it holds strictly parsed rows, which flag NaN)."""
    odd = fetch_rows(con, "formats/multivon/odd_files")
    flagged = fetch_rows(con, "formats/multivon/flagged_files") if strict else []
    return Findings([(r["filename"], r["n"]) for r in odd], [r["filename"] for r in flagged])


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
        execute(con, "formats/multivon/drop_from_batch", paths=[r[0] for r in rows])
    return {r[0] for r in rows}


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
