"""What `relidash summary` says, and the report overview the pages start from: typed
rows (a report's head, its pass@k and pass^k by k, its lottery cases) read from the
estimates the load stored, a batch at a time.

render/ writes them for a terminal or as JSON. For the JSON document it may instead join
the entry texts stored by an earlier summary (`stored_entries`) and the cells DuckDB
writes as JSON (`written_cells`): both are read here, their text is render's.

Must not: import Streamlit or Altair, hold SQL text, write JSON, or print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import duckdb

from dashboard.analysis.estimates import (
    MIN_K_MAX,
    text_or_none,
)
from dashboard.data.catalog import SettleAhead, settle_catalog
from dashboard.data.catalog.queries import fetch_rows, iter_row_batches, load_query, run_query
from dashboard.data.load.results import store_records, stored_records_for
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K, PassKResult

if TYPE_CHECKING:
    import pandas as pd

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


# The heads are built for every row of a summary, stored entry or not: plain slotted
# classes, with the catalog's typed columns taken as they come (a frozen dataclass sets
# each field through object.__setattr__, several times the cost at many thousand rows).
@dataclass(slots=True)
class CaseCounts:
    total: int
    evaluated: int
    errored: int
    skipped: int
    excluded: int


@dataclass(slots=True)
class ReportHead:
    """What a summary says of a report before its numbers: one report_overview row.

    By release, the head is the release's latest report, with `files` every file of the
    release in order; by file, `files` is None.
    """

    report_id: int
    file: str
    suite: str
    release: str
    release_rank: int
    harness: str
    format: str
    upgraded: bool
    complete: bool
    log_status: str | None  # an Inspect log that did not finish: its own status
    cases: CaseCounts
    runs_min: int | None
    runs_max: int | None
    files: list[str] | None = None

    @classmethod
    def of(cls, row: dict[str, Any]) -> ReportHead:
        """The head of a report_overview row (its INTEGER and VARCHAR columns as DuckDB
        gives them; a NULL flag is false)."""
        return cls(
            row["report_id"],
            row["file"],
            row["suite"],
            row["release"],
            row["release_rank"],
            row["harness"],
            row["format"],
            bool(row["upgraded"]),
            bool(row["complete"]),
            row["log_status"],
            CaseCounts(
                row["cases_total"],
                row["cases_evaluated"],
                row["cases_errored"],
                row["cases_skipped"],
                row["cases_excluded"],
            ),
            row["runs_min"],
            row["runs_max"],
            row.get("files"),
        )


@dataclass(slots=True)
class MetricCell:
    value: float | None  # None: UNKNOWN, and `unknown_reason` says why
    ci_low: float | None
    ci_high: float | None
    unknown_reason: str | None


@dataclass(slots=True)
class LotteryCase:
    case_id: str | None
    input: str
    passes: int
    runs: int


@dataclass(slots=True)
class SummaryRow:
    """One entry of a summary: a report's head, its pass@k and pass^k by k (up to its
    k_max, in k order) and its lottery cases."""

    head: ReportHead
    pass_at_k: dict[int, MetricCell]
    pass_hat_k: dict[int, MetricCell]
    lottery: list[LotteryCase]


def summary_rows(con: duckdb.DuckDBPyConnection, heads: Sequence[ReportHead]) -> list[SummaryRow]:
    """The entries of these reports, read from the estimates the load stored (only the
    heads' own: a streamed summary asks a batch at a time)."""
    wanted = [head.report_id for head in heads]
    cells = _metric_cells(con, wanted)
    lottery = _lottery_cases(con, wanted)
    return [
        SummaryRow(
            head,
            cells.get((head.report_id, True), {}),
            cells.get((head.report_id, False), {}),
            lottery.get(head.report_id, []),
        )
        for head in heads
    ]


def _metric_cells(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> dict[tuple[int, bool], dict[int, MetricCell]]:
    """Each (report, is pass@k)'s cells by k, in k order, up to the report's k_max."""
    cells: dict[tuple[int, bool], dict[int, MetricCell]] = {}
    if not report_ids:
        return cells
    for rid, at_k, k, value, low, high, reason in con.execute(
        load_query("read/summary_cells"),
        {
            "report_ids": report_ids,
            "min_k_max": MIN_K_MAX,
            "at": METRIC_PASS_AT_K,
            "hat": METRIC_PASS_HAT_K,
        },
    ).fetchall():
        cells.setdefault((rid, at_k), {})[k] = MetricCell(value, low, high, reason)
    return cells


def _lottery_cases(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> dict[int, list[LotteryCase]]:
    lottery: dict[int, list[LotteryCase]] = {}
    if not report_ids:
        return lottery
    for rid, _, _, case_id, text, passes, runs in con.execute(
        load_query("read/lottery_cases"), {"report_ids": report_ids}
    ).fetchall():
        lottery.setdefault(rid, []).append(LotteryCase(text_or_none(case_id), text, passes, runs))
    return lottery


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


def suite_releases(
    con: duckdb.DuckDBPyConnection, suites: Sequence[str] | None = None
) -> dict[str, list[str]]:
    """Each suite's releases (of these suites only), in name order."""
    releases: dict[str, list[str]] = {}
    for row in fetch_rows(con, "read/suite_releases", suites=list(suites) if suites else None):
        releases.setdefault(str(row["suite"]), []).append(str(row["release"]))
    return releases


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


def summary_heads(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
) -> Iterator[list[ReportHead]]:
    """The heads of a summary's entries, a batch at a time: chosen_rows, typed."""
    for batch in chosen_rows(con, by, suites, release):
        yield [ReportHead.of(row) for row in batch]


def summary_entries(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
) -> Iterator[SummaryRow]:
    """Every entry of a summary, in the catalog's order (by suite, then release)."""
    for heads in summary_heads(con, by, suites, release):
        yield from summary_rows(con, heads)


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


# What DuckDB wrote of a report's entry: its pass_at_k, pass_hat_k and lottery as JSON text.
WrittenCells = dict[int, tuple[str, str, str]]


def stored_entries(
    cursor: duckdb.DuckDBPyConnection, heads: Sequence[ReportHead]
) -> dict[int, str]:
    """The entry texts stored for these reports (by report_id), as `keep` stored them:
    a load that changed one file leaves every other report's entry to be read back."""
    return stored_records_for(cursor, [head.report_id for head in heads])


def written_cells(cursor: duckdb.DuckDBPyConnection, heads: Sequence[ReportHead]) -> WrittenCells:
    """What DuckDB writes of these reports' entries (metric_cells.sql): each report's
    pass_at_k, pass_hat_k and lottery as the text json.dumps would write for them, where
    it can write them exactly (render/summary_json.py says when it cannot)."""
    if not heads:  # every entry of the batch was stored: not even an empty query
        return {}
    return {
        rid: (at_k, hat_k, lottery)
        for rid, at_k, hat_k, lottery in cursor.execute(
            load_query("read/metric_cells"),
            {
                "report_ids": [head.report_id for head in heads],
                "min_k_max": MIN_K_MAX,
                "at": METRIC_PASS_AT_K,
                "hat": METRIC_PASS_HAT_K,
            },
        ).fetchall()
    }


@dataclass(frozen=True, slots=True)
class SummaryProblem:
    file: str
    scope: str
    reason: str


def summary_problems(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
) -> list[SummaryProblem]:
    """The load problems a summary lists: all of them, or with a suite or release chosen,
    those of its files and of files that loaded nothing (they may be any suite's)."""
    problems = every_problem(con)
    if not suites and release is None:
        return problems
    files = {
        row["file"]: _wanted(row, suites, release)
        for row in fetch_rows(con, "read/report_files", files=[p.file for p in problems])
    }
    return [p for p in problems if files.get(p.file, True)]


def every_problem(con: duckdb.DuckDBPyConnection) -> list[SummaryProblem]:
    return [
        SummaryProblem(file, scope, reason)
        for file, scope, reason in con.execute(load_query("read/load_problems")).fetchall()
    ]
