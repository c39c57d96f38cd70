"""Named SQL statements, run with bound parameters.

A statement's name says where its file is: `catalog/meta_values` is
`queries/catalog/meta_values.sql` (the wings: catalog, load, read), and
`formats/<harness>/<name>` is `dashboard/data/formats/<harness>/queries/<name>.sql`, in the
harness's own package, so that adding a harness is adding one folder. Each file holds one
statement; this module finds it, binds `$name` parameters and returns its rows. It never
formats a value into SQL text: values are always bound.

A few statements name a table, view or database that a parameter cannot stand for (the
tables a batch is staged in, a catalog's own tables read back by name, an attached
database's alias). Their files are templates, and fill_template is the one function that
fills them, with identifiers only:

- `{name}` takes an identifier from an allow-list in code (a constant such as
  REPORT_TABLES or the staging tables), optionally qualified (`relidash_stage.part_0`);
  anything but a plain identifier is refused;
- `"{name}"` (inside double quotes) takes any name, such as one read from the catalog
  itself, quoted as an identifier (its double quotes doubled);
- `{name:SEPARATOR}` takes one or more allow-listed identifiers, written joined by
  SEPARATOR (the staged tables of a batch, read as one view).

A template may also take in another named statement, as it is: `{>formats/multivon/
stage_cases}` (a partial, as Mustache's `{{> name}}`), for one query stored into tables of
two kinds. What it takes in is decided by the template's file, never by a caller.

A template's comments are whole lines (its header), left out of the filled text.

Values stay bound parameters in a template too (`ATTACH $path AS {alias}`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import pandas as pd

# a name is lower-case words joined by `/`: never `..`, an absolute path or a suffix
_NAME = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+)*")


def _queries_dir() -> Path:
    here = Path(__file__).resolve()
    source_tree = here.parents[3] / "queries"
    return source_tree if source_tree.is_dir() else here.parents[2] / "_queries"


def _formats_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "formats"


def query_path(name: str) -> Path:
    """The file of the statement `name` (which may not exist): see the module's docstring."""
    if not _NAME.fullmatch(name):
        raise KeyError(f"{name!r} is not a query name (lower-case words joined by '/')")
    wing, _, rest = name.partition("/")
    if wing == "formats":
        harness, _, rest = rest.partition("/")
        if not rest:
            raise KeyError(f"{name!r} names no statement: formats/<harness>/<name>")
        return _formats_dir() / harness / "queries" / f"{rest}.sql"
    return _queries_dir() / f"{name}.sql"


def statement_file(name: str) -> Path:
    """The file the statement `name` is read from; KeyError when there is none."""
    path = query_path(name)
    if not path.is_file():
        raise KeyError(f"no query named {name!r} ({path} does not exist)")
    return path


@cache
def load_query(name: str) -> str:
    """The text of the statement `name` (`catalog/meta_values`, `formats/harbor/case_trials`)."""
    return statement_file(name).read_text(encoding="utf-8")


# `"{name}"`, or `{name}` / `{name:SEPARATOR}` (see the module's docstring)
_PLACEHOLDER = re.compile(
    r'"\{([a-z_]+)\}"|\{([a-z_]+)(?::([^{}]+))?\}|\{>([a-z0-9_]+(?:/[a-z0-9_]+)*)\}'
)
# an identifier written as it is: letters, digits and underscores, maybe qualified
_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*){0,2}")


def fill_template(name: str, **identifiers: str | Sequence[str]) -> str:
    """The template `name` with every placeholder filled by the identifiers given for it
    (see the module's docstring). ValueError for an identifier a placeholder does not take,
    KeyError for a placeholder left unfilled or an identifier no placeholder takes."""
    # A name may hold a line break: filled into a comment, it would end the comment and be
    # read as SQL. So a template's comments are whole lines, dropped before it is filled.
    lines = [line for line in load_query(name).splitlines() if not line.lstrip().startswith("--")]
    if any("--" in line for line in lines):
        raise ValueError(f"the template {name!r} has a comment after SQL: comments are whole lines")
    text = "\n".join(lines)
    used: set[str] = set()

    def fill(match: re.Match[str]) -> str:
        quoted, plain, separator, partial = match.groups()
        if partial:
            return load_query(partial)  # as it is: no identifier goes into it
        key = quoted or plain
        if key not in identifiers:
            raise KeyError(f"the template {name!r} needs {{{key}}}")
        used.add(key)
        value = identifiers[key]
        if quoted:
            if not isinstance(value, str):
                raise ValueError(f"{{{key}}} of {name!r} takes one name")
            return '"' + value.replace('"', '""') + '"'
        names = [value] if isinstance(value, str) else list(value)
        if not names or (separator is None and len(names) != 1):
            raise ValueError(
                f"{{{key}}} of {name!r} takes {'one' if separator is None else 'a'} name"
            )
        for identifier in names:
            if not _PLAIN_IDENTIFIER.fullmatch(identifier):
                raise ValueError(f"{identifier!r} is not an allow-listed identifier for {name!r}")
        return (separator or "").join(names)

    filled = _PLACEHOLDER.sub(fill, text)
    if unused := identifiers.keys() - used:
        raise KeyError(f"the template {name!r} has no placeholder {sorted(unused)}")
    return filled


def execute(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> None:
    """Run one named statement for its effect."""
    con.execute(load_query(name), params or None)


def execute_many(con: duckdb.DuckDBPyConnection, name: str, rows: Sequence[Sequence[Any]]) -> None:
    """Run one named statement once for each row of positional parameters (`?`)."""
    con.executemany(load_query(name), rows)


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

    DuckDB sizes its read buffers by it, and buffers as large as the size limit would
    have a load spend its time mapping memory in the kernel. Twice the largest file
    leaves room for a file that grew since it was measured; never above the size limit.
    """
    return min(limit, 2 * largest + (1 << 20)) + 1  # and a MiB
