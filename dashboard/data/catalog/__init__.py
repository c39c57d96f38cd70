"""The catalog wing: where the catalog lives and how it is opened (this module), its
tables (schema.py), the named queries over it (queries.py), what a load records about a
file (problems.py) and seed catalogs for replicas (seed.py).

A catalog is a DuckDB file describing one reports directory, kept in the user's cache
directory (never inside the reports directory). It is a cache: anything wrong with it
(an old layout, a file killed mid-ingest, corruption) is answered by rebuilding it from
the reports.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import duckdb

from dashboard.data.catalog.queries import execute, fetch_rows, fill_template

# the catalog's locations are named with the rest (sources name their own catalog)
from dashboard.data.names import CATALOG_WAIT_SECONDS
from dashboard.data.names import MEMORY as MEMORY
from dashboard.data.names import CatalogError as CatalogError
from dashboard.data.names import default_catalog_path as default_catalog_path
from dashboard.data.names import resolve_catalog_path as resolve_catalog_path

# The catalog's layout: a catalog (or a seed) of another version is rebuilt from the
# reports, so this changes with any change to the tables or to what a column holds.
SCHEMA_VERSION = "12"
# A load that leaves more than this in the write-ahead log is checkpointed at once: none.
# Every open replays the log, and the replay costs most for the first few changes (even
# a one-file change's log makes every open slower than a checkpointed catalog's), while
# a checkpoint costs no more than a few such replays and the file does not grow with
# repeated ones. So the load pays once what every later command would pay again.
CHECKPOINT_LOG_BYTES = 0


class CatalogBusy(CatalogError):
    """Another process holds the catalog (DuckDB lets one process write a file)."""


WAIT_SECONDS = CATALOG_WAIT_SECONDS  # dashboard/data/names.py says why


# What DuckDB says of a damaged file when it reads the damaged block, which may be long
# after the open (a flipped byte in a table's block, a file cut short): lower case.
DAMAGE_SIGNS = (
    "corrupt database file",
    "does not match stored checksum",
    "could not read enough bytes",
    "database has been invalidated",
)
_LOG = logging.getLogger(__name__)
# The catalogs this process opened (open_catalog), to close and move aside when one of
# them turns out damaged (damaged_catalog, discard_damaged).
_OPENED: dict[str, list[weakref.ref[duckdb.DuckDBPyConnection]]] = {}


def relidash_version() -> str:
    """The installed relidash's version ("unknown" when run from a bare checkout)."""
    try:
        return metadata.version("relidash")
    except metadata.PackageNotFoundError:
        return "unknown"


def open_catalog(location: str) -> duckdb.DuckDBPyConnection:
    """A read-write connection with the current tables; rebuilds a stale or broken file.

    A file DuckDB cannot open, or whose damage shows while it is being set up (a
    checksum that fails, a file cut short: DuckDB reads a block only when a query needs
    it), is moved aside and an empty catalog started, which the load fills again.
    """
    if location != MEMORY:
        Path(location).parent.mkdir(parents=True, exist_ok=True)
    opened: duckdb.DuckDBPyConnection | None = None
    try:
        con = opened = duckdb.connect(location)
        layout_ok = layout_is_current(con)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise CatalogBusy(
                f"the catalog {location} is in use by another relidash process that is "
                "loading reports; try again when it finishes, or pass --catalog :memory:"
            ) from exc
        con, layout_ok = _discard(location, exc, opened), False
    except duckdb.Error as exc:
        con, layout_ok = _discard(location, exc, opened), False
    try:
        _set_up(con, location, layout_ok)
    except duckdb.Error as exc:
        if location == MEMORY or not is_damage(exc):
            raise
        con = _discard(location, exc, con)
        _set_up(con, location, False)
    if location != MEMORY:
        alive = [ref for ref in _OPENED.get(location, []) if ref() is not None]
        _OPENED[location] = [*alive, weakref.ref(con)]
    return con


def open_catalog_waiting(
    location: str,
    wait_seconds: float = WAIT_SECONDS,
    on_wait: Callable[[float], None] | None = None,
    stop: threading.Event | None = None,
) -> duckdb.DuckDBPyConnection:
    """open_catalog, waiting while another process holds the file, for at most
    `wait_seconds`; `on_wait(wait_seconds)` is called once, when the waiting begins.

    DuckDB's lock cannot be waited on, only tried: the open is tried again after a
    pause that grows to half a second. CatalogBusy when the time is up, or when `stop`
    is set (the caller was interrupted: its opener thread must not wait on).
    """
    deadline = time.monotonic() + wait_seconds
    pause = 0.05
    waiting = False
    while True:
        try:
            return open_catalog(location)
        except CatalogBusy as exc:
            left = deadline - time.monotonic()
            if left <= 0:
                if not waiting:
                    raise
                raise CatalogBusy(
                    f"the catalog {location} is still in use by another relidash process "
                    f"after {wait_seconds:g} s of waiting; try again when it finishes, wait "
                    "longer (--catalog-wait SECONDS), or pass --catalog :memory:"
                ) from exc
            if not waiting and on_wait is not None:
                on_wait(wait_seconds)
            waiting = True
            if stop is not None and stop.wait(min(pause, left)):
                raise
            if stop is None:
                time.sleep(min(pause, left))
            pause = min(pause * 2, 0.5)


def _set_up(con: duckdb.DuckDBPyConnection, location: str, layout_ok: bool) -> None:
    """Settings, and this version's tables (a stale layout's dropped first)."""
    if location != MEMORY:
        # the log is checkpointed when a command settles it, not at every exit, nor again
        # and again in a long load (the two statements' headers say why)
        execute(con, "catalog/disable_checkpoint_on_shutdown")
        execute(con, "catalog/set_checkpoint_threshold")
    if not layout_ok:
        if _foreign(con):
            con.close()
            raise CatalogError(
                f"{location} is a DuckDB database relidash did not write (it has tables and "
                "no relidash `meta` table); relidash leaves it as it is: pass another --catalog"
            )
        _drop_everything(con)
    execute(con, "catalog/schema")
    execute(con, "catalog/macros")
    stored = {r["key"]: r["value"] for r in fetch_rows(con, "catalog/layout_versions")}
    wanted = {"schema_version": SCHEMA_VERSION, "relidash_version": relidash_version()}
    if stored != wanted:  # written once, not at every open
        write_meta(con, wanted)


def is_damage(exc: BaseException) -> bool:
    """Whether DuckDB's error says a database file is damaged (DAMAGE_SIGNS)."""
    text = str(exc).lower()
    return isinstance(exc, duckdb.Error) and any(sign in text for sign in DAMAGE_SIGNS)


def damaged_catalog(exc: BaseException) -> str | None:
    """The catalog file this process opened that `exc` (or an error it was raised from)
    says is damaged, or None: a checksum that does not match, a file cut short.

    A file cut short is named in DuckDB's message (it may be a report file, read by the
    load: not the catalog's damage); a checksum is not, and is the catalog's, the one
    database on disk a command opens (the last opened, when there were several).
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        text = str(link).lower()
        if is_damage(link):
            opened = [location for location, refs in _OPENED.items() if refs]
            if "could not read enough bytes" in text:
                named = [loc for loc in opened if f'"{loc.lower()}' in text]
                if named:
                    return named[-1]
            elif opened:
                return opened[-1]
        link = link.__cause__ or link.__context__
    return None


def read_every_block(con: duckdb.DuckDBPyConnection) -> None:
    """Read every row of every table, so that DuckDB checks each block's checksum now
    (it checks a block only when a query reads it): raises what a damaged block raises.
    For a catalog adopted as it is (a served one, dashboard/data/load/snapshot.py), whose
    damage would otherwise show only on a page."""
    for name in _table_names(con):
        con.execute(fill_template("catalog/hash_every_row", table=name)).fetchall()


def discard_damaged(location: str) -> str:
    """Close this process's connections to the damaged catalog and move its file aside
    (`<file>.broken`, kept for a look); the next open_catalog starts an empty one, which a
    load fills from the reports. The moved file's name."""
    for ref in _OPENED.pop(location, []):
        con = ref()
        if con is not None:
            with contextlib.suppress(duckdb.Error):
                con.close()
    _move_aside(location)
    return location + ".broken"


def meta_values(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Every key of `meta`: one statement where a load would ask for several."""
    return {str(r["key"]): str(r["value"]) for r in fetch_rows(con, "catalog/meta_values")}


def write_meta(con: duckdb.DuckDBPyConnection, values: Mapping[str, str]) -> None:
    """Set these keys of `meta`, in one statement: each upsert has a cost of its own that
    grows with the catalog, and a few rows cost no more than one."""
    if values:
        execute(con, "catalog/write_meta", keys=list(values), values=list(values.values()))


def settle_catalog(con: duckdb.DuckDBPyConnection, *, full: bool = False) -> None:
    """Checkpoint after a load that left more than CHECKPOINT_LOG_BYTES in the log: every
    later start would replay it.

    With `full` (a catalog this command built from nothing) any log is checkpointed, so
    the file alone holds the catalog: what a replica copies as its seed
    (dashboard/data/catalog/seed.py).
    """
    logged = logged_bytes(con)
    if logged > CHECKPOINT_LOG_BYTES or (full and logged > 0):
        con.checkpoint()


def logged_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The size of the catalog's write-ahead log (0 for none, or a catalog in memory)."""
    location = fetch_rows(con, "catalog/database_path")[0]["path"]
    if location is None:  # in memory
        return 0
    try:
        return os.stat(location + ".wal").st_size
    except OSError:
        return 0


# A log at least this large is checkpointed beside the command's reading (SettleAhead):
# a cold load leaves a large log, and its checkpoint is worth overlapping with the
# summary's entries. A smaller log's checkpoint is not worth the second one that
# the writes held back meanwhile then need.
SETTLE_AHEAD_BYTES = 4 * 1024 * 1024


class SettleAhead:
    """A large log checkpointed on a cursor of its own, in a thread, while the caller
    goes on reading: DuckDB runs reads beside a checkpoint and makes writes wait for it,
    so the caller holds its writes back while `running()`, and then settles the little
    they logged (settle_catalog). A checkpoint that fails leaves its log to that settle."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.thread: threading.Thread | None = None
        if logged_bytes(con) >= SETTLE_AHEAD_BYTES:
            self.thread = threading.Thread(
                target=self._checkpoint, args=(con.cursor(),), name="relidash-checkpoint"
            )
            self.thread.start()

    @staticmethod
    def _checkpoint(cursor: duckdb.DuckDBPyConnection) -> None:
        try:
            cursor.checkpoint()  # on this cursor, beside the caller's reads
        except duckdb.Error:
            pass  # the log stays, and the settle that follows the command checkpoints it
        finally:
            cursor.close()

    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def wait(self) -> None:
        if self.thread is not None:
            self.thread.join()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """The statements inside, committed together (one sync of the log) or not at all."""
    con.begin()
    try:
        yield
    except BaseException:
        roll_back(con)
        raise
    con.commit()


def roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """End whatever transaction is open (none may be: the error can come between two)."""
    with contextlib.suppress(duckdb.Error):
        con.rollback()


def layout_is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the catalog's tables are this version's and no load was killed midway
    (an empty database counts: the layout is created on it)."""
    try:
        rows = meta_values(con)
    except duckdb.CatalogException:  # no meta table: only an empty database will do
        return bool(fetch_rows(con, "catalog/table_count")[0]["n"] == 0)
    # An ingest that was killed leaves 'ingest_complete' at '0': rebuild rather than show it.
    return (
        rows.get("schema_version") == SCHEMA_VERSION
        and rows.get("relidash_version", relidash_version()) == relidash_version()
        and rows.get("ingest_complete", "1") == "1"
    )


def _foreign(con: duckdb.DuckDBPyConnection) -> bool:
    """Tables, and none of them relidash's `meta`: somebody else's database, never emptied
    (a stale or interrupted catalog of relidash's own is rebuilt instead)."""
    names = _table_names(con)
    return bool(names) and "meta" not in names


def _drop_everything(con: duckdb.DuckDBPyConnection) -> None:
    for name in _table_names(con):
        con.execute(fill_template("catalog/drop_table", table=name))


def _table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [str(r["table_name"]) for r in fetch_rows(con, "catalog/table_names")]


def _discard(
    location: str, why: BaseException, opened: duckdb.DuckDBPyConnection | None
) -> duckdb.DuckDBPyConnection:
    """Move an unreadable catalog file out of the way and start an empty one (said on
    stderr by a command, in the log by a server). The connection `opened` to it is
    closed first: while one is open, duckdb.connect hands back the same database, the
    file moved aside."""
    if opened is not None:
        with contextlib.suppress(duckdb.Error):
            opened.close()
    if location != MEMORY and Path(location).exists():
        _LOG.warning(damage_notice(location, why, rebuilt=True))
    _move_aside(location)
    return duckdb.connect(location)


def damage_notice(location: str, why: BaseException, *, rebuilt: bool) -> str:
    """What a user is told of a damaged catalog moved aside."""
    reason = (str(why).strip().splitlines() or [type(why).__name__])[0][:200]
    done = (
        "rebuilding it from the reports"
        if rebuilt
        else "run the command again to rebuild it from the reports"
    )
    return (
        f"relidash: the catalog {location} is damaged ({reason}); moved aside to "
        f"{location}.broken, {done}"
    )


def _move_aside(location: str) -> None:
    for suffix in ("", ".wal"):
        stale = Path(location + suffix)
        if stale.exists():
            stale.replace(stale.with_name(stale.name + ".broken"))
