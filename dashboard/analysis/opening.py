"""One way to open a reports source's catalog and bring it up to date, for every command:
open it (waiting while another relidash process holds it), refresh it from the source,
and settle its log.

The catalog opens in a thread (DuckDB lets go of the interpreter lock) while numpy and
the stats are imported, a noticeable part of a warm command over a large catalog: this
module imports neither at its top.

Must not: print, import Streamlit, or parse arguments (the CLI does, and draws progress
through the callbacks passed here).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

    from dashboard.data.load.ingest import IngestResult
    from dashboard.data.sources.reports import ReportSource


@dataclass(frozen=True)
class Loaded:
    con: duckdb.DuckDBPyConnection
    result: IngestResult
    fresh: bool  # built from nothing by this open: its file alone must hold it once settled


def open_loaded(
    source: ReportSource,
    catalog: str | None,
    *,
    max_bytes: int,
    wait_seconds: float,
    on_wait: Callable[[float], None],
    progress: Callable[[int, int], None] | None = None,
    settle: bool = True,
) -> Loaded:
    """The source's catalog (`catalog`: a path, ':memory:', or None for the source's own),
    up to date with the source. Without `settle` the caller settles the log with
    `summary_session` once it has stored what it builds. SourceError when the source
    cannot be listed or fetched: the catalog keeps every row it had."""
    from concurrent.futures import ThreadPoolExecutor

    from dashboard.data.catalog import MEMORY, open_catalog_waiting, settle_catalog
    from dashboard.data.sources import SourceError
    from dashboard.data.sources.reports import catalog_location

    source.start_listing()  # one fresh listing, begun while the catalog opens
    location = catalog_location(source, catalog)
    fresh = location != MEMORY and not os.path.exists(location)
    stop = threading.Event()  # set when interrupted: the opener then waits no longer
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="relidash-open") as opener:
        opening = opener.submit(
            open_catalog_waiting, location, max(0.0, wait_seconds), on_wait, stop
        )
        try:
            from dashboard.analysis.loading import refresh_catalog  # numpy, while it opens

            con = opening.result()
        except BaseException:
            stop.set()
            raise
    try:
        result = refresh_catalog(con, source, max_bytes=max_bytes, progress=progress)
    except SourceError:
        con.close()
        raise
    if settle:
        settle_catalog(con, full=fresh)
    return Loaded(con, result, fresh)
