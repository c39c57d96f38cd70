"""Reports of the harnesses read in Python (every one but multivon-eval: dashboard/data/
formats/) into the catalog, through queries/load/insert_rows_*.sql into the tables multivon-eval
reports fill.

A file (or a directory report) is read for what the catalog keeps; transcripts stay in it.
One that cannot be used becomes one problem with a reason; an interrupted run loads what
it holds and is marked incomplete by its `log_status`, never a problem. One file may hold
several reports (a promptfoo eval of several prompts or providers): each gets its own id,
and the file's record names the first.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import duckdb

from dashboard.data.catalog.queries import execute, fetch_rows
from dashboard.data.formats import harness_named
from dashboard.data.formats.protocol import (
    CASE_COLUMNS,
    REPORT_COLUMNS,
    TRIAL_COLUMNS,
    FormatProblem,
    ReportRows,
    Settings,
)
from dashboard.data.sources.walk import FileEntry, os_reason

# (entry, digest, harness name): the files of a batch one harness reads
RowItem = tuple[FileEntry, str, str]


@dataclass
class RowsBatch:
    """A batch of files, read: what to insert and what to record."""

    loaded: list[tuple[FileEntry, int, ReportRows]] = field(default_factory=list)
    files: list[tuple[FileEntry, str, int | None]] = field(default_factory=list)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (file, scope, reason)


def read_rows(
    items: list[RowItem],
    settings: dict[str, Settings],
    max_bytes: int,
    next_id: Callable[[], int],
) -> RowsBatch:
    """Read each file by its harness; each report it holds takes an id from `next_id`. A
    file that cannot be used is a problem of its own."""
    batch = RowsBatch()
    for entry, digest, name in items:
        harness = harness_named(name)
        reason: str | None = None
        try:
            reports = harness.read(entry.abspath, entry.size, max_bytes, settings[name])
        except FormatProblem as exc:
            reason = str(exc)
        except OSError as exc:
            reason = os_reason(exc)
        except MemoryError:
            # one file's member too large for the memory this process has: that file's
            # problem, while the memory it took is released and the rest loads
            reason = (
                "needs more memory to read than this process has (a member decompresses "
                "to more than fits); lower --max-file-mb to skip such files, or give "
                "relidash more memory"
            )
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            # a field of a shape the harness never writes (a hand-edited or foreign file)
            reason = (
                f"is a {harness.title} file with a field of the wrong type or shape "
                f"({type(exc).__name__}: {str(exc)[:200]})"
            )
        if reason is not None or not reports:
            batch.files.append((entry, digest, None))
            batch.problems.append((entry.path, "file", reason or "holds no report"))
            continue
        ids = [next_id() for _ in reports]
        for report_id, rows in zip(ids, reports, strict=True):
            batch.loaded.append((entry, report_id, rows))
            batch.problems += [(entry.path, "report", warning) for warning in rows.warnings]
        batch.files.append((entry, digest, ids[0]))
    return batch


def insert_rows(con: duckdb.DuckDBPyConnection, batch: RowsBatch) -> None:
    """Insert the read reports, cases, tags and trials (inside the caller's transaction):
    one statement per table, columns bound as lists."""
    if not batch.loaded:
        return
    reports: dict[str, list[Any]] = {"report_id": [], "file": [], "mtime_ns": []}
    reports.update({name: [] for name in REPORT_COLUMNS})
    cases: dict[str, list[Any]] = {name: [] for name in ("report_id", *CASE_COLUMNS)}
    trials: dict[str, list[Any]] = {name: [] for name in ("report_id", *TRIAL_COLUMNS)}
    tags: dict[str, list[Any]] = {"report_id": [], "case_idx": [], "tag": []}
    for entry, report_id, rows in batch.loaded:
        reports["report_id"].append(report_id)
        reports["file"].append(entry.path)
        reports["mtime_ns"].append(entry.mtime_ns)
        for name in REPORT_COLUMNS:
            reports[name].append(rows.report[name])
        _extend(cases, report_id, CASE_COLUMNS, rows.cases)
        _extend(trials, report_id, TRIAL_COLUMNS, rows.trials)
        tags["report_id"] += [report_id] * len(rows.tags)
        tags["case_idx"] += [case_idx for case_idx, _ in rows.tags]
        tags["tag"] += [tag for _, tag in rows.tags]
    execute(con, "load/insert_rows_reports", **reports)
    if cases["report_id"]:
        execute(con, "load/insert_rows_cases", **cases)
    if trials["report_id"]:
        execute(con, "load/insert_rows_trials", **trials)
    if tags["report_id"]:
        execute(con, "load/insert_rows_case_tags", **tags)


def _extend(
    columns: dict[str, list[Any]],
    report_id: int,
    names: tuple[str, ...],
    rows: list[tuple[Any, ...]],
) -> None:
    columns["report_id"] += [report_id] * len(rows)
    for i, name in enumerate(names):
        columns[name] += [row[i] for row in rows]


def word_unknowns(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
    """Each harness words its own reports' UNKNOWN reasons (multivon-eval's stand)."""
    if not report_ids:
        return
    for row in fetch_rows(con, "load/harnesses_of_reports", ids=report_ids):
        harness = harness_named(row["harness"])
        if not harness.staged:
            harness.word_unknowns(con, report_ids)
