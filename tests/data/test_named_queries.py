"""Where a named statement's file is (dashboard/data/catalog/queries.py): a wing's under
queries/, a harness's in its own package, and nothing else a name could point at."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.data.catalog.queries import load_query, query_path

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
