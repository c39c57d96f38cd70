"""Write computed results (metrics, lottery ranks, report warnings) back into the catalog.

The numbers come from dashboard/stats via dashboard/service.py; this module only stores them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    import pandas as pd

METRIC_COLUMNS = (
    "report_id",
    "metric",
    "k",
    "value",
    "ci_low",
    "ci_high",
    "method",
    "n_cases",
    "runs",
    "unknown_reason",
)


def store_report_results(
    con: duckdb.DuckDBPyConnection,
    metrics: pd.DataFrame,
    lottery: pd.DataFrame,
    warnings: list[tuple[str, str]],
) -> None:
    """Insert metrics rows, set cases.lottery_rank, add report-scope problems, atomically."""
    con.execute("BEGIN TRANSACTION")
    try:
        if not metrics.empty:
            con.register("new_metrics", metrics[list(METRIC_COLUMNS)])
            con.execute("INSERT INTO metrics SELECT * FROM new_metrics")
            con.unregister("new_metrics")
        if not lottery.empty:
            con.register("new_lottery", lottery[["report_id", "case_idx", "lottery_rank"]])
            con.execute(
                "UPDATE cases SET lottery_rank = l.lottery_rank FROM new_lottery l "
                "WHERE cases.report_id = l.report_id AND cases.case_idx = l.case_idx"
            )
            con.unregister("new_lottery")
        if warnings:
            con.executemany("INSERT INTO problems VALUES (?, 'report', ?)", warnings)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def stored_records(con: duckdb.DuckDBPyConnection) -> dict[int, str]:
    """Each report's summary entry kept from earlier loads, by report_id."""
    return dict(con.execute("SELECT report_id, record FROM report_records").fetchall())


def store_records(con: duckdb.DuckDBPyConnection, records: list[tuple[int, str]]) -> None:
    if records:
        con.executemany("INSERT INTO report_records VALUES (?, ?)", records)


def cached_summary(con: duckdb.DuckDBPyConnection, by: str, version: int) -> str | None:
    """The summary document stored for this catalog version, if any."""
    rows = con.execute(
        "SELECT document FROM summary_cache WHERE grouping = $by AND version = $v",
        {"by": by, "v": version},
    ).fetchall()
    return str(rows[0][0]) if rows else None


def store_summary(con: duckdb.DuckDBPyConnection, by: str, version: int, document: str) -> None:
    """Keep the summary for this version; documents of older versions are dropped."""
    con.execute(
        "DELETE FROM summary_cache WHERE grouping = $by OR version <> $v", {"by": by, "v": version}
    )
    con.execute(
        "INSERT INTO summary_cache VALUES ($by, $v, $d)", {"by": by, "v": version, "d": document}
    )
