"""A listing part in SQL (queries/load/racy_parts.sql, known_files_*.sql) is the part
dashboard/data/sources/walk.py's part_of gives in Python: the top-level directory of a
path, '' for a file at the top. A load compares the two when it decides which parts to
look at again."""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.load import freshness
from dashboard.data.sources.walk import part_of

PATHS = [
    "top.json",
    "other top.json",
    "suite/a.json",
    "suite/deeper/b.json",
    "suite2/c.json",
    "suite.json/d.json",  # a directory named like a report
    "s/e.json",
    "sui/f.json",  # a prefix of another part's name
    "ünïcode dir/g.json",
]


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    con = open_catalog(MEMORY)
    con.execute(
        "INSERT INTO files SELECT unnest($paths), 1, 2, 'digest', NULL, true, NULL",
        {"paths": PATHS},
    )
    yield con
    con.close()


def test_racy_parts_are_the_parts_part_of_gives(con: duckdb.DuckDBPyConnection) -> None:
    assert {r["part"] for r in fetch_rows(con, "load/racy_parts")} == {part_of(p) for p in PATHS}


@pytest.mark.parametrize("few", [freshness.FEW_PARTS, 0])  # one by one, or by part name
@pytest.mark.parametrize(
    "parts", [{""}, {"suite"}, {"sui"}, {"suite", "", "suite.json"}, {"ünïcode dir", "s"}]
)
def test_known_files_of_parts_are_the_files_in_them(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, few: int, parts: set[str]
) -> None:
    monkeypatch.setattr(freshness, "FEW_PARTS", few)
    known = freshness.known_files(con, parts)
    assert set(known) == {p for p in PATHS if part_of(p) in parts}
    assert set(known.values()) == {(1, 2, True, "")}
