"""The summary's entries written partly by DuckDB (summary_json.report_texts, metric_cells.sql)
are the text json.dumps writes for the same entries: DuckDB writes a float as Python's
repr does and quotes text without control characters as json.dumps does; a report it
cannot write exactly falls back to json.dumps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import summaries
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.analysis import summary
from dashboard.analysis.loading import refresh_catalog
from dashboard.data.catalog import open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.render import summary_json

ROOT = Path(__file__).resolve().parents[2]

# what a DOUBLE can hold that a summary writes (NaN and infinities never reach the text)
FINITE = st.floats(allow_nan=False, allow_infinity=False)
# the summary's numbers: estimates and bounds in [0, 1], many of them tiny
ESTIMATES = st.floats(0, 1) | st.integers(1, 10**6).map(lambda d: 1 / d) | st.just(-0.0)


@pytest.fixture(scope="module")
def duck() -> Any:
    return duckdb.connect()


@settings(max_examples=2000, deadline=None)
@given(value=FINITE | ESTIMATES)
def test_duckdb_writes_a_float_as_python_repr_does(duck: Any, value: float) -> None:
    text = duck.execute("SELECT CAST($v::DOUBLE AS VARCHAR)", {"v": value}).fetchall()[0][0]
    assert text == repr(value) == json.dumps(value)


def test_floats_at_the_notation_boundaries(duck: Any) -> None:
    values = [
        0.0, -0.0, 1.0, 0.1, 1e-4, 9.999999999999999e-05, 1e-05, 1e15, 1e16,
        123456789012345678.0, 5e-324, 1.7976931348623157e308, 2 / 3,
    ]  # fmt: skip
    got = duck.execute("SELECT [CAST(v AS VARCHAR) FOR v IN $v::DOUBLE[]]", {"v": values})
    assert got.fetchall()[0][0] == [repr(v) for v in values]


@settings(max_examples=500, deadline=None)
@given(text=st.text(st.characters(min_codepoint=0x20, exclude_categories=("Cs",))))
def test_duckdb_quotes_text_without_control_characters_as_json_dumps(duck: Any, text: str) -> None:
    quoted = duck.execute("SELECT CAST(to_json($t::VARCHAR) AS VARCHAR)", {"t": text})
    assert quoted.fetchall()[0][0] == json.dumps(text, ensure_ascii=False)


def entries_both_ways(con: Any) -> tuple[list[str], list[str]]:
    heads = summaries.heads(fetch_rows(con, "read/report_overview", suites=None, release=None))
    dumped = [
        json.dumps(summary_json.report_record(r), ensure_ascii=False)
        for r in summary.summary_rows(con, heads)
    ]
    return summary_json.report_texts(con, heads), dumped


@pytest.mark.parametrize("reports", ["sample_reports", "tests/fixtures"])
def test_entries_equal_json_dumps_of_the_records(reports: str) -> None:
    """multivon-eval reports of every format and Inspect logs (with UNKNOWN reasons in
    their own wording, lottery cases and non-ASCII text)."""
    con = open_catalog(":memory:")
    refresh_catalog(con, ROOT / reports)
    written, dumped = entries_both_ways(con)
    assert len(written) > 5
    assert written == dumped


def test_a_report_duckdb_cannot_write_exactly_is_dumped_by_python() -> None:
    con = open_catalog(":memory:")
    refresh_catalog(con, ROOT / "sample_reports")
    first, second = (r for (r,) in con.execute("SELECT report_id FROM reports LIMIT 2").fetchall())
    # json.dumps writes these as \u001f and Infinity; DuckDB would write \u001F and inf
    con.execute(
        "UPDATE metrics SET unknown_reason = 'held' || chr(31) || 'back' "
        "WHERE report_id = $r AND k = 2",
        {"r": first},
    )
    con.execute("UPDATE metrics SET ci_high = 'inf' WHERE report_id = $r AND k = 1", {"r": second})
    # a lottery case's input with an escape character: json.dumps writes \u001b, DuckDB
    # \u001B
    (third, case_idx), *_ = con.execute(
        "SELECT report_id, case_idx FROM lottery WHERE report_id NOT IN ($a, $b) LIMIT 1",
        {"a": first, "b": second},
    ).fetchall()
    con.execute(
        "UPDATE cases SET input = 'press' || chr(27) || 'escape' "
        "WHERE report_id = $r AND case_idx = $c",
        {"r": third, "c": case_idx},
    )
    written, dumped = entries_both_ways(con)
    assert written == dumped
    texts = "".join(written)
    assert "held\\u001fback" in texts and "Infinity" in texts
    assert "press\\u001bescape" in texts
