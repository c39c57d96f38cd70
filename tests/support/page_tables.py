"""The tables an AppTest page shows, in page order, read alike from the grid
(st.dataframe) and the static table (`widgets.data_table` draws a small one as escaped
HTML with st.html, `formatting.html_table`); and its charts' SVG (`widgets.chart`).

A static table is parsed back: each cell as the text it shows, a blank cell as None, a
number cell (right-aligned) as its number, and a link cell as its URL, so a test
compares it as it compares the grid's.
"""

from __future__ import annotations

import base64
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pandas as pd
from streamlit.testing.v1 import AppTest

STATIC_MARK = 'class="relidash-table"'


def tables(at: AppTest) -> list[pd.DataFrame]:
    """Every table of the page's main area, top to bottom."""
    return [
        node.value if node.type == "dataframe" else read_static(node.value)
        for node in _walk(at.main)
        if node.type == "dataframe" or _is_static(node)
    ]


def static_tables(at: AppTest) -> int:
    """How many of them are static tables."""
    return len(static_bodies(at))


def static_bodies(at: AppTest) -> list[str]:
    """The static tables' HTML, as the page sent it."""
    return [node.value for node in _walk(at.main) if _is_static(node)]


def charts(at: AppTest) -> list[str]:
    """The SVG of every chart in the page's main area (each an image of one), top to bottom."""
    prefix = "data:image/svg+xml;base64,"
    return [
        base64.b64decode(url.removeprefix(prefix)).decode()
        for node in _walk(at.main)
        if node.type == "image"
        for url in node.value
        if url.startswith(prefix)
    ]


def svg_texts(svg: str, role: str) -> list[str]:
    """The texts of a chart's marks of one role ("axis-label", "legend-label", ...)."""
    texts: list[str] = []
    for group in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}g"):
        if f"role-{role}" in group.get("class", "").split():
            texts += ["".join(t.itertext()) for t in group.iter("{http://www.w3.org/2000/svg}text")]
    return texts


def _is_static(node: Any) -> bool:
    return node.type == "html" and STATIC_MARK in node.value


def _walk(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def read_static(body: str) -> pd.DataFrame:
    """One static table's HTML as a frame (the index from its row headers, if any)."""
    parser = _TableParser()
    parser.feed(body)
    parser.close()
    head, *rows = parser.rows
    labelled = any(kind == "row" for row in rows for kind, _ in row[:1])
    names = [text for _, text in head]
    cells = [[value for _, value in row] for row in rows]
    if labelled:
        corner, *names = names
        labels, cells = [row[0] for row in cells], [row[1:] for row in cells]
    columns = {name: _column([row[i] for row in cells]) for i, name in enumerate(names)}
    frame = pd.DataFrame(columns, index=pd.RangeIndex(len(cells)))
    if labelled:
        frame.index = pd.Index(labels, name=corner, dtype=object)
    return frame


def _column(values: list[Any]) -> pd.Series:
    """Numbers without a gap as a numeric column; anything else as objects, a blank None."""
    if values and all(isinstance(v, int | float) for v in values):
        return pd.Series(values)
    return pd.Series(values, dtype=object)


class _TableParser(HTMLParser):
    """Rows of (kind, value) cells: kind "col" / "row" for headers, else "cell"."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[tuple[str, Any]]] = []
        self._cell: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            kind = {"td": "cell"}.get(tag, named.get("scope") or "col")
            self._cell = {"kind": kind, "text": "", "num": named.get("class") == "num"}
        elif tag == "a" and self._cell is not None:
            self._cell["href"] = named.get("href")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            cell, self._cell = self._cell, None
            self.rows[-1].append((cell["kind"], _value(cell)))


def _value(cell: dict[str, Any]) -> Any:
    if "href" in cell:
        return cell["href"]
    text = cell["text"]
    if text == "":
        return None
    if cell["num"]:
        number = float(text)
        return int(number) if number.is_integer() and "." not in text else number
    return text
