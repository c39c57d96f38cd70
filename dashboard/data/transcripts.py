"""Trial transcripts and case text, read from the report file for the one case being shown.

The catalog keeps what pages need to list and rank cases; transcripts, outputs, graders'
reasons and evidence (most of a report's bytes) stay in the file and are parsed on
demand. The path comes from the catalog's own record of the directory walk, never from
report content.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from dashboard.data.ingest import reader_buffer_bytes
from dashboard.data.queries import fetch_rows, run_query
from dashboard.data.schema import CASE_TEXT_COLUMNS, TRIALS_ONLY_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

READ_LIMIT_BYTES = 1 << 31


class TranscriptUnavailable(Exception):
    """The report file cannot give this case's trials any more (moved, changed, deleted)."""


def read_case_trials(con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int) -> pd.DataFrame:
    """The case's recorded trials (0.18+), in run order."""
    frame: pd.DataFrame = _read_case(
        con, report_id, case_idx, "case_trials", TRIALS_ONLY_COLUMNS, run_query
    )
    return frame


def read_case_text(con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int) -> dict[str, Any]:
    """The case's stored output (the last run's) and its graders' verdicts as JSON text."""
    rows = _read_case(con, report_id, case_idx, "case_text", CASE_TEXT_COLUMNS, fetch_rows)
    return rows[0] if rows else {"output": None, "evaluators": None}


def _read_case(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    query: str,
    columns: dict[str, str],
    fetch: Callable[..., Any],
) -> Any:
    """Run a named query that reads one case from the report's file."""
    path, relative, size = _report_file(con, report_id)
    try:
        return fetch(
            con,
            query,
            file=str(path),
            columns=columns,
            case_idx=case_idx,
            max_bytes=reader_buffer_bytes(size, READ_LIMIT_BYTES),
        )
    except duckdb.Error as exc:
        raise TranscriptUnavailable(f"{relative} could not be read again: {exc}") from exc


def _report_file(con: duckdb.DuckDBPyConnection, report_id: int) -> tuple[Path, str, int]:
    """(absolute path, path as listed, size) of the report's file, unchanged since loaded."""
    rows = con.execute(
        "SELECT m.value, f.path, f.size, f.mtime_ns FROM files f, meta m "
        "WHERE m.key = 'reports_dir' AND f.report_id = $r",
        {"r": report_id},
    ).fetchall()
    if not rows:
        raise TranscriptUnavailable("the report is no longer in the catalog; reload the reports")
    root, relative, size, mtime_ns = rows[0]
    path = (Path(root) / relative).resolve()
    if not path.is_relative_to(Path(root).resolve()):
        raise TranscriptUnavailable(f"{relative} is outside the reports directory")
    try:
        stat = path.stat()
    except OSError as exc:
        raise TranscriptUnavailable(
            f"{relative} cannot be read now ({exc.strerror}); reload the reports"
        ) from exc
    if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns):
        raise TranscriptUnavailable(f"{relative} changed since it was loaded; reload the reports")
    return path, relative, size
