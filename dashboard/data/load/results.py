"""Write computed results (metrics, lottery ranks, report warnings) back into the catalog.

The numbers come from dashboard/stats via dashboard/analysis/loading.py; this module only
stores them (an Inspect report's UNKNOWN reasons are put in its own words on the way in).
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import zstandard

from dashboard.data.catalog import transaction
from dashboard.data.load.freshness import meta_value
from dashboard.data.load.rows import word_unknowns

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
_ROWS = "relidash_result_rows"  # the name the arrays are scanned by, for one statement


def store_report_results(
    con: duckdb.DuckDBPyConnection,
    metrics: Sequence[np.ndarray],
    lottery: Sequence[np.ndarray],
    warnings: list[tuple[str, str]],
) -> None:
    """Insert metrics rows (one array per METRIC_COLUMNS column; NaN for an estimate that
    is UNKNOWN), lottery ranks (report_id, case_idx and rank arrays), and report-scope
    problems, atomically.

    DuckDB scans the arrays as they are, without pandas: bound lists convert each value
    on its own, a large share of a load's main thread for many small reports; typed
    arrays cost an order of magnitude less.
    """
    with transaction(con):
        if len(metrics[0]):
            _insert_columns(
                con,
                "INSERT INTO metrics SELECT c0, c1, c2, nullif(c3, 'NaN'), nullif(c4, 'NaN'), "
                f"nullif(c5, 'NaN'), c6, c7, c8, c9 FROM {_ROWS}",
                list(metrics),
            )
            word_unknowns(con, np.unique(metrics[0]).tolist())
        if len(lottery[0]):
            _insert_columns(
                con, f"INSERT INTO lottery SELECT c0, c1, c2 FROM {_ROWS}", list(lottery)
            )
        if warnings:
            con.executemany("INSERT INTO problems VALUES (?, 'report', ?)", warnings)


def _insert_columns(
    con: duckdb.DuckDBPyConnection, statement: str, columns: list[np.ndarray]
) -> None:
    """Run an INSERT that selects c0, c1, ... from _ROWS, the given arrays."""
    con.register(_ROWS, {f"c{i}": column for i, column in enumerate(columns)})
    try:
        con.execute(statement)
    finally:
        con.unregister(_ROWS)


def metrics_complete(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether every report has its metrics: a load that parses anything clears the mark
    (dashboard/data/load/ingest.py) before its first report goes in, and mark_metrics_complete
    sets it once the metrics pass stored them all."""
    return meta_value(con, "metrics_complete") == "1"


def mark_metrics_complete(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("INSERT OR REPLACE INTO meta VALUES ('metrics_complete', '1')")


def stored_records_for(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> dict[int, str]:
    """Each listed report's summary entry kept from earlier loads, by report_id (a streamed
    summary reads them a batch at a time)."""
    rows = con.execute(
        "SELECT r.report_id, r.record FROM report_records r "
        "JOIN (SELECT unnest($ids) AS report_id) w USING (report_id)",
        {"ids": report_ids},
    ).fetchall()
    if not rows:
        return {}
    expand = zstandard.ZstdDecompressor(dict_data=_record_dictionary(con)).decompress
    return {report_id: expand(record).decode("utf-8") for report_id, record in rows}


def store_records(con: duckdb.DuckDBPyConnection, records: list[tuple[int, str]]) -> None:
    """Keep each (report_id, entry text), compressed by zstandard against the catalog's
    record dictionary: entries repeat their key names and UNKNOWN reasons, and the
    largest table of a catalog of many small reports shrinks by an order of magnitude,
    more than twice as much as with zlib."""
    if not records:
        return
    squeeze = zstandard.ZstdCompressor(
        level=3,
        dict_data=_record_dictionary(con, records),
        write_checksum=False,
        write_dict_id=False,
    ).compress
    # two bound lists, one statement: executemany costs a statement's overhead per row
    con.execute(
        "INSERT INTO report_records SELECT unnest($ids), unnest($texts)",
        {
            "ids": [rid for rid, _ in records],
            "texts": [squeeze(text.encode("utf-8")) for _, text in records],
        },
    )


_DICTIONARY_BYTES = 32 * 1024


def _record_dictionary(
    con: duckdb.DuckDBPyConnection, first: list[tuple[int, str]] | None = None
) -> zstandard.ZstdCompressionDict:
    """The catalog's record dictionary. A catalog without one keeps `first` (the first
    entries stored, as they are) as its raw-content dictionary for its lifetime: every
    entry compressed against it stays readable."""
    rows = con.execute("SELECT data FROM record_dictionary").fetchall()
    data = rows[0][0] if rows else b""
    if not rows and first:
        data = "\n".join(text for _, text in first[:8]).encode("utf-8")[:_DICTIONARY_BYTES]
        con.execute("INSERT INTO record_dictionary VALUES ($d)", {"d": data})
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
