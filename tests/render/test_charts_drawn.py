"""Charts are drawn on the server as SVG (charts.svg) and shown as images with alt text
(widgets.chart); a renderer failure costs the chart, never the page."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import streamlit as st
from page_tables import charts, svg_texts
from streamlit.testing.v1 import AppTest

from dashboard.render.charts import svg

SPEC = {
    "data": {"values": [{"release": "v1", "value": 0.5}, {"release": "v2", "value": 0.75}]},
    "mark": "line",
    "encoding": {
        "x": {"field": "release", "type": "nominal"},
        "y": {"field": "value", "type": "quantitative"},
    },
}

APP = """
import streamlit as st
from dashboard.app.widgets import chart
spec = {
    "data": {"values": [{"release": st.query_params.get("release", "v1"), "value": 0.5}]},
    "mark": "point",
    "encoding": {"x": {"field": "release", "type": "nominal"},
                 "y": {"field": "value", "type": "quantitative"}},
}
chart(spec, description="the chart's alt text", stretch=True)
st.caption("after the chart")
"""


def test_a_chart_is_drawn_as_svg_at_the_width_asked() -> None:
    narrow, wide = (ET.fromstring(svg(SPEC, width)) for width in (200, 600))
    assert float(wide.get("width", 0)) - float(narrow.get("width", 0)) == pytest.approx(400)
    labels = svg_texts(svg(SPEC, 200), "axis-label")
    assert labels[:2] == ["v1", "v2"]


def test_a_page_shows_the_chart_as_an_image_with_its_alt_text() -> None:
    at = AppTest.from_string(APP)
    at.query_params["release"] = "v-shown"
    at.run()
    assert not at.exception
    (drawn,) = charts(at)
    assert "v-shown" in svg_texts(drawn, "axis-label")
    (image,) = at.get("image")
    assert image.proto.imgs[0].alt == "the chart's alt text"


def test_a_chart_that_cannot_be_drawn_leaves_a_note_and_the_page_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import vl_convert

    def broken(*_: object, **__: object) -> str:
        raise ValueError("renderer <down>")

    monkeypatch.setattr(vl_convert, "vegalite_to_svg", broken)
    st.cache_data.clear()  # no chart drawn earlier may stand in for this one
    at = AppTest.from_string(APP)
    at.query_params["release"] = "v-broken"
    at.run()
    assert not at.exception
    assert not at.get("image")
    (note,) = at.warning
    assert "could not be drawn" in note.value and "renderer" in note.value
    assert at.caption[-1].value == "after the chart"
