"""The side-by-side diff of two transcripts as an HTML table.

Formatting only: the alignment comes from dashboard/analysis/diffing.py. Every
character that came from a report is escaped, so a transcript holding markup is shown,
never rendered.
"""

from __future__ import annotations

import html

from dashboard.analysis.diffing import DiffRow, first_divergence, word_spans


def _cell(pieces: list[tuple[str, bool]], mark: str = "w") -> str:
    return "".join(
        f"<mark class='{mark}'>{html.escape(t)}</mark>" if changed else html.escape(t)
        for t, changed in pieces
    )


STYLE = (
    "<style>.rd{font-family:ui-monospace,monospace;font-size:0.8rem;border-collapse:collapse;width:100%}"
    ".rd td{vertical-align:top;padding:1px 6px;white-space:pre-wrap;word-break:break-word;width:50%}"
    ".rd td.n{width:3.5em;min-width:3.5em;white-space:nowrap;color:#6e7781;text-align:right;user-select:none}"
    ".rd tr.replace td.t,.rd tr.delete td.l,.rd tr.insert td.r{background:#fff8c5}"
    ".rd tr.delete td.l{background:#ffebe9}.rd tr.insert td.r{background:#dafbe1}"
    ".rd mark.w{background:#ffd33d;padding:0}.rd mark.v{background:#eaeef2;padding:0}.rd tr.first td{border-top:2px solid #d1242f}"
    ".rd th{text-align:left;font-family:sans-serif}</style>"
)


def diff_html(
    rows: list[DiffRow], left_title: str, right_title: str, marked: int | None = None
) -> str:
    """An HTML table of the diff, ▶ at row `marked` (default: the first divergence);
    every report-derived string is escaped."""
    first = first_divergence(rows) if marked is None else marked
    out = [
        STYLE,
        "<table class='rd'><tr><th></th><th>",
        html.escape(left_title),
        "</th><th></th><th>",
        html.escape(right_title),
        "</th></tr>",
    ]
    for i, row in enumerate(rows):
        if row.kind in ("replace", "volatile"):
            # a volatile row differs only in durations, ids, times: marked faintly
            left_pieces, right_pieces = word_spans(row.left, row.right)
            mark = "w" if row.kind == "replace" else "v"
            left_html, right_html = _cell(left_pieces, mark), _cell(right_pieces, mark)
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
