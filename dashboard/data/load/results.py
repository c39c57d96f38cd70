"""Write computed results (metrics, lottery ranks, report warnings) back into the catalog.

The numbers come from dashboard/stats via dashboard/analysis/loading.py; this module only
stores them (an Inspect report's UNKNOWN reasons are put in its own words on the way in).
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np
import zstandard

from dashboard.data.catalog import transaction, write_meta
from dashboard.data.catalog.problems import record_problems
from dashboard.data.catalog.queries import execute, fetch_rows, fill_template
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

    DuckDB scans the arrays as they are, without pandas: bound lists would convert each
    value on its own, on the load's main thread, for every report.
    """
    with transaction(con):
        if len(metrics[0]):
            _insert_columns(con, "load/insert_metrics", list(metrics))
            word_unknowns(con, np.unique(metrics[0]).tolist())
        if len(lottery[0]):
            _insert_columns(con, "load/insert_lottery", list(lottery))
        record_problems(con, [(file, "report", reason) for file, reason in warnings])


def _insert_columns(
    con: duckdb.DuckDBPyConnection, template: str, columns: list[np.ndarray]
) -> None:
    """Run an INSERT (a template whose {rows} selects c0, c1, ...) from the given arrays."""
    con.register(_ROWS, {f"c{i}": column for i, column in enumerate(columns)})
    try:
        con.execute(fill_template(template, rows=_ROWS))
    finally:
        con.unregister(_ROWS)


def metrics_complete(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether every report has its metrics: a load that parses anything clears the mark
    (dashboard/data/load/ingest.py) before its first report goes in, and mark_metrics_complete
    sets it once the metrics pass stored them all."""
    return meta_value(con, "metrics_complete") == "1"


def mark_metrics_complete(con: duckdb.DuckDBPyConnection) -> None:
    write_meta(con, {"metrics_complete": "1"})


def stored_records_for(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> dict[int, str]:
    """Each listed report's summary entry kept from earlier loads, by report_id (a streamed
    summary reads them a batch at a time)."""
    rows = fetch_rows(con, "load/stored_records", ids=report_ids)
    if not rows:
        return {}
    expand = zstandard.ZstdDecompressor(dict_data=_record_dictionary(con)).decompress
    return {r["report_id"]: expand(r["record"]).decode("utf-8") for r in rows}


def store_records(con: duckdb.DuckDBPyConnection, records: list[tuple[int, str]]) -> None:
    """Keep each (report_id, entry text), compressed by zstandard against the catalog's
    record dictionary: entries repeat their key names and UNKNOWN reasons, which a
    dictionary shared by them all takes out of the catalog's largest table (far more
    than zlib, which sees one entry at a time)."""
    if not records:
        return
    squeeze = zstandard.ZstdCompressor(
        level=3,
        dict_data=_record_dictionary(con, records),
        write_checksum=False,
        write_dict_id=False,
    ).compress
    # two bound lists, one statement: executemany costs a statement's overhead per row
    execute(
        con,
        "load/store_records",
        ids=[rid for rid, _ in records],
        records=[squeeze(text.encode("utf-8")) for _, text in records],
    )


_DICTIONARY_BYTES = 32 * 1024


def _record_dictionary(
    con: duckdb.DuckDBPyConnection, first: list[tuple[int, str]] | None = None
) -> zstandard.ZstdCompressionDict:
    """The catalog's record dictionary. A catalog without one keeps `first` (the first
    entries stored, as they are) as its raw-content dictionary for its lifetime: every
    entry compressed against it stays readable."""
    rows = fetch_rows(con, "load/record_dictionary")
    data = rows[0]["data"] if rows else b""
    if not rows and first:
        data = "\n".join(text for _, text in first[:8]).encode("utf-8")[:_DICTIONARY_BYTES]
        execute(con, "load/store_record_dictionary", data=data)
    return zstandard.ZstdCompressionDict(data, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
