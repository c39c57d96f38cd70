"""Where a named statement's file is (dashboard/data/catalog/queries.py): a wing's under
queries/, a harness's in its own package, and nothing else a name could point at; and what
fill_template lets into a template (identifiers, never a value)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dashboard.data.catalog import queries
from dashboard.data.catalog.queries import fill_template, load_query, query_path

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("catalog/schema", "queries/catalog/schema.sql"),
        ("read/report_overview", "queries/read/report_overview.sql"),
        ("load/walk_problems", "queries/load/walk_problems.sql"),
        ("formats/harbor/case_trials", "dashboard/data/formats/harbor/queries/case_trials.sql"),
        (
            "formats/multivon/stage_reports",
            "dashboard/data/formats/multivon/queries/stage_reports.sql",
        ),
    ],
)
def test_a_name_says_where_its_file_is(name: str, path: str) -> None:
    assert query_path(name) == ROOT / path


@pytest.mark.parametrize(
    "name",
    ["../pyproject", "catalog/../../x", "/etc/passwd", "catalog/schema.sql", "Catalog/schema",
     "catalog//schema", "", "formats/harbor", "formats"],
)  # fmt: skip
def test_a_name_points_nowhere_else(name: str) -> None:
    with pytest.raises(KeyError):
        query_path(name)


def test_a_missing_statement_is_named() -> None:
    with pytest.raises(KeyError, match="no_such_statement"):
        load_query("catalog/no_such_statement")


@pytest.fixture
def template(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A queries/ folder of one's own: test/template.sql, written by the test."""
    monkeypatch.setattr(queries, "_queries_dir", lambda: tmp_path)
    queries.load_query.cache_clear()
    (tmp_path / "test").mkdir()
    yield tmp_path / "test" / "template.sql"
    queries.load_query.cache_clear()


def test_a_template_takes_identifiers(template: Path) -> None:
    template.write_text(
        "DROP TABLE \"{gone}\";\nSELECT format('{}', a) FROM {table}, "
        "{parts: UNION ALL BY NAME SELECT * FROM } WHERE a = $value"
    )
    filled = fill_template(
        "test/template", gone='odd "name"', table="stage.part_0", parts=("a", "b", "c")
    )
    assert filled == (
        'DROP TABLE "odd ""name""";\nSELECT format(\'{}\', a) FROM stage.part_0, '
        "a UNION ALL BY NAME SELECT * FROM b UNION ALL BY NAME SELECT * FROM c WHERE a = $value"
    )


@pytest.mark.parametrize(
    "table", ["x; DROP TABLE reports", "x --", "'x'", '"x"', "x y", "", "a.b.c.d", "1x"]
)
def test_a_bare_placeholder_takes_only_a_plain_identifier(template: Path, table: str) -> None:
    template.write_text("SELECT * FROM {table}")
    with pytest.raises(ValueError):
        fill_template("test/template", table=table)


def test_every_placeholder_is_filled_and_nothing_else_given(template: Path) -> None:
    template.write_text("SELECT * FROM {table} JOIN {other}")
    with pytest.raises(KeyError, match="other"):
        fill_template("test/template", table="a")
    with pytest.raises(KeyError, match="extra"):
        fill_template("test/template", table="a", other="b", extra="c")
    with pytest.raises(ValueError):
        fill_template("test/template", table=("a", "b"), other="c")  # no separator: one name


def test_a_name_never_leaves_its_quotes_through_a_comment(template: Path) -> None:
    """A name read from the catalog may hold a line break; in a comment it would end the
    comment and run as SQL. A template's comments are whole lines, left out."""
    template.write_text('-- drops "{table}"\nDROP TABLE "{table}"\n')
    assert fill_template("test/template", table="x\nDELETE FROM reports") == (
        'DROP TABLE "x\nDELETE FROM reports"'
    )
    template.write_text('DROP TABLE "{table}" -- a trailing comment\n')
    queries.load_query.cache_clear()
    with pytest.raises(ValueError, match="comment"):
        fill_template("test/template", table="x")


def test_a_template_takes_in_a_statement_as_it_is(template: Path) -> None:
    """A partial is taken in as it is: a placeholder-like text inside it is not filled."""
    (template.parent / "rows.sql").write_text("-- the rows\nSELECT '{table}' AS a")
    template.write_text("-- header\nCREATE TABLE {table} AS\n{>test/rows}")
    assert fill_template("test/template", table="t") == (
        "CREATE TABLE t AS\n-- the rows\nSELECT '{table}' AS a"
    )
