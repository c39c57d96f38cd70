"""A served catalog: one short-lived writer refreshes it, readers query an in-memory copy.

DuckDB lets one process write a database file; a server that kept the catalog open would
lock out `relidash summary` and other servers. So the server opens the file only to
refresh it (retrying while another process holds it), copies the tables into memory, and
closes it. Queries run on cursors of the in-memory copy, one per thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from dashboard.data.catalog import (
    MEMORY,
    SCHEMA_VERSION,
    CatalogError,
    open_catalog,
    settle_catalog,
)
from dashboard.data.ingest import IngestResult, catalog_version, directory_changed

BUSY_RETRY_SECONDS = 30.0
# What the pages and the staleness check read (not the CLI's stored summary text).
SERVED_TABLES = ("meta", "files", "reports", "cases", "case_tags", "trials", "metrics", "problems")


class ServedCatalog:
    def __init__(self, reports_dir: Path, location: str) -> None:
        self.reports_dir = reports_dir
        self.location = location
        self.version = -1
        self.last_result: IngestResult | None = None
        self.notice: str | None = None
        self._lock = threading.Lock()
        self._memory: duckdb.DuckDBPyConnection | None = None

    def refresh(
        self, load: Callable[[duckdb.DuckDBPyConnection], IngestResult]
    ) -> IngestResult | None:
        """Run `load` on a writer connection, then swap in a fresh in-memory copy if it changed."""
        with self._lock:
            if self.location == MEMORY:
                if self._memory is None:
                    self._memory = open_catalog(MEMORY)
                self.last_result = load(self._memory)
                self.version = catalog_version(self._memory)
                return self.last_result
            if self._memory is None and self._adopt_existing():
                return self.last_result
            writer = self._open_writer()
            if writer is None:
                return None
            try:
                self.last_result = load(writer)
                version = catalog_version(writer)
                settle_catalog(writer)
            finally:
                writer.close()
            if version != self.version or self._memory is None:
                self._memory = self._copy_to_memory()
                self.version = version
            return self.last_result

    def _adopt_existing(self) -> bool:
        """Start from the catalog on disk without taking the writer, if it is current.

        A server restarted on an unchanged directory then shows its first page after one
        copy and a stat of every file, not a full load.
        """
        if not Path(self.location).is_file():
            return False
        try:
            memory = self._copy_to_memory()
            tables = {
                r[0] for r in memory.execute("SELECT table_name FROM duckdb_tables()").fetchall()
            }
            if not {"meta", "files", "reports", "problems"} <= tables:
                return False
            meta = dict(memory.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("schema_version") != SCHEMA_VERSION or meta.get("ingest_complete") != "1":
                return False
            if directory_changed(memory, self.reports_dir):
                return False
        except duckdb.Error:
            return False  # locked by a writer, or not a catalog: take the normal path
        files, problems = memory.execute(
            "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM problems)"
        ).fetchall()[0]
        self._memory = memory
        self.version = catalog_version(memory)
        self.last_result = IngestResult(int(files), 0, int(files), 0, int(problems), 0.0)
        return True

    def stale(self) -> bool:
        """Whether the reports directory differs from the loaded catalog (cheap: stat only)."""
        if self._memory is None:
            return True
        return directory_changed(self._memory.cursor(), self.reports_dir)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        if self._memory is None:
            raise CatalogError("the catalog has not been loaded yet")
        return self._memory.cursor()

    def _open_writer(self) -> duckdb.DuckDBPyConnection | None:
        deadline = time.monotonic() + BUSY_RETRY_SECONDS
        while True:
            try:
                self.notice = None
                return open_catalog(self.location)
            except CatalogError as exc:
                if time.monotonic() > deadline:
                    if self._memory is None:
                        raise
                    self.notice = f"{exc}. Showing the reports as last loaded."
                    return None
                time.sleep(0.5)

    def _copy_to_memory(self) -> duckdb.DuckDBPyConnection:
        """The tables pages read; the CLI's stored summary documents stay on disk."""
        memory = duckdb.connect(MEMORY)
        memory.execute("ATTACH $p AS cat (READ_ONLY)", {"p": self.location})
        present = {
            row[0]
            for row in memory.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'cat'"
            ).fetchall()
        }
        for table in SERVED_TABLES:
            if table in present:  # names from the allow-list, checked against the file
                memory.execute(f"CREATE TABLE memory.{table} AS SELECT * FROM cat.{table}")
        memory.execute("DETACH cat")
        return memory
