"""Write computed results (metrics, lottery ranks, report warnings) back into the catalog.

The numbers come from dashboard/stats via dashboard/analysis/loading.py; this module only
stores them (an Inspect report's UNKNOWN reasons are put in its own words on the way in).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from dashboard.data.ingest_inspect import rewrite_unknown_reasons

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
    metrics: Sequence[tuple[Any, ...]],
    lottery: Sequence[tuple[int, int, int]],
    warnings: list[tuple[str, str]],
) -> None:
    """Insert metrics rows (METRIC_COLUMNS order), set cases.lottery_rank from
    (report_id, case_idx, rank) rows, add report-scope problems, atomically. Rows go in
    as bound lists, one statement each: no DataFrame on the load path."""
    con.execute("BEGIN TRANSACTION")
    try:
        if metrics:
            columns = list(zip(*metrics, strict=True))
            con.execute(
                "INSERT INTO metrics SELECT CAST(unnest($c0) AS INTEGER), unnest($c1), "
                "CAST(unnest($c2) AS INTEGER), CAST(unnest($c3) AS DOUBLE), "
                "CAST(unnest($c4) AS DOUBLE), CAST(unnest($c5) AS DOUBLE), unnest($c6), "
                "CAST(unnest($c7) AS INTEGER), CAST(unnest($c8) AS INTEGER), unnest($c9)",
                {f"c{i}": list(column) for i, column in enumerate(columns)},
            )
            rewrite_unknown_reasons(con, sorted({int(row[0]) for row in metrics}))
        if lottery:
            rids, idxs, ranks = (list(c) for c in zip(*lottery, strict=True))
            con.execute(
                "UPDATE cases SET lottery_rank = l.rank FROM (SELECT unnest($rids) AS report_id, "
                "unnest($idxs) AS case_idx, unnest($ranks) AS rank) AS l "
                "WHERE cases.report_id = l.report_id AND cases.case_idx = l.case_idx",
                {"rids": rids, "idxs": idxs, "ranks": ranks},
            )
        if warnings:
            con.executemany("INSERT INTO problems VALUES (?, 'report', ?)", warnings)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def stored_records_for(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> dict[int, str]:
    """Each listed report's summary entry kept from earlier loads, by report_id (a streamed
    summary reads them a batch at a time)."""
    return dict(
        con.execute(
            "SELECT r.report_id, r.record FROM report_records r "
            "JOIN (SELECT unnest($ids) AS report_id) w USING (report_id)",
            {"ids": report_ids},
        ).fetchall()
    )


def store_records(con: duckdb.DuckDBPyConnection, records: list[tuple[int, str]]) -> None:
    if records:  # two bound lists, one statement: executemany costs about 1 ms a row
        con.execute(
            "INSERT INTO report_records SELECT unnest($ids), unnest($texts)",
            {"ids": [rid for rid, _ in records], "texts": [text for _, text in records]},
        )
