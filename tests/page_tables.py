"""The tables an AppTest page shows, in page order, read alike from the grid
(st.dataframe) and the static table (st.table, `widgets.data_table` for a small one).

A static table's text cells, headers and index labels are Markdown made inert
(`formatting.markdown_cells`): they are read back as the text they show, a blank cell as
None, and a link cell as its URL, so a test compares them as it compares the grid's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pandas as pd
from pandas.api.types import is_bool_dtype, is_numeric_dtype
from streamlit.testing.v1 import AppTest

_ESCAPE = re.compile(r"\\(.)")
_LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\((?P<url>[^)]*)\)")


def tables(at: AppTest) -> list[pd.DataFrame]:
    """Every table of the page's main area, top to bottom."""
    return [_read(node) for node in _walk(at.main) if node.type in ("dataframe", "table")]


def static_tables(at: AppTest) -> int:
    """How many of them are static tables."""
    return sum(node.type == "table" for node in _walk(at.main))


def _walk(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def _read(node: Any) -> pd.DataFrame:
    frame: pd.DataFrame = node.value
    if node.type == "dataframe":
        return frame
    shown = frame.copy()
    for name in shown.columns:
        if _texts(shown[name]):
            shown[name] = pd.Series(
                [_text(v) for v in shown[name]], index=shown.index, dtype=object
            )
    shown.columns = pd.Index([_text(c) for c in shown.columns], name=_text(shown.columns.name))
    if _texts(shown.index):
        shown.index = pd.Index([_text(v) for v in shown.index], name=_text(shown.index.name))
    return shown


def _texts(values: pd.Series | pd.Index) -> bool:
    return not (is_numeric_dtype(values) or is_bool_dtype(values))


def _text(cell: Any) -> Any:
    if not isinstance(cell, str):
        return cell
    if cell == "":
        return None
    link = _LINK.fullmatch(cell)
    if link:
        return link["url"]
    return _ESCAPE.sub(r"\1", cell)
