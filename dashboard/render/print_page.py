"""The review packet's printed pages: a running header (suite, release, base, verdict,
k) and `page n of m`, as @page margin boxes set per packet.

Formatting only. Must not: decide a verdict, do I/O, or let text from a report end a
CSS string or the <style> element it is written into.
"""

from __future__ import annotations

import re
from typing import Final

from dashboard.analysis.review import Review

# The printed page's running header and page numbers (@page margin boxes); the header's
# text is the review's own, so it is set per packet, every character outside a plain set
# written as a CSS escape (a release name cannot end the string or the <style> element).
PAGE_BOXES: Final = """
@page {
  @top-left { content: "%s"; font: 8.5pt system-ui, sans-serif; color: #59636e; }
  @top-right { content: "%s"; font: 600 8.5pt system-ui, sans-serif; color: %s; }
  @bottom-right { content: "page " counter(page) " of " counter(pages);
    font: 8.5pt system-ui, sans-serif; color: #59636e; }
}
"""
VERDICT_COLOURS: Final = {"PASSED": "#1a7f37", "FAILED": "#cf222e"}
_CSS_PLAIN = re.compile(r"[A-Za-z0-9 ._,:/@+()#=~-]")


def css_string(text: str) -> str:
    """Text for inside a double-quoted CSS string: plain characters as they are, every
    other one as a six-digit hex escape and the one space that ends it (a space after
    an escape is part of the escape, so a space in the text survives)."""
    return "".join(ch if _CSS_PLAIN.fullmatch(ch) else f"\\{ord(ch):06x} " for ch in text)


def print_header(review: Review) -> str:
    """The @page rules of one packet: suite and release at the top left, the verdict at
    the top right, `page n of m` at the bottom."""
    left = f"relidash review · {review.suite} · {review.release}"
    if review.base:
        left += f" vs {review.base}"
    return PAGE_BOXES % (
        css_string(left),
        css_string(f"{review.verdict} · k = {review.k}"),
        VERDICT_COLOURS.get(review.verdict, "#9a6700"),
    )
