"""A page's small tables are static (st.table) with report text made inert; a large one is
the scrolling grid (widgets.data_table)."""

from __future__ import annotations

import re

import pandas as pd
from page_tables import static_tables, tables
from streamlit.testing.v1 import AppTest

from dashboard.app.widgets import STATIC_CELLS
from dashboard.render.formatting import markdown_cells

HOSTILE = "**bold** [click](javascript:alert(1)) <img src=x> $x$ :red[no]"


def test_report_text_in_a_static_table_is_inert_markdown() -> None:
    frame = pd.DataFrame(
        {
            "release": [HOSTILE, None],
            "cases": [3, 4],
            "case": ["/case?suite=s&case=a", None],
        },
        index=pd.Index(["_x_", "y"], name="slice"),
    )
    frame.columns.name = "col*"
    before = frame.copy()
    shown = markdown_cells(frame, links={"case": "open [it]"})
    cell = shown["release"].iloc[0]
    assert not re.search(r"(?<!\\)[*\[\]()<>$:]", cell), cell  # each mark escaped
    assert cell.replace("\\", "") == HOSTILE
    assert shown["release"].iloc[1] == ""  # missing: blank, not "None"
    assert list(shown["cases"]) == [3, 4]  # numbers stay numbers
    assert shown["case"].iloc[0] == r"[open \[it\]](/case?suite=s&case=a)"
    assert shown["case"].iloc[1] == ""
    assert list(shown.index) == [r"\_x\_", "y"]
    assert shown.columns.name == r"col\*"
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
