"""A page's small tables are static (escaped HTML) with report text inert; a large one is
the scrolling grid (widgets.data_table)."""

from __future__ import annotations

import pandas as pd
from page_tables import read_static, static_tables, tables
from streamlit.testing.v1 import AppTest

from dashboard.app.widgets import STATIC_CELLS
from dashboard.render.formatting import html_table

HOSTILE = "**bold** [click](javascript:alert(1)) <img src=x onerror=alert(1)> & </td></table>"


def test_report_text_in_a_static_table_is_escaped_html() -> None:
    frame = pd.DataFrame(
        {
            "release": [HOSTILE, None],
            "cases": pd.array([3, None], dtype="Int64"),
            "ci_low": [0.5225806451612903, 0.5],
            "case": ["/case?suite=s&case=a", "javascript:alert(2)"],
        },
        index=pd.Index(["<b>x</b>", "y"], name="slice"),
    )
    before = frame.copy()
    body = html_table(frame, links={"case": "open <it>"}, index=True)
    assert "<img" not in body and "<b>" not in body  # report text is never markup
    assert body.count("<table") == 1 and body.count("</table>") == 1  # not closed early
    assert '<a href="/case?suite=s&amp;case=a">open &lt;it&gt;</a>' in body
    assert '<a href="javascript' not in body  # a URL that is not the app's or the web's: text
    shown = read_static(body)
    assert list(shown["release"]) == [HOSTILE, None]  # as written; missing: blank
    assert list(shown["cases"]) == [3, None]  # numbers stay numbers
    assert list(shown["ci_low"]) == [0.5226, 0.5]  # a float shown with 4 decimals
    assert '<td class="num">0.5000</td>' in body
    assert list(shown["case"]) == ["/case?suite=s&case=a", "javascript:alert(2)"]
    assert list(shown.index) == ["<b>x</b>", "y"] and shown.index.name == "slice"
    pd.testing.assert_frame_equal(frame, before)  # the caller's frame is not changed


APP = """
import pandas as pd
import streamlit as st
from dashboard.app.widgets import data_table
rows = int(st.query_params.get("rows", "3"))
data_table(
    pd.DataFrame({"release": [f"v{i}" for i in range(rows)], "case": ["/case?c=1"] * rows}),
    links={"case": "open"},
)
"""


def test_a_small_table_is_static_and_a_large_one_the_grid() -> None:
    small = AppTest.from_string(APP).run()
    assert not small.exception
    assert static_tables(small) == 1 and not small.dataframe
    (shown,) = tables(small)
    assert list(shown["release"]) == ["v0", "v1", "v2"]
    assert list(shown["case"]) == ["/case?c=1"] * 3

    large = AppTest.from_string(APP)
    large.query_params["rows"] = str(STATIC_CELLS // 2 + 1)  # two columns: past the limit
    large.run()
    assert not large.exception
    assert static_tables(large) == 0 and len(large.dataframe) == 1
    assert '"case"' in large.dataframe[0].proto.columns  # its links are a LinkColumn
    assert len(large.dataframe[0].value) == STATIC_CELLS // 2 + 1
