"""Where a review packet's visible document differs from the one relidash renders.

Both documents are read as a stream of parts (tags with their attributes, text, comments,
declarations) with character references decoded and the machine-readable block left out:
what a reader sees (and the markup and style that decide how it looks) is everything
else. Equal streams mean the same document; otherwise each region (the head, the verdict
banner, each section, the footer, anything between them) that differs is named by its
heading with the first few texts that differ.

Formatting only: the verdict on a packet is dashboard/analysis/verifying.py's.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Final

from dashboard.render.formatting import one_line
from dashboard.render.packet import PACKET_BLOCK_ID

SHOWN_PER_REGION: Final = 3
TEXT_WIDTH: Final = 80
_REGION_TAGS: Final = frozenset(("head", "body", "header", "section", "footer"))
_REGION_NAMES: Final = {"head": "document head (title, style)", "header": "verdict banner"}

Part = tuple[str, ...]


@dataclass(frozen=True)
class VisibleDifference:
    """One region of the document that differs; `changes` are (shown in the packet,
    rendered by relidash) text pairs, either side "" when the text is only on one."""

    region: str
    changes: tuple[tuple[str, str], ...]
    markup_only: bool  # same text, other tags, attributes or style


class _Regions(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.regions: dict[str, list[Part]] = {}
        self.titles: dict[str, str] = {}
        self._key = "before the document"
        self._last = "the document's start"
        self._in_block = False
        self._heading: list[str] | None = None

    def _enter(self, tag: str, attrs: dict[str, str | None]) -> None:
        base = f"{tag}#{attrs.get('id') or ''}"
        key, n = base, 1
        while key in self.regions:
            n += 1
            key = f"{base}({n})"
        self._key = key
        self.regions[key] = []
        title = _REGION_NAMES.get(tag, "")
        self.titles[key] = title or (f"section {attrs.get('id')}" if tag == "section" else tag)

    def _add(self, part: Part) -> None:
        self.regions.setdefault(self._key, []).append(part)
        self.titles.setdefault(self._key, f"after the {self._last}")

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "script" and values.get("id") == PACKET_BLOCK_ID:
            self._in_block = True
            return
        if tag in _REGION_TAGS:
            self._enter(tag, values)
        if tag == "h2" and self._key.startswith("section#"):
            self._heading = []
        self._add(("<", tag, *(f"{k}={v}" for k, v in attrs)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._in_block:
            self._in_block = tag != "script"
            return
        self._add(("/", tag))
        if tag == "h2" and self._heading is not None:
            self.titles[self._key] = f"{' '.join(''.join(self._heading).split())} section"
            self._heading = None
        if tag in _REGION_TAGS:
            self._last = self.titles.get(self._key, tag)
            self._key = f"after {self._key}"

    def handle_data(self, data: str) -> None:
        if self._in_block:
            return
        if self._heading is not None:
            self._heading.append(data)
        self._add(("text", data))

    def handle_comment(self, data: str) -> None:
        self._add(("comment", data))

    def handle_decl(self, decl: str) -> None:
        self._add(("decl", decl))

    def handle_pi(self, data: str) -> None:
        self._add(("pi", data))

    def unknown_decl(self, data: str) -> None:
        self._add(("decl", data))


def _regions(html_text: str) -> _Regions:
    parser = _Regions()
    parser.feed(html_text)
    parser.close()
    return parser


def _texts(parts: list[Part] | None) -> list[str]:
    """The region's visible words, one entry per text part, whitespace folded."""
    out = []
    for part in parts or []:
        if part[0] in ("text", "comment"):
            flat = " ".join(part[1].split())
            if flat:
                out.append(flat)
    return out


def visible_differences(packet_html: str, rendered_html: str) -> list[VisibleDifference]:
    """Each region where the packet differs from the rendered document, in document order
    (the rendered document's regions first, then any only the packet has)."""
    shown, rendered = _regions(packet_html), _regions(rendered_html)
    keys = list(rendered.regions) + [k for k in shown.regions if k not in rendered.regions]
    out = []
    for key in keys:
        a, b = shown.regions.get(key), rendered.regions.get(key)
        if a == b:
            continue
        title = rendered.titles.get(key) or shown.titles.get(key) or key
        ta, tb = _texts(a), _texts(b)
        if ta == tb:
            out.append(VisibleDifference(title, (), True))
            continue
        changes = []
        for op, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, ta, tb, autojunk=False
        ).get_opcodes():
            if op != "equal":
                changes.append(
                    (
                        one_line(" ".join(ta[i1:i2]), TEXT_WIDTH),
                        one_line(" ".join(tb[j1:j2]), TEXT_WIDTH),
                    )
                )
        out.append(VisibleDifference(title, tuple(changes[:SHOWN_PER_REGION]), False))
    return out
