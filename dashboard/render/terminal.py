"""Plain-text rendering of a summary document for a terminal.

Formatting only: the numbers and the envelope's reading come with the document or from
dashboard/analysis. Must not: compute an estimate, import Streamlit, or print.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from dashboard.analysis.estimates import envelope_reading
from dashboard.render.formatting import envelope_text, one_line, with_ci

LOTTERY_SHOWN = 3


def render_summary(document: dict[str, Any], by: str = "file") -> str:
    """The whole summary document as terminal text (render_summary_lines, joined)."""
    rows = document.get("releases") if by == "release" else document.get("reports")
    ordered = sorted(rows or [], key=lambda row: str(row["suite"]))  # stable: release order kept
    return "".join(render_summary_lines(ordered, document.get("problems") or [], by))


def render_summary_lines(
    rows: Iterable[dict[str, Any]],
    problems: Sequence[dict[str, Any]],
    by: str = "file",
    suite_ks: Mapping[str, tuple[int, str]] | None = None,
) -> Iterator[str]:
    """The summary for a terminal, line by line, from entries grouped by suite (as the
    catalog lists them): printed as they come, whatever the number of reports.

    `suite_ks`: each suite's k and why (analysis/suite_k.py), at which every release of
    the suite is shown; a suite without one shows each release at its own run count.
    """
    suite: str | None = None
    k: int | None = None
    any_rows = False
    for row in rows:
        any_rows = True
        if row["suite"] != suite:
            suite = str(row["suite"])
            k, why = (suite_ks or {}).get(suite, (None, ""))
            at = "k" if k is None else str(k)
            k_column = f" {'k':>3}" if k is None else ""  # one k: said in the heading
            header = (
                f"{'release':<22} {'cases e/err/skip':>16} {'runs':>6}{k_column}  "
                f"{'pass@1':<22} {'pass@' + at:<22} {'pass^' + at:<22} envelope"
            )
            reason = f"k = {k} for every release: {one_line(why, 160)}\n" if k is not None else ""
            yield (
                f"\nSuite {one_line(suite, 60) or '(unnamed)'}\n{header}\n{'-' * len(header)}\n"
                + reason
            )
        yield "".join(line + "\n" for line in _row_lines(row, by, k))
    if problems:
        yield f"\nProblems ({len(problems)}):\n"
        for problem in problems:
            yield f"  {one_line(problem['file'], 60)}: {one_line(problem['reason'], 160)}\n"
    if not any_rows:
        yield "No reports loaded.\n"


def _row_lines(row: dict[str, Any], by: str, suite_k: int | None = None) -> list[str]:
    out: list[str] = []
    k = str(suite_k if suite_k is not None else max(row["runs"]["max"] or 1, 1))
    cases = row["cases"]
    at_k = row["pass_at_k"].get(k)
    hat_k = row["pass_hat_k"].get(k)
    if at_k and hat_k and at_k["value"] is not None and hat_k["value"] is not None:
        width = 100 * (at_k["value"] - hat_k["value"])
        envelope = envelope_text(width, envelope_reading(width))
    else:
        envelope = "UNKNOWN"
    low, high = row["runs"]["min"], row["runs"]["max"]
    runs = "-" if high is None else (str(high) if low == high else f"{low}-{high}")
    label = one_line(row["release"], 22)
    out.append(
        f"{label:<22} {cases['evaluated']:>6}/{cases['errored']}/{cases['skipped']:<4} "
        f"{runs:>6}{f' {k:>3}' if suite_k is None else ''}  "
        f"{with_ci(row['pass_at_k'].get('1')):<22} "
        f"{with_ci(at_k):<22} {with_ci(hat_k):<22} {envelope}"
    )
    if by == "file":
        out.append(f"    file {one_line(row['file'], 100)} (format {row['format']})")
    for cell in (at_k, hat_k):
        if cell and cell.get("unknown_reason"):
            out.append(f"    {cell['unknown_reason']}")
            break
    for case in row["lottery"][:LOTTERY_SHOWN]:
        out.append(f"    lottery {case['passes']}/{case['runs']}: {one_line(case['input'])}")
    if len(row["lottery"]) > LOTTERY_SHOWN:
        out.append(f"    … {len(row['lottery']) - LOTTERY_SHOWN} more lottery cases")
    return out
