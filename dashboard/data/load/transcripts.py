"""Trial transcripts and case text, read from the report file for the one case being shown.

The catalog keeps what pages need to list and rank cases; transcripts, outputs, graders'
reasons and evidence (most of a report's bytes) stay in the file and are parsed on
demand. The path comes from the catalog's own record of the directory walk, never from
report content; for object storage the file is the mirror's copy of the object
(downloaded on demand, e.g. by a replica that started from a seed catalog), given by the
source (dashboard/data/sources/reports.py). A report of a harness read in Python gives
its case's trials through that harness (dashboard/data/formats/, e.g. an Inspect sample's
epochs from the log) in the same columns a multivon-eval report's trials give, `output`
being the rendered transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from dashboard.data.catalog.queries import fetch_rows, reader_buffer_bytes, run_query
from dashboard.data.catalog.schema import CASE_TEXT_COLUMNS, TRIALS_ONLY_COLUMNS
from dashboard.data.formats import harness_named
from dashboard.data.formats.protocol import CASE_TRIAL_COLUMNS, FormatProblem
from dashboard.data.sources import SourceError
from dashboard.data.sources.digests import directory_members, directory_stamp
from dashboard.data.sources.reports import DirectorySource, NotInSource, ReportSource

if TYPE_CHECKING:
    import pandas as pd

READ_LIMIT_BYTES = 1 << 31


class TranscriptUnavailable(Exception):
    """The report file cannot give this case's trials any more (moved, changed, deleted)."""


# formats/multivon/queries/case_trials.sql's columns, which every harness's trials give too
TRIAL_COLUMNS = CASE_TRIAL_COLUMNS


def read_case_trials(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    source: ReportSource | None = None,
) -> pd.DataFrame:
    """The case's recorded trials (0.18+; an Inspect sample's epochs), in run order.

    `source` gives the report file (None: the directory the catalog records)."""
    harness = harness_named(_harness(con, report_id))
    if not harness.staged:
        path, relative, size = _report_file(con, report_id, source)
        try:
            trials: pd.DataFrame = harness.case_trials(con, report_id, case_idx, path, size)
        except (FormatProblem, OSError) as exc:
            raise TranscriptUnavailable(f"{relative} could not be read again: {exc}") from exc
        return trials
    frame: pd.DataFrame = _read_case(
        con,
        report_id,
        case_idx,
        "formats/multivon/case_trials",
        TRIALS_ONLY_COLUMNS,
        run_query,
        source,
    )
    return frame


def read_case_text(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    source: ReportSource | None = None,
) -> dict[str, Any]:
    """The case's stored output (the last run's) and its graders' verdicts as JSON text."""
    if not harness_named(_harness(con, report_id)).staged:
        trials = read_case_trials(con, report_id, case_idx, source)
        if trials.empty:
            return {"output": None, "evaluators": None}
        last = trials.iloc[-1]
        return {"output": last["output"], "evaluators": last["evaluators"]}
    rows = _read_case(
        con,
        report_id,
        case_idx,
        "formats/multivon/case_text",
        CASE_TEXT_COLUMNS,
        fetch_rows,
        source,
    )
    return rows[0] if rows else {"output": None, "evaluators": None}


def _harness(con: duckdb.DuckDBPyConnection, report_id: int) -> str | None:
    rows = fetch_rows(con, "read/report_harness", report_id=report_id)
    return str(rows[0]["harness"]) if rows and rows[0]["harness"] is not None else None


def _read_case(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    query: str,
    columns: dict[str, str],
    fetch: Callable[..., Any],
    source: ReportSource | None,
) -> Any:
    """Run a named query that reads one case from the report's file."""
    path, relative, size = _report_file(con, report_id, source)
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


def _report_file(
    con: duckdb.DuckDBPyConnection, report_id: int, source: ReportSource | None
) -> tuple[Path, str, int]:
    """(local path, path as listed, size) of the report's file, unchanged since loaded."""
    rows = fetch_rows(con, "load/report_file", report_id=report_id)
    if not rows:
        raise TranscriptUnavailable("the report is no longer in the catalog; reload the reports")
    row = rows[0]
    root, relative, size, mtime_ns, etag = (
        row["root"], row["path"], row["size"], row["mtime_ns"], row["etag"]
    )  # fmt: skip
    if source is None:
        source = DirectorySource(Path(root))
    elif source.ident != root:
        raise TranscriptUnavailable(f"the catalog describes {root}, not {source.label}")
    try:
        path = source.open_file(relative)
        stat = path.stat()
        listed = (
            directory_stamp(directory_members(str(path)))
            if path.is_dir()
            else (stat.st_size, stat.st_mtime_ns)
        )
    except SourceError as exc:
        raise TranscriptUnavailable(f"{relative} cannot be read now ({exc})") from exc
    except NotInSource as exc:
        raise TranscriptUnavailable(f"{relative} is outside the reports directory") from exc
    except OSError as exc:
        raise TranscriptUnavailable(
            f"{relative} cannot be read now ({exc.strerror or exc}); reload the reports"
        ) from exc
    if listed != (size, mtime_ns) or (etag and source.copy_version(relative) != etag):
        raise TranscriptUnavailable(f"{relative} changed since it was loaded; reload the reports")
    return path, relative, size
