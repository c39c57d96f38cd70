"""The summary document (`relidash summary --json`) and the report overview the pages
start from: catalog rows shaped into JSON-ready dicts, read from the estimates the load
stored.

Must not: import Streamlit or Altair, hold SQL text, or print.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

import duckdb

from dashboard.analysis.estimates import (
    MIN_K_MAX,
    count_or_none,
    k_max_for,
    number_or_none,
    text_or_none,
)
from dashboard.data.catalog import SettleAhead, settle_catalog
from dashboard.data.catalog.queries import fetch_rows, iter_row_batches, load_query, run_query
from dashboard.data.load.results import store_records, stored_records_for
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K, PassKResult

if TYPE_CHECKING:
    import pandas as pd

    from dashboard.data.catalog import SettleAhead

# What stores the entries a summary built: (connection, [(report_id, entry text)]).
Keep = Callable[[duckdb.DuckDBPyConnection, list[tuple[int, str]]], None]


def report_overview(
    con: duckdb.DuckDBPyConnection, suites: Sequence[str] | None = None
) -> pd.DataFrame:
    """report_overview.sql's rows: of every report, or of these suites' reports."""
    return run_query(
        con, "read/report_overview", suites=None if suites is None else list(suites), release=None
    )


def load_problems(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return run_query(con, "read/load_problems")


def _metric_cell(value: Any, low: Any, high: Any, reason: str | None) -> dict[str, Any]:
    return {
        "value": number_or_none(value),
        "ci_low": number_or_none(low),
        "ci_high": number_or_none(high),
        "unknown_reason": reason or None,
    }


def stored_pass_k(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> dict[tuple[int, str, int], PassKResult]:
    """The default-policy results the load stored, by (report_id, metric, k).

    Equal to suite_pass_k over the reports' evaluated cases (the load computed them so),
    so pages under the default policy read them instead of estimating again.
    """
    return {
        (rid, metric, k): PassKResult(k, metric, value, low, high, n_cases, runs, method, reason)
        for rid, metric, k, value, low, high, method, n_cases, runs, reason in con.execute(
            load_query("read/report_metrics"), {"report_ids": report_ids}
        ).fetchall()
    }


def report_records(
    con: duckdb.DuckDBPyConnection, overview: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The `reports` entries of `relidash summary --json`, one per overview row.

    Built from plain rows: at thousands of reports, DataFrame grouping costs seconds.
    """
    # the rows' own reports only: a streamed summary asks a batch at a time, and reading
    # every report's metrics for each batch is what made memory grow with the files
    wanted = [row["report_id"] for row in overview]
    metrics = _metric_cells(con, wanted)
    lottery = _lottery_entries(con, wanted)
    return [
        {
            **_entry_head(row),
            **_cells_of(metrics, row),
            "lottery": lottery.get(row["report_id"], []),
        }
        for row in overview
    ]


# The pass_at_k, pass_hat_k and lottery text DuckDB wrote for a batch's reports, by id.
EntryCells = dict[int, tuple[str, str, str]]


def report_entries(
    con: duckdb.DuckDBPyConnection,
    overview: Sequence[dict[str, Any]],
    cells: EntryCells | None = None,
) -> list[str]:
    """report_records' entries as the text json.dumps(entry, ensure_ascii=False) writes.

    Their metric cells and lottery cases, most of each entry, are written by DuckDB
    (entry_cells, or `cells` read by it already), which writes a float as Python does:
    fetching the metric rows and lottery cases into Python and dumping them would be most
    of the entries' time, all of it on the main thread after the load. A report DuckDB
    cannot write exactly is report_records' entry, dumped here.
    """
    written = cells if cells is not None else entry_cells(con, overview)
    rest = [row for row in overview if row["report_id"] not in written]
    dumped = {
        row["report_id"]: json.dumps(record, ensure_ascii=False)
        for row, record in zip(rest, report_records(con, rest), strict=True)
    }
    entries = []
    for row in overview:
        rid = row["report_id"]
        if rid in dumped:
            entries.append(dumped[rid])
            continue
        # json.dumps of a dict is its items joined by ", " inside braces: the head's text
        # without its closing brace, then the cells' and the lottery's items
        head = json.dumps(_entry_head(row), ensure_ascii=False)
        at_k, hat_k, lottery = written[rid]
        entries.append(
            f'{head[:-1]}, "pass_at_k": {at_k}, "pass_hat_k": {hat_k}, "lottery": {lottery}}}'
        )
    return entries


def entry_cells(con: duckdb.DuckDBPyConnection, overview: Sequence[dict[str, Any]]) -> EntryCells:
    """What DuckDB reads and writes of these reports' entries (metric_cells.sql): each
    report's pass_at_k, pass_hat_k and lottery text, where it can write them exactly."""
    if not overview:  # every entry of the batch was stored: not even an empty query
        return {}
    return {
        rid: (at_k, hat_k, lottery)
        for rid, at_k, hat_k, lottery in con.execute(
            load_query("read/metric_cells"),
            {
                "report_ids": [row["report_id"] for row in overview],
                "min_k_max": MIN_K_MAX,
                "at": METRIC_PASS_AT_K,
                "hat": METRIC_PASS_HAT_K,
            },
        ).fetchall()
    }


def _metric_cells(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> dict[tuple[int, str], dict[str, dict[str, Any]]]:
    """Each (report, metric)'s cells by k, in k order, from the stored metrics."""
    metrics: dict[tuple[int, str], dict[str, dict[str, Any]]] = {}
    if not report_ids:
        return metrics
    for rid, metric, k, value, low, high, _, _, _, reason in con.execute(
        load_query("read/report_metrics"), {"report_ids": report_ids}
    ).fetchall():
        metrics.setdefault((rid, metric), {})[str(k)] = _metric_cell(value, low, high, reason)
    return metrics


def _cells_of(
    metrics: dict[tuple[int, str], dict[str, dict[str, Any]]], row: dict[str, Any]
) -> dict[str, dict[str, dict[str, Any]]]:
    """An entry's pass_at_k and pass_hat_k: its report's cells up to its k_max."""
    rid, k_max = row["report_id"], k_max_for(row["runs_max"])
    return {
        key: {k: v for k, v in metrics.get((rid, metric), {}).items() if int(k) <= k_max}
        for key, metric in (("pass_at_k", METRIC_PASS_AT_K), ("pass_hat_k", METRIC_PASS_HAT_K))
    }


def _lottery_entries(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> dict[int, list[dict[str, Any]]]:
    lottery: dict[int, list[dict[str, Any]]] = {}
    if not report_ids:
        return lottery
    for rid, _, _, case_id, text, passes, runs in con.execute(
        load_query("read/lottery_cases"), {"report_ids": report_ids}
    ).fetchall():
        lottery.setdefault(rid, []).append(
            {"case_id": text_or_none(case_id), "input": text, "passes": passes, "runs": runs}
        )
    return lottery


def _entry_head(row: dict[str, Any]) -> dict[str, Any]:
    """An entry's fields before its metric cells."""
    return {
        "file": row["file"],
        "suite": row["suite"],
        "release": row["release"],
        "harness": row["harness"],
        "format": row["format"],
        "upgraded": bool(row["upgraded"]),
        # an Inspect log that did not finish: its own status (else null)
        "complete": bool(row["complete"]),
        "log_status": row["log_status"],
        "cases": {
            "total": int(row["cases_total"]),
            "evaluated": int(row["cases_evaluated"]),
            "errored": int(row["cases_errored"]),
            "skipped": int(row["cases_skipped"]),
            "excluded": int(row["cases_excluded"]),
        },
        "runs": {
            "min": count_or_none(row["runs_min"]),
            "max": count_or_none(row["runs_max"]),
        },
    }


def latest_rows(overview: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One report per (suite, release): the last in report_overview's order, i.e. the most
    recent (its own time, else file mtime)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in overview:
        latest[(row["suite"], row["release"])] = row
    return list(latest.values())


def latest_per_release(overview: pd.DataFrame) -> pd.DataFrame:
    """latest_rows for a DataFrame of report_overview rows (the pages' form)."""
    return overview.groupby(["suite", "release"], sort=False).tail(1).reset_index(drop=True)


# Reports per batch of a streamed summary: memory holds one batch's entries, not all.
SUMMARY_BATCH = 500


def loaded_suites(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The suites loaded: one DISTINCT row each, not every report's overview row."""
    return {str(row["suite"]) for row in fetch_rows(con, "read/suite_names")}


def _wanted(row: dict[str, Any], suites: Sequence[str] | None, release: str | None) -> bool:
    return (not suites or row["suite"] in suites) and (release is None or row["release"] == release)


def chosen_rows(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """The overview rows a summary covers, a batch at a time: every report (by file) or the
    latest report of each release with its files (by release), of the chosen suites and
    release only."""
    batches = iter_row_batches(
        con,
        "read/report_overview",
        SUMMARY_BATCH,
        suites=list(suites) if suites else None,
        release=release,
    )
    yield from (_by_release(batches) if by == "release" else batches)


def _by_release(batches: Iterator[list[dict[str, Any]]]) -> Iterator[list[dict[str, Any]]]:
    """report_overview's rows, one per release: the last of the release's rows (its
    latest report), with `files`, every file of the release in that order.

    A release's reports are one run of rows: report_overview orders by suite, then
    release_rank, and each release of a suite has a rank of its own (assign_releases). So
    the files are gathered from rows already fetched, not listed by DuckDB: a list column
    makes `--by release` of many reports much slower to fetch than `--by file`.
    """
    latest: dict[str, Any] | None = None  # the release being read: its last row so far
    files: list[str] = []  # and its files (a release of many reports keeps only their names)
    for batch in batches:
        releases = []
        for row in batch:
            if latest is not None and (
                row["release"] != latest["release"] or row["suite"] != latest["suite"]
            ):
                latest["files"] = files  # a row of this summary's own fetch: given them in place
                releases.append(latest)
                files = []
            files.append(row["file"])
            latest = row
        if releases:
            yield releases
    if latest is not None:
        latest["files"] = files
        yield [latest]


def summary_entries(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
    keep: Keep = store_records,
) -> Iterator[str]:
    """Each entry of the summary document as compact JSON text, a batch at a time.

    Entries are joined from each report's stored entry (a load that changed one file
    rebuilds one entry, not thousands); by release each gains its rank and files. What a
    batch reads from DuckDB (its stored entries, the cells of those it builds) is read on
    a cursor of its own while the batch before it is written: after a cold load of many
    reports, DuckDB's part of building their entries is a large share of the time.
    The entries built are stored by `keep` (HeldRecords: while the load's log is
    checkpointed).
    """
    cursor = con.cursor()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="relidash-entries") as pool:
            ahead: tuple[list[dict[str, Any]], Future[_BatchReads]] | None = None
            for batch in chosen_rows(con, by, suites, release):
                reads = pool.submit(_batch_reads, cursor, batch)
                if ahead is not None:
                    yield from _batch_entries(con, by, *ahead, keep)
                ahead = (batch, reads)
            if ahead is not None:
                yield from _batch_entries(con, by, *ahead, keep)
    finally:
        cursor.close()


# A batch's stored entries by report id, the rows without one, and their cells.
_BatchReads = tuple[dict[int, str], list[dict[str, Any]], EntryCells]


@contextmanager
def summary_session(con: duckdb.DuckDBPyConnection, *, fresh_catalog: bool) -> Iterator[Keep]:
    """What reading a summary writes, and when: the load's log is checkpointed while the
    entries are built (SettleAhead); entries built meanwhile are held and stored after it
    (HeldRecords); the catalog is settled at the end (in full when this command built it
    from nothing). Yields the `keep` to build entries with."""
    settling = SettleAhead(con)
    keep = HeldRecords(settling)
    try:
        yield keep
    finally:
        settling.wait()
    keep.flush(con)
    settle_catalog(con, full=fresh_catalog)


class HeldRecords:
    """Stores built entries as store_records does, except while `settling` checkpoints
    the load's log (writers would wait for it): those are held, at most HELD_MOST of
    them, and stored at the first batch after it, or by `flush`."""

    HELD_MOST = 5000  # a few MB of entry text

    def __init__(self, settling: SettleAhead) -> None:
        self.settling = settling
        self.held: list[tuple[int, str]] = []

    def __call__(self, con: duckdb.DuckDBPyConnection, records: list[tuple[int, str]]) -> None:
        if self.settling.running() and len(self.held) + len(records) <= self.HELD_MOST:
            self.held += records
            return
        self.settling.wait()
        self.flush(con)
        store_records(con, records)

    def flush(self, con: duckdb.DuckDBPyConnection) -> None:
        """Store what is held (after settling.wait(): before, it waits for the checkpoint)."""
        held, self.held = self.held, []
        store_records(con, held)


def _batch_reads(cursor: duckdb.DuckDBPyConnection, batch: list[dict[str, Any]]) -> _BatchReads:
    entries = stored_records_for(cursor, [row["report_id"] for row in batch])
    missing = [row for row in batch if row["report_id"] not in entries]
    return entries, missing, entry_cells(cursor, missing)


def _batch_entries(
    con: duckdb.DuckDBPyConnection,
    by: str,
    batch: list[dict[str, Any]],
    reads: Future[_BatchReads],
    keep: Keep,
) -> Iterator[str]:
    """The batch's entries in order: stored, or built (and kept) from its reads."""
    entries, missing, cells = reads.result()
    fresh = [
        (row["report_id"], text)
        for row, text in zip(missing, report_entries(con, missing, cells), strict=True)
    ]
    if fresh:
        keep(con, fresh)
    entries.update(fresh)
    for row in batch:
        text = entries[row["report_id"]]
        if by == "release":
            text = with_release_keys(text, int(row["release_rank"]), list(row["files"]))
        yield text


def with_release_keys(entry: str, rank: int, files: list[str]) -> str:
    """A report's stored entry (json.dumps of a non-empty object without these keys) with
    `release_rank` and `files` added last, as json.dumps of the object with them would
    write it: spliced before the closing brace, not parsed and written again (parsing
    every entry would make `--by release` cost several times `--by file`)."""
    head = entry.rstrip()
    body = head[:-1]  # one copy of the entry's text, not one per check (one entry a release)
    if not (head.endswith("}") and body.rstrip() != "{"):
        raise ValueError(f"not a stored summary entry: {entry[:60]!r}")
    # json.dumps(files, ensure_ascii=False), written from its own string encoder:
    # json.dumps' setup for a list of one file, once per release, costs more than the list
    files_text = "[" + ", ".join(map(encode_basestring, files)) + "]"
    return f'{body}, "release_rank": {rank}, "files": {files_text}}}'


def summary_problems(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
) -> list[dict[str, str]]:
    """The load problems a summary lists: all of them, or with a suite or release chosen,
    those of its files and of files that loaded nothing (they may be any suite's)."""
    problems = problem_entries(con)
    if not suites and release is None:
        return problems
    files = {
        row["file"]: _wanted(row, suites, release)
        for row in fetch_rows(con, "read/report_files", files=[p["file"] for p in problems])
    }
    return [p for p in problems if files.get(p["file"], True)]


def problem_entries(con: duckdb.DuckDBPyConnection) -> list[dict[str, str]]:
    return [
        {"file": file, "reason": reason, "scope": scope}
        for file, scope, reason in con.execute(load_query("read/load_problems")).fetchall()
    ]
