"""An SVG drawing rebuilt as inline HTML markup the review packet can carry: allow-listed
elements, no event handler, no reference outside the document, every text and value
escaped.

Formatting only: must not draw a chart (render/charts.py does) or read files.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from typing import Final


def _e(value: str) -> str:
    return html.escape(value, quote=True)


_SVG_NS: Final = "{http://www.w3.org/2000/svg}"
_XLINK_NS: Final = "{http://www.w3.org/1999/xlink}"
_SVG_TAGS: Final = frozenset((
    "svg", "g", "path", "rect", "line", "circle", "ellipse", "polyline", "polygon", "text",
    "tspan", "title", "desc", "defs", "clipPath", "linearGradient", "radialGradient", "stop",
))  # fmt: skip
_ATTR_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]*\Z")
_OUTSIDE_URL: Final = re.compile(r"url\(\s*['\"]?\s*(?!#)", re.IGNORECASE)


class UnsafeSvg(ValueError):
    """The renderer's SVG holds something an offline, script-free packet must not carry."""


def inline_svg(svg_text: str) -> str:
    """The SVG rebuilt from its parsed tree as inline HTML markup: allow-listed elements,
    no event handlers, no reference outside the document, every text and value escaped.

    Rebuilding (rather than pasting the renderer's text) leaves no comment, processing
    instruction or CDATA that an HTML parser might read differently from an XML one.
    """
    return _svg_element(ET.fromstring(svg_text))


def _svg_element(el: ET.Element) -> str:
    tag = el.tag.removeprefix(_SVG_NS)
    if tag not in _SVG_TAGS:
        raise UnsafeSvg(f"element {el.tag!r}")
    attrs = []
    for name, value in el.attrib.items():
        name = f"xlink:{name.removeprefix(_XLINK_NS)}" if name.startswith(_XLINK_NS) else name
        lowered = name.lower()
        if not _ATTR_NAME.match(name) or lowered.startswith("on"):
            raise UnsafeSvg(f"attribute {name!r}")
        if (lowered.endswith("href") or lowered == "src") and not value.startswith("#"):
            raise UnsafeSvg(f"reference {value!r}")
        if _OUTSIDE_URL.search(value):
            raise UnsafeSvg(f"reference {value!r}")
        attrs.append(f' {name}="{_e(value)}"')
    inner = html.escape(el.text or "", quote=False) + "".join(
        _svg_element(child) + html.escape(child.tail or "", quote=False) for child in el
    )
    return f"<{tag}{''.join(attrs)}>{inner}</{tag}>"
