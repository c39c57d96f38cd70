"""A served catalog: one short-lived writer refreshes it, readers query a private copy.

DuckDB lets one process write a database file; a server that kept the catalog open would
lock out `relidash summary` and other servers. So the server opens the file only to
refresh it (retrying while another process holds it), copies the file, and closes it.
Queries run on cursors of the read-only copy, one per thread.

A source that cannot be listed (object storage unreachable, credentials gone) never
empties what is served: the last good catalog stays, and `notice` says why it may be
out of date.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import duckdb

from dashboard.data.catalog import (
    MEMORY,
    CatalogError,
    damage_notice,
    discard_damaged,
    is_damage,
    layout_is_current,
    open_catalog,
    read_every_block,
    settle_catalog,
)
from dashboard.data.catalog.queries import fetch_rows, fill_template
from dashboard.data.load.freshness import catalog_version, directory_changed, meta_value
from dashboard.data.load.ingest import IngestResult
from dashboard.data.sources import SourceError
from dashboard.data.sources.reports import Listing, ReportSource, as_source
from dashboard.data.sources.walk import walk_in_child
from dashboard.data.sources.watch import watch_directory

_LOG = logging.getLogger(__name__)
BUSY_RETRY_SECONDS = 30.0
SNAPSHOT = "snapshot"  # the attached copy's name; every cursor uses it
HELD = "cat"  # the catalog itself, attached while it is copied


class ServedCatalog:
    def __init__(self, reports: Path | ReportSource, location: str) -> None:
        self.reports_dir = reports
        self.source = as_source(reports)
        self.location = location
        self.version = -1
        self.last_result: IngestResult | None = None
        self.notice: str | None = None
        self._lock = threading.Lock()
        self._snapshot: duckdb.DuckDBPyConnection | None = None
        # a local directory's events spare a new session the walk (dashboard/data/sources/watch.py)
        self.watch = watch_directory(self.source.local_root)

    def refresh(
        self, load: Callable[[duckdb.DuckDBPyConnection], IngestResult]
    ) -> IngestResult | None:
        """Run `load` on a writer connection, then swap in a fresh copy if it changed.

        When the source cannot be read (SourceError) the catalog served stays as it was
        and `notice` says so; with nothing served yet, the catalog on disk is served as
        it is, and with no catalog at all the error is raised.
        """
        with self._lock:
            token = self.watch.token() if self.watch else 0
            try:
                result = self._refresh(load)
                if self.watch and result is not None:
                    self.watch.settle(token)
                    self.watch.renew_in_background(self._unchanged)
                return result
            except SourceError as exc:
                self.notice = f"{exc}. Showing the reports as last loaded."
                if self._snapshot is None and not self._adopt_existing(check=False):
                    raise
                return self.last_result

    def _refresh(
        self, load: Callable[[duckdb.DuckDBPyConnection], IngestResult]
    ) -> IngestResult | None:
        if self.location == MEMORY:
            if self._snapshot is None:
                self._snapshot = open_catalog(MEMORY)
            self.last_result = load(self._snapshot)
            self.version = catalog_version(self._snapshot)
            self.notice = None
            return self.last_result
        if self._snapshot is None and self._adopt_existing():
            self.notice = None
            return self.last_result
        writer = self._open_writer()
        if writer is None:
            return None
        try:
            try:
                self._load_and_copy(writer, load)
            except duckdb.Error as exc:
                if not is_damage(exc):
                    raise
                # damage DuckDB found only when a block was read: the catalog is moved
                # aside and loaded again from nothing
                writer.close()
                discard_damaged(self.location)
                _LOG.warning(damage_notice(self.location, exc, rebuilt=True))
                writer = open_catalog(self.location)
                self._load_and_copy(writer, load)
        finally:
            writer.close()
        return self.last_result

    def _load_and_copy(
        self,
        writer: duckdb.DuckDBPyConnection,
        load: Callable[[duckdb.DuckDBPyConnection], IngestResult],
    ) -> None:
        """Load on the writer, then copy the catalog if it changed (or nothing is served
        yet), while this writer holds the file: no other process can change it, nor take
        it between the load and the copy (an attach of its own would fail on the lock).

        The first copy a server takes has every block read (read_every_block): blocks
        its load did not touch could be damaged, and would show it only on a page.
        """
        self.last_result = load(writer)
        version = catalog_version(writer)
        settle_catalog(writer)
        if version != self.version or self._snapshot is None:
            snapshot = self._take_snapshot(held=True)
            if self._snapshot is None:
                read_every_block(snapshot)
            self._snapshot = snapshot
            self.version = version

    def _adopt_existing(self, *, check: bool = True) -> bool:
        """Start from the catalog on disk without taking the writer, if it is current.

        A server restarted on an unchanged directory then shows its first page after one
        copy and a stat of every file (one listing in object storage), not a full load.
        Without `check` it is adopted as it is: the last good catalog, when the source
        cannot be listed. SourceError when `check` cannot list the source.
        """
        if not Path(self.location).is_file():
            return False
        try:
            snapshot = self._take_snapshot()
            tables = {r["table_name"] for r in fetch_rows(snapshot, "catalog/table_names")}
            if not {"meta", "files", "reports", "problems"} <= tables:
                return False
            if not layout_is_current(snapshot):
                return False
            if meta_value(snapshot, "reports_dir") != self.source.ident:
                return False
            if check and directory_changed(snapshot, self.source):
                return False
            # served as it is, its damage would show on a page: every block read now,
            # and a damaged catalog is left to the writer, which moves it aside
            read_every_block(snapshot)
        except duckdb.Error as exc:
            if is_damage(exc):
                self._discard_damaged(exc)
            return False  # locked by a writer, or not a catalog: take the normal path
        counts = fetch_rows(snapshot, "load/served_counts")[0]
        files, problems = counts["files"], counts["problems"]
        self._snapshot = snapshot
        self.version = catalog_version(snapshot)
        self.last_result = IngestResult(int(files), 0, int(files), 0, int(problems), 0.0)
        return True

    def _discard_damaged(self, exc: BaseException) -> None:
        """Move the damaged catalog aside (under the writer's lock: no load is writing
        it), so that the next refresh rebuilds it from the reports."""
        try:
            duckdb.connect(self.location).close()  # the lock, taken and let go
        except duckdb.IOException as busy:
            if "lock" in str(busy).lower():
                return  # another process writes it: its own open or load finds the damage
        except duckdb.Error:
            pass  # damaged at the open too
        discard_damaged(self.location)
        _LOG.warning(damage_notice(self.location, exc, rebuilt=True))

    def stale(self) -> bool:
        """Whether the source differs from the loaded catalog (cheap: a stat of each file,
        or one listing of a bucket). A source that cannot be listed is not called stale:
        the catalog served stays, and `notice` says why it may be out of date."""
        if self._snapshot is None:
            return True
        if self.watch and self.watch.quiet():
            return False  # no file-system event since a check or load found it current
        token = self.watch.token() if self.watch else 0
        try:
            changed = directory_changed(self.cursor(), self.source)
        except SourceError as exc:
            self.notice = f"{exc}. Showing the reports as last loaded."
            return False
        if not changed:
            self.notice = None  # listed again: what is served is current
            if self.watch:
                self.watch.settle(token)
        return changed

    def _unchanged(self) -> bool:
        """Whether the directory still matches what is served (the watch's background
        renewal; False when it cannot tell). The walk is made in a child process
        (walk_in_child): in this server's thread it would take the interpreter from the
        pages being drawn meanwhile."""
        root = self.source.local_root
        walked = walk_in_child(root) if root is not None else None
        if walked is None:
            return False  # the next session's check walks itself
        try:
            return not directory_changed(self.cursor(), self.source, Listing.of_walk(walked))
        except (SourceError, CatalogError, duckdb.Error, OSError):
            return False

    def release(self) -> None:
        """Stop watching the directory: the server has let this catalog go. A watch holds
        an inotify instance (the system allows a user few of them) and threads until it
        is closed; a page still drawn from this catalog walks the directory instead."""
        watch, self.watch = self.watch, None
        if watch is not None:
            watch.close()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        if self._snapshot is None:
            raise CatalogError("the catalog has not been loaded yet")
        cursor = self._snapshot.cursor()
        if self.location != MEMORY:
            # a cursor starts in the empty in-memory database
            cursor.execute(fill_template("load/use_database", database=SNAPSHOT))
        return cursor

    def _open_writer(self) -> duckdb.DuckDBPyConnection | None:
        deadline = time.monotonic() + BUSY_RETRY_SECONDS
        while True:
            try:
                writer = open_catalog(self.location)
                self.notice = None
                return writer
            except CatalogError as exc:
                if time.monotonic() > deadline:
                    if self._snapshot is None:
                        raise
                    self.notice = f"{exc}. Showing the reports as last loaded."
                    return None
                time.sleep(0.5)

    def _take_snapshot(self, *, held: bool = False) -> duckdb.DuckDBPyConnection:
        """A private copy of the catalog file, attached read-only; pages query only it.

        The bytes are copied while this process holds the catalog (`held`: its writer,
        settled, is open) or a read-only attach holds its shared lock, so no writer
        changes them mid-copy. The attach is retried while another process writes the
        catalog (for BUSY_RETRY_SECONDS: then the lock error is raised). The copy's
        directory is removed once it is attached (the open file lives on until the
        connection goes), so nothing is left behind. Copying the file and reading it
        lazily is faster than copying every table into memory.
        """
        private = tempfile.mkdtemp(prefix="relidash-snapshot-")
        copy = os.path.join(private, "catalog.duckdb")
        try:
            con = duckdb.connect(MEMORY)
            if not held:
                _attach_waiting(con, self.location)
            try:
                shutil.copyfile(self.location, copy)
                if os.path.exists(self.location + ".wal"):
                    shutil.copyfile(self.location + ".wal", copy + ".wal")
            finally:
                if not held:
                    con.execute(fill_template("load/detach", alias=HELD))
            con.execute(fill_template("load/attach_read_only", alias=SNAPSHOT), {"path": copy})
            con.execute(fill_template("load/use_database", database=SNAPSHOT))
            return con
        finally:
            shutil.rmtree(private, ignore_errors=True)


def _attach_waiting(con: duckdb.DuckDBPyConnection, location: str) -> None:
    """Attach the catalog read-only as HELD, trying again while another process writes
    it (DuckDB's lock can only be tried), for BUSY_RETRY_SECONDS."""
    deadline = time.monotonic() + BUSY_RETRY_SECONDS
    while True:
        try:
            con.execute(fill_template("load/attach_read_only", alias=HELD), {"path": location})
            return
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise
            time.sleep(0.2)
