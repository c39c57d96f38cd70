"""Trial transcripts and case text, read from the report file for the one case being shown.

The catalog keeps what pages need to list and rank cases; transcripts, outputs, graders'
reasons and evidence (most of a report's bytes) stay in the file and are parsed on
demand. The path comes from the catalog's own record of the directory walk, never from
report content; for object storage the file is the mirror's copy of the object
(downloaded on demand, e.g. by a replica that started from a seed catalog), given by the
source (dashboard/data/sources/reports.py). An Inspect log's case is one sample: its epochs' transcripts are read
from the log (dashboard/data/formats/inspect/transcript.py) into the same columns a
multivon-eval report's trials give, `output` being the rendered transcript.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from dashboard.data.formats import INSPECT
from dashboard.data.formats.inspect.log import LogProblem, sample_id_of
from dashboard.data.formats.inspect.transcript import evaluators, read_sample_epochs, transcript
from dashboard.data.queries import fetch_rows, run_query
from dashboard.data.schema import CASE_TEXT_COLUMNS, TRIALS_ONLY_COLUMNS
from dashboard.data.sources import SourceError
from dashboard.data.sources.reports import DirectorySource, NotInSource, ReportSource
from dashboard.data.staging import reader_buffer_bytes

if TYPE_CHECKING:
    import pandas as pd

READ_LIMIT_BYTES = 1 << 31
# An Inspect sample-epoch's member, decompressed, is read up to the load's default file
# limit: a member a few kilobytes long can claim gigabytes, and each view pays its claim.
SAMPLE_MEMBER_LIMIT = 256 * 1024 * 1024


class TranscriptUnavailable(Exception):
    """The report file cannot give this case's trials any more (moved, changed, deleted)."""


# case_trials.sql's columns, which an Inspect case's trials give too
TRIAL_COLUMNS = (
    "trial_idx", "run_index", "attempt", "status", "recorded_at", "output", "model_error",
    "judge_error", "evaluator_error", "latency_ms", "evaluators",
)  # fmt: skip
NO_TRANSCRIPT = "(this epoch's transcript is not in the log)"


def read_case_trials(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    source: ReportSource | None = None,
) -> pd.DataFrame:
    """The case's recorded trials (0.18+; an Inspect sample's epochs), in run order.

    `source` gives the report file (None: the directory the catalog records)."""
    if _harness(con, report_id) == INSPECT:
        return _inspect_trials(con, report_id, case_idx, source)
    frame: pd.DataFrame = _read_case(
        con, report_id, case_idx, "case_trials", TRIALS_ONLY_COLUMNS, run_query, source
    )
    return frame


def read_case_text(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    source: ReportSource | None = None,
) -> dict[str, Any]:
    """The case's stored output (the last run's) and its graders' verdicts as JSON text."""
    if _harness(con, report_id) == INSPECT:
        trials = _inspect_trials(con, report_id, case_idx, source)
        if trials.empty:
            return {"output": None, "evaluators": None}
        last = trials.iloc[-1]
        return {"output": last["output"], "evaluators": last["evaluators"]}
    rows = _read_case(con, report_id, case_idx, "case_text", CASE_TEXT_COLUMNS, fetch_rows, source)
    return rows[0] if rows else {"output": None, "evaluators": None}


def _harness(con: duckdb.DuckDBPyConnection, report_id: int) -> str | None:
    rows = con.execute(
        "SELECT harness FROM reports WHERE report_id = $r", {"r": report_id}
    ).fetchall()
    return str(rows[0][0]) if rows and rows[0][0] is not None else None


def _inspect_trials(
    con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int, source: ReportSource | None
) -> pd.DataFrame:
    """An Inspect sample's epochs: outcomes from the catalog, transcripts from the log."""
    import pandas as pd

    rows = fetch_rows(con, "inspect_case_trials", report_id=report_id, case_idx=case_idx)
    if not rows:
        return pd.DataFrame(columns=list(TRIAL_COLUMNS))
    path, relative, size = _report_file(con, report_id, source)
    first = rows[0]
    scorer, threshold = str(first["scorer"]), float(first["pass_threshold"])
    try:
        epochs = read_sample_epochs(
            str(path), size, sample_id_of(str(first["case_id"])), SAMPLE_MEMBER_LIMIT
        )
    except (LogProblem, OSError) as exc:
        raise TranscriptUnavailable(f"{relative} could not be read again: {exc}") from exc
    for row in rows:
        sample = epochs.get(int(row["run_index"]))
        row["output"] = transcript(sample, scorer, threshold) if sample else NO_TRANSCRIPT
        row["evaluators"] = json.dumps(
            evaluators(sample, scorer, threshold) if sample else [], ensure_ascii=False, default=str
        )
    return pd.DataFrame([{name: row[name] for name in TRIAL_COLUMNS} for row in rows])


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
    rows = con.execute(
        "SELECT m.value, f.path, f.size, f.mtime_ns, f.etag FROM files f, meta m "
        "WHERE m.key = 'reports_dir' AND f.report_id = $r",
        {"r": report_id},
    ).fetchall()
    if not rows:
        raise TranscriptUnavailable("the report is no longer in the catalog; reload the reports")
    root, relative, size, mtime_ns, etag = rows[0]
    if source is None:
        source = DirectorySource(Path(root))
    elif source.ident != root:
        raise TranscriptUnavailable(f"the catalog describes {root}, not {source.label}")
    try:
        path = source.open_file(relative)
        stat = path.stat()
    except SourceError as exc:
        raise TranscriptUnavailable(f"{relative} cannot be read now ({exc})") from exc
    except NotInSource as exc:
        raise TranscriptUnavailable(f"{relative} is outside the reports directory") from exc
    except OSError as exc:
        raise TranscriptUnavailable(
            f"{relative} cannot be read now ({exc.strerror or exc}); reload the reports"
        ) from exc
    if (stat.st_size, stat.st_mtime_ns) != (size, mtime_ns) or (
        etag and source.copy_version(relative) != etag
    ):
        raise TranscriptUnavailable(f"{relative} changed since it was loaded; reload the reports")
    return path, relative, size
