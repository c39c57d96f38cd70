"""Side-by-side diff of two transcripts: changed lines, changed words, first divergence.

Pure text processing. The HTML it produces escapes every character that came from a
report, so a transcript holding markup is shown, never rendered.
"""

from __future__ import annotations

import difflib
import html
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


def _cell(pieces: list[tuple[str, bool]]) -> str:
    return "".join(
        f"<mark class='w'>{html.escape(t)}</mark>" if changed else html.escape(t)
        for t, changed in pieces
    )


STYLE = (
    "<style>.rd{font-family:ui-monospace,monospace;font-size:0.8rem;border-collapse:collapse;width:100%}"
    ".rd td{vertical-align:top;padding:1px 6px;white-space:pre-wrap;word-break:break-word;width:50%}"
    ".rd td.n{width:3.5em;min-width:3.5em;white-space:nowrap;color:#6e7781;text-align:right;user-select:none}"
    ".rd tr.replace td.t,.rd tr.delete td.l,.rd tr.insert td.r{background:#fff8c5}"
    ".rd tr.delete td.l{background:#ffebe9}.rd tr.insert td.r{background:#dafbe1}"
    ".rd mark.w{background:#ffd33d;padding:0}.rd tr.first td{border-top:2px solid #d1242f}"
    ".rd th{text-align:left;font-family:sans-serif}</style>"
)


def diff_html(rows: list[DiffRow], left_title: str, right_title: str) -> str:
    """An HTML table of the diff; every report-derived string is escaped."""
    first = first_divergence(rows)
    out = [
        STYLE,
        "<table class='rd'><tr><th></th><th>",
        html.escape(left_title),
        "</th><th></th><th>",
        html.escape(right_title),
        "</th></tr>",
    ]
    for i, row in enumerate(rows):
        if row.kind == "replace":
            left_pieces, right_pieces = word_spans(row.left, row.right)
            left_html, right_html = _cell(left_pieces), _cell(right_pieces)
        else:
            left_html, right_html = html.escape(row.left), html.escape(row.right)
        classes = row.kind + (" first" if i == first else "")
        marker = "▶ " if i == first else ""
        out.append(
            f"<tr class='{classes}'><td class='n'>{marker}{row.left_no or ''}</td>"
            f"<td class='t l'>{left_html}</td><td class='n'>{row.right_no or ''}</td>"
            f"<td class='t r'>{right_html}</td></tr>"
        )
    out.append("</table>")
    return "".join(out)
