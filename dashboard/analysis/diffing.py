"""Two transcripts aligned: changed lines, changed words, and where they first diverge.

Pure text processing, no HTML (dashboard/render/diff.py draws the table). Must not:
import Streamlit, or read files.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


@dataclass(frozen=True)
class DiffRow:
    kind: str  # equal | replace | delete | insert
    left_no: int | None
    left: str
    right_no: int | None
    right: str


def diff_lines(left: str, right: str) -> list[DiffRow]:
    """Align two transcripts line by line."""
    a, b = left.splitlines(), right.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [
                DiffRow("equal", i1 + d + 1, a[i1 + d], j1 + d + 1, b[j1 + d])
                for d in range(i2 - i1)
            ]
            continue
        span = max(i2 - i1, j2 - j1)
        for d in range(span):
            li, rj = i1 + d, j1 + d
            has_l, has_r = li < i2, rj < j2
            kind = "replace" if has_l and has_r else ("delete" if has_l else "insert")
            rows.append(
                DiffRow(
                    kind,
                    li + 1 if has_l else None,
                    a[li] if has_l else "",
                    rj + 1 if has_r else None,
                    b[rj] if has_r else "",
                )
            )
    return rows


def first_divergence(rows: list[DiffRow]) -> int | None:
    """Index of the first row where the transcripts differ, None if identical."""
    return next((i for i, row in enumerate(rows) if row.kind != "equal"), None)


def word_spans(left: str, right: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Each side as (token, changed) pieces."""
    a, b = _TOKEN.findall(left), _TOKEN.findall(right)
    out_a: list[tuple[str, bool]] = []
    out_b: list[tuple[str, bool]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        out_a += [(t, op != "equal") for t in a[i1:i2]]
        out_b += [(t, op != "equal") for t in b[j1:j2]]
    return out_a, out_b
