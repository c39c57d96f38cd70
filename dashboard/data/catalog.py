"""Where the catalog lives and how it is opened.

A catalog is a DuckDB file describing one reports directory, kept in the user's cache
directory (never inside the reports directory). It is a cache: anything wrong with it
(an old layout, a file killed mid-ingest, corruption) is answered by rebuilding it from
the reports.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import duckdb

from dashboard.data.queries import execute

# The catalog's layout: a catalog (or a seed) of another version is rebuilt from the
# reports, so this changes with any change to the tables or to what a column holds.
SCHEMA_VERSION = "12"
MEMORY = ":memory:"
# A load that leaves more than this in the write-ahead log is checkpointed at once: none.
# Every open replays the log, and the replay costs most for the first few changes (even
# a one-file change's log makes every open slower than a checkpointed catalog's), while
# a checkpoint costs no more than a few such replays and the file does not grow with
# repeated ones. So the load pays once what every later command would pay again.
CHECKPOINT_LOG_BYTES = 0


class CatalogError(Exception):
    """The catalog cannot be used as asked (a usage problem, not a data problem)."""


def relidash_version() -> str:
    """The installed relidash's version ("unknown" when run from a bare checkout)."""
    try:
        return metadata.version("relidash")
    except metadata.PackageNotFoundError:
        return "unknown"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relidash"


def default_catalog_path(reports_dir: Path) -> Path:
    """One catalog per reports directory, named after it and a hash of its absolute path."""
    resolved = reports_dir.resolve()
    key = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    return cache_root() / f"{resolved.name or 'root'}-{key}.duckdb"


def resolve_catalog_path(reports_dir: Path, catalog: str | None) -> str:
    """The catalog location to use: `catalog` if given, else the default for the directory."""
    if catalog == MEMORY:
        return MEMORY
    path = Path(catalog) if catalog else default_catalog_path(reports_dir)
    resolved = path.resolve()
    if resolved.is_relative_to(reports_dir.resolve()):
        raise CatalogError(
            f"the catalog {path} would be inside the reports directory {reports_dir}; "
            "relidash never writes there. Choose another --catalog path."
        )
    return str(resolved)


def open_catalog(location: str) -> duckdb.DuckDBPyConnection:
    """A read-write connection with the current tables; rebuilds a stale or broken file."""
    if location != MEMORY:
        Path(location).parent.mkdir(parents=True, exist_ok=True)
    try:
        con = duckdb.connect(location)
        layout_ok = layout_is_current(con)
    except duckdb.IOException as exc:
        if "lock" in str(exc).lower():
            raise CatalogError(
                f"the catalog {location} is in use by another relidash process that is "
                "loading reports; try again when it finishes, or pass --catalog :memory:"
            ) from exc
        con, layout_ok = _discard(location), False
    except duckdb.Error:
        con, layout_ok = _discard(location), False
    if location != MEMORY:
        # Small changes stay in the write-ahead log until DuckDB's own threshold (or
        # settle_catalog) checkpoints them: saving at every exit rewrites the large
        # tables' last row groups, most of a one-changed-file summary's time.
        con.execute("PRAGMA disable_checkpoint_on_shutdown")
        # Nor does a long load checkpoint every 16 MB of log (DuckDB's default): each one
        # rewrites the tables' growing last row groups, and the freed blocks stay in the
        # file (a large share of a large catalog). Every command that writes settles
        # the log at its end; a load's log up to this size is held in memory meanwhile.
        con.execute("SET checkpoint_threshold = '256MB'")
    if not layout_ok:
        if _foreign(con):
            con.close()
            raise CatalogError(
                f"{location} is a DuckDB database relidash did not write (it has tables and "
                "no relidash `meta` table); relidash leaves it as it is: pass another --catalog"
            )
        _drop_everything(con)
    execute(con, "catalog_schema")
    execute(con, "catalog_macros")
    stored = con.execute(
        "SELECT key, value FROM meta WHERE key IN ('schema_version', 'relidash_version')"
    ).fetchall()
    wanted = {"schema_version": SCHEMA_VERSION, "relidash_version": relidash_version()}
    if dict(stored) != wanted:  # written once, not at every open
        write_meta(con, wanted)
    return con


def meta_values(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Every key of `meta`: one statement where a load would ask for several."""
    rows = con.execute("SELECT key, value FROM meta WHERE value IS NOT NULL").fetchall()
    return {str(key): str(value) for key, value in rows}


def write_meta(con: duckdb.DuckDBPyConnection, values: Mapping[str, str]) -> None:
    """Set these keys of `meta`, in one statement: each upsert has a cost of its own that
    grows with the catalog, and a few rows cost no more than one."""
    if values:
        con.execute(
            "INSERT OR REPLACE INTO meta SELECT unnest($k), unnest($v)",
            {"k": list(values), "v": list(values.values())},
        )


def settle_catalog(con: duckdb.DuckDBPyConnection, *, full: bool = False) -> None:
    """Checkpoint after a load that left more than CHECKPOINT_LOG_BYTES in the log: every
    later start would replay it.

    With `full` (a catalog this command built from nothing) any log is checkpointed, so
    the file alone holds the catalog: what a replica copies as its seed
    (dashboard/data/seed.py).
    """
    logged = logged_bytes(con)
    if logged > CHECKPOINT_LOG_BYTES or (full and logged > 0):
        con.execute("CHECKPOINT")


def logged_bytes(con: duckdb.DuckDBPyConnection) -> int:
    """The size of the catalog's write-ahead log (0 for none, or a catalog in memory)."""
    (location,) = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchall()[0]
    if location is None:  # in memory
        return 0
    try:
        return os.stat(location + ".wal").st_size
    except OSError:
        return 0


# A log at least this large is checkpointed beside the command's reading (SettleAhead):
# a cold load's log is tens of megabytes, and its checkpoint is worth overlapping with
# the summary's entries. A smaller log's checkpoint is not worth the second one that
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
            cursor.execute("CHECKPOINT")
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
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        roll_back(con)
        raise
    con.execute("COMMIT")


def roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """End whatever transaction is open (none may be: the error can come between two)."""
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def layout_is_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the catalog's tables are this version's and no load was killed midway
    (an empty database counts: the layout is created on it)."""
    try:
        rows = meta_values(con)
    except duckdb.CatalogException:  # no meta table: only an empty database will do
        return bool(con.execute("SELECT count(*) FROM duckdb_tables()").fetchall()[0][0] == 0)
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
        con.execute(f'DROP TABLE "{name}"')  # names read from the catalog itself


def _table_names(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        name
        for (name,) in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE NOT temporary"
        ).fetchall()
    ]


def _discard(location: str) -> duckdb.DuckDBPyConnection:
    """Move an unreadable catalog file out of the way and start an empty one."""
    for suffix in ("", ".wal"):
        stale = Path(location + suffix)
        if stale.exists():
            stale.replace(stale.with_name(stale.name + ".broken"))
    return duckdb.connect(location)
