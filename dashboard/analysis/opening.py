"""One way to bring a reports source's catalog up to date, for every command and the app:
`load_source` under the options every surface shares (`LoadOptions`). A command opens the
catalog (waiting while another relidash process holds it), loads and settles it
(`open_loaded`); the app refreshes its served catalog with the same load
(`refresh_served`).

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

from dashboard.data.names import CATALOG_WAIT_SECONDS, DEFAULT_MAX_BYTES, MEMORY

if TYPE_CHECKING:
    import duckdb

    from dashboard.data.load.ingest import IngestResult
    from dashboard.data.load.snapshot import ServedCatalog
    from dashboard.data.sources.reports import ReportSource


@dataclass(frozen=True)
class LoadOptions:
    """How a source is loaded: the same for every command and for the app."""

    catalog: str | None = None  # a path, ':memory:', or None for the source's own
    max_bytes: int = DEFAULT_MAX_BYTES  # larger report files are a problem, not read
    wait_seconds: float = CATALOG_WAIT_SECONDS  # for a catalog another relidash process holds


@dataclass(frozen=True)
class Loaded:
    con: duckdb.DuckDBPyConnection
    result: IngestResult
    fresh: bool  # built from nothing by this open: its file alone must hold it once settled


def load_source(
    con: duckdb.DuckDBPyConnection,
    source: ReportSource,
    options: LoadOptions,
    progress: Callable[[int, int], None] | None = None,
) -> IngestResult:
    """Bring the catalog open on `con` up to date with `source`: the one load that
    `open_loaded` (every command) and `refresh_served` (the app) run."""
    from dashboard.analysis.loading import refresh_catalog

    return refresh_catalog(con, source, max_bytes=options.max_bytes, progress=progress)


def open_loaded(
    source: ReportSource,
    options: LoadOptions,
    *,
    on_wait: Callable[[str, float], None],
    progress: Callable[[int, int], None] | None = None,
    settle: bool = True,
) -> Loaded:
    """The source's catalog, up to date with the source. Without `settle` the caller
    settles the log with `summary_session` once it has stored what it builds. `on_wait`
    (the catalog's location, the seconds it will wait) is called when another relidash
    process holds the catalog. SourceError
    when the source cannot be listed or fetched: the catalog keeps every row it had."""
    from concurrent.futures import ThreadPoolExecutor

    from dashboard.data.catalog import open_catalog_waiting, settle_catalog
    from dashboard.data.sources import SourceError
    from dashboard.data.sources.reports import catalog_location

    source.start_listing()  # one fresh listing, begun while the catalog opens
    location = catalog_location(source, options.catalog)
    fresh = location != MEMORY and not os.path.exists(location)
    stop = threading.Event()  # set when interrupted: the opener then waits no longer
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="relidash-open") as opener:
        opening = opener.submit(
            open_catalog_waiting,
            location,
            max(0.0, options.wait_seconds),
            lambda seconds: on_wait(location, seconds),
            stop,
        )
        try:
            import dashboard.analysis.loading  # noqa: F401  numpy and the stats, while it opens

            con = opening.result()
        except BaseException:
            stop.set()
            raise
    try:
        result = load_source(con, source, options, progress)
    except SourceError:
        con.close()
        raise
    if settle:
        settle_catalog(con, full=fresh)
    return Loaded(con, result, fresh)


def served_catalog(source: ReportSource, options: LoadOptions) -> ServedCatalog:
    """The app's catalog of `source`: refreshed by one short-lived writer, read from a
    private copy (data/load/snapshot.py), so a server never locks out the CLI."""
    from dashboard.data.load.snapshot import ServedCatalog
    from dashboard.data.sources.reports import catalog_location

    return ServedCatalog(source, catalog_location(source, options.catalog))


def refresh_served(
    served: ServedCatalog,
    options: LoadOptions,
    progress: Callable[[int, int], None] | None = None,
) -> IngestResult | None:
    """Refresh the app's catalog with the load every command runs (`load_source`). None
    when another process holds the catalog past the served catalog's retries."""
    return served.refresh(lambda con: load_source(con, served.source, options, progress))
