"""Named SQL statements from `queries/`, run with bound parameters.

Each `.sql` file holds one statement; this module finds it, binds `$name` parameters and
returns a DataFrame. It never formats a value into SQL text.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import pandas as pd


def _queries_dir() -> Path:
    here = Path(__file__).resolve()
    source_tree = here.parents[3] / "queries"
    return source_tree if source_tree.is_dir() else here.parents[2] / "_queries"


@cache
def load_query(name: str) -> str:
    """The text of `queries/<name>.sql`."""
    path = _queries_dir() / f"{name}.sql"
    if not path.is_file():
        raise KeyError(f"no query named {name!r} in {path.parent}")
    return path.read_text(encoding="utf-8")


def execute(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> None:
    """Run one named statement for its effect."""
    con.execute(load_query(name), params or None)


def run_query(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> pd.DataFrame:
    """Run one named query and return its rows."""
    return con.execute(load_query(name), params or None).df()


def fetch_rows(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> list[dict[str, Any]]:
    """Run one named query and return its rows as dicts (no DataFrame: for hot paths)."""
    cursor = con.execute(load_query(name), params or None)
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def iter_row_batches(
    con: duckdb.DuckDBPyConnection, name: str, size: int, **params: Any
) -> Iterator[list[dict[str, Any]]]:
    """fetch_rows a batch of `size` rows at a time: memory holds one batch, not the result."""
    cursor = con.cursor()  # its own cursor: the caller may run queries between batches
    cursor.execute(load_query(name), params or None)
    columns = [d[0] for d in cursor.description or []]
    while rows := cursor.fetchmany(size):
        yield [dict(zip(columns, row, strict=True)) for row in rows]


def reader_buffer_bytes(largest: int, limit: int) -> int:
    """`read_json`'s maximum_object_size for files of at most `largest` bytes.

    DuckDB sizes its read buffers by it: the 256 MiB limit itself would cost a load much
    CPU time (most of it in the kernel, mapping memory). Twice the largest file leaves room
    for a file that grew since it was measured; never above the size limit.
    """
    return min(limit, 2 * largest + (1 << 20)) + 1  # and a MiB
