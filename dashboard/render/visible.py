"""Report- and user-supplied text made safe to print on a terminal: every character a
terminal would act on instead of showing (escape sequences that clear the screen, set the
window title or draw an OSC 8 link; a carriage return or newline that forges a line;
bidirectional overrides that reorder what is shown) is printed as a visible escape.

`visible` is the one helper every CLI command uses for names, paths and reasons it prints.
It imports nothing heavy, so an error message can use it on the way out. Formatting only.
Must not: print, or decide what is shown (the callers choose).
"""

from __future__ import annotations

import unicodedata

# Unicode categories a terminal does not draw as a glyph of its own: controls (C0, DEL,
# C1 with CSI and OSC), format characters (bidirectional overrides, zero-width joiners),
# line and paragraph separators, surrogates, private-use and unassigned code points
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: object) -> str:
    """`text` with each character a terminal would act on shown as an escape (`\\x1b`,
    `\\n`, `\\u202e`). Plain text, accented letters and other scripts are unchanged.
    """
    value = str(text)
    if value.isprintable():
        return value  # the usual case: nothing to escape
    return "".join(_shown(ch) for ch in value)


def _shown(ch: str) -> str:
    named = _NAMED.get(ch)
    if named is not None:
        return named
    if ch == " " or unicodedata.category(ch) not in _HIDDEN_CATEGORIES:
        return ch
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
