"""Inspect AI logs into the catalog: parsed in Python (dashboard/data/formats/), inserted
through queries/insert_inspect_*.sql into the tables multivon-eval reports fill.

A log is read for its header, sample summaries and reductions only (a few small members
of a `.eval` archive); transcripts stay in the file. A log that cannot be used becomes one
problem with a reason; a `cancelled`, `error` or interrupted log loads what it holds and is
marked incomplete by its `log_status`, never a problem. multivon-eval reports never pass
through here (their DuckDB path in ingest.py is untouched).

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from dashboard.data.formats import INSPECT
from dashboard.data.formats.inspect.log import InspectSettings, LogProblem, read_log
from dashboard.data.formats.inspect.rows import CASE_COLUMNS, TRIAL_COLUMNS, LogRows, log_rows
from dashboard.data.formats.unknown_wording import inspect_nothing_scored, inspect_short_samples
from dashboard.data.queries import execute, fetch_rows
from dashboard.data.walk import FileEntry, os_reason

REPORT_COLUMNS = (
    "suite", "model", "target_version", "format", "schema", "recorded_at", "runs_per_case",
    "cases_total", "cases_evaluated", "cases_errored", "cases_skipped", "runs_min",
    "cases_with_trials", "harness", "log_status", "metadata", "harness_facts",
)  # fmt: skip


@dataclass
class InspectBatch:
    """A batch of logs, parsed: what to insert and what to record."""

    loaded: list[tuple[FileEntry, int, LogRows]] = field(default_factory=list)
    files: list[tuple[FileEntry, str, int | None]] = field(default_factory=list)
    problems: list[tuple[str, str, str]] = field(default_factory=list)  # (file, scope, reason)


def read_inspect_logs(
    items: list[tuple[FileEntry, str, int]], settings: InspectSettings, max_bytes: int
) -> InspectBatch:
    """Parse each (entry, digest, report_id); a log that cannot be used is a problem."""
    batch = InspectBatch()
    for entry, digest, report_id in items:
        try:
            rows = log_rows(read_log(entry.abspath, entry.size, max_bytes), settings)
        except LogProblem as exc:
            batch.files.append((entry, digest, None))
            batch.problems.append((entry.path, "file", str(exc)))
            continue
        except OSError as exc:
            batch.files.append((entry, digest, None))
            batch.problems.append((entry.path, "file", os_reason(exc)))
            continue
        except MemoryError:
            # one log's member too large for the memory this process has: that log's
            # problem, while the memory it took is released and the rest loads
            batch.files.append((entry, digest, None))
            batch.problems.append(
                (
                    entry.path,
                    "file",
                    "needs more memory to read than this process has (a member decompresses "
                    "to more than fits); lower --max-file-mb to skip such logs, or give "
                    "relidash more memory",
                )
            )
            continue
        except (AttributeError, TypeError, KeyError, ValueError) as exc:
            # a field of a shape Inspect never writes (a hand-edited or foreign file)
            batch.files.append((entry, digest, None))
            batch.problems.append(
                (
                    entry.path,
                    "file",
                    "is an Inspect log with a field of the wrong type or shape "
                    f"({type(exc).__name__}: {str(exc)[:200]})",
                )
            )
            continue
        batch.loaded.append((entry, report_id, rows))
        batch.files.append((entry, digest, report_id))
        batch.problems += [(entry.path, "report", warning) for warning in rows.warnings]
    return batch


def insert_inspect_rows(con: duckdb.DuckDBPyConnection, batch: InspectBatch) -> None:
    """Insert the parsed logs' reports, cases, tags and trials (inside the caller's
    transaction): one statement per table, columns bound as lists."""
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
    execute(con, "insert_inspect_reports", **reports)
    if cases["report_id"]:
        execute(con, "insert_inspect_cases", **cases)
    if trials["report_id"]:
        execute(con, "insert_inspect_trials", **trials)
    if tags["report_id"]:
        execute(con, "insert_inspect_case_tags", **tags)


def _extend(
    columns: dict[str, list[Any]],
    report_id: int,
    names: tuple[str, ...],
    rows: list[tuple[Any, ...]],
) -> None:
    columns["report_id"] += [report_id] * len(rows)
    for i, name in enumerate(names):
        columns[name] += [row[i] for row in rows]


def rewrite_unknown_reasons(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
    """An Inspect report's UNKNOWN says, in its own terms, how many samples fall short of k
    scored epochs and why (errored epochs, epochs the log never recorded, or fewer epochs
    than k planned), or that no sample has a scored epoch at all, instead of
    multivon-eval's wording about runs."""
    if (
        not report_ids
        or not con.execute(
            "SELECT 1 FROM reports WHERE harness = $h AND list_contains($ids, report_id) LIMIT 1",
            {"h": INSPECT, "ids": report_ids},
        ).fetchall()
    ):
        return  # no Inspect report among them: multivon-eval's loads pay one small query
    unscored = fetch_rows(con, "inspect_nothing_scored", report_ids=report_ids)
    if unscored:
        execute(
            con,
            "set_unknown_reason_by_report",
            report_ids=[r["report_id"] for r in unscored],
            reasons=[
                inspect_nothing_scored(r["scorer"], r["unscored"], r["errored"]) for r in unscored
            ],
        )
    rows = fetch_rows(con, "inspect_short_samples", report_ids=report_ids)
    if not rows:
        return
    reasons = [
        inspect_short_samples(
            r["k"], r["samples"], r["shortest"], r["short"], r["errored"], r["missing"],
            r["planned"],
        )
        for r in rows
    ]  # fmt: skip
    con.execute(
        "UPDATE metrics SET unknown_reason = u.reason FROM (SELECT unnest($ids) AS report_id, "
        "unnest($metrics) AS metric, unnest($ks) AS k, unnest($reasons) AS reason) AS u "
        "WHERE metrics.report_id = u.report_id AND metrics.metric = u.metric AND metrics.k = u.k",
        {
            "ids": [r["report_id"] for r in rows],
            "metrics": [r["metric"] for r in rows],
            "ks": [r["k"] for r in rows],
            "reasons": reasons,
        },
    )
