"""Plain-text rendering of a summary's rows (analysis/summary.py) for a terminal.

Formatting only: the numbers and the envelope's reading come from dashboard/analysis.
Must not: compute an estimate, import Streamlit, or print.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from dashboard.analysis.estimates import envelope_reading
from dashboard.analysis.summary import MetricCell, SummaryProblem, SummaryRow
from dashboard.render.formatting import envelope_text, one_line, pct_ci

LOTTERY_SHOWN = 3
# The release column: wide enough for a version, and for a Harbor label such as
# `terminus-2@2.0.0 (anthropic/claude-sonnet-4-5)` where a suite has one.
RELEASE_WIDTH = 22
RELEASE_WIDEST = 56


def render_summary_lines(
    rows: Iterable[SummaryRow],
    problems: Sequence[SummaryProblem],
    by: str = "file",
    suite_ks: Mapping[str, tuple[int, str]] | None = None,
    releases: Mapping[str, Sequence[str]] | None = None,
) -> Iterator[str]:
    """The summary for a terminal, line by line, from rows grouped by suite (as the
    catalog lists them): printed as they come, whatever the number of reports.

    `suite_ks`: each suite's k and why (analysis/suite_k.py), at which every release of
    the suite is shown; a suite without one shows each release at its own run count.
    `releases`: each suite's releases, to fit its release column to the longest of them
    (up to RELEASE_WIDEST); without them the column is RELEASE_WIDTH wide.
    """
    suite: str | None = None
    k: int | None = None
    any_rows = False
    for row in rows:
        any_rows = True
        if row.head.suite != suite:
            suite = row.head.suite
            width = release_width((releases or {}).get(suite, ()))
            k, why = (suite_ks or {}).get(suite, (None, ""))
            at = "k" if k is None else str(k)
            k_column = f" {'k':>3}" if k is None else ""  # one k: said in the heading
            header = (
                f"{'release':<{width}} {'cases e/err/skip':>16} {'runs':>6}{k_column}  "
                f"{'pass@1':<22} {'pass@' + at:<22} {'pass^' + at:<22} envelope"
            )
            reason = f"k = {k} for every release: {one_line(why, 160)}\n" if k is not None else ""
            yield (
                f"\nSuite {one_line(suite, 60) or '(unnamed)'}\n{header}\n{'-' * len(header)}\n"
                + reason
            )
        yield "".join(line + "\n" for line in _row_lines(row, by, k, width))
    if problems:
        yield f"\nProblems ({len(problems)}):\n"
        for problem in problems:
            yield f"  {one_line(problem.file, 60)}: {one_line(problem.reason, 160)}\n"
    if not any_rows:
        yield "No reports loaded.\n"


def _cell_text(cell: MetricCell | None) -> str:
    if cell is None or cell.value is None:
        return "UNKNOWN"
    return pct_ci(cell.value, cell.ci_low, cell.ci_high)


def release_width(releases: Iterable[str]) -> int:
    """The release column's width: the longest release as shown, at least RELEASE_WIDTH
    and at most RELEASE_WIDEST (a longer one is cut with an ellipsis)."""
    widest = max((len(one_line(r, RELEASE_WIDEST)) for r in releases), default=0)
    return min(max(RELEASE_WIDTH, widest), RELEASE_WIDEST)


def _row_lines(
    row: SummaryRow, by: str, suite_k: int | None = None, column: int = RELEASE_WIDTH
) -> list[str]:
    out: list[str] = []
    head, cases = row.head, row.head.cases
    k = suite_k if suite_k is not None else max(head.runs_max or 1, 1)
    at_k = row.pass_at_k.get(k)
    hat_k = row.pass_hat_k.get(k)
    if at_k and hat_k and at_k.value is not None and hat_k.value is not None:
        width = 100 * (at_k.value - hat_k.value)
        envelope = envelope_text(width, envelope_reading(width))
    else:
        envelope = "UNKNOWN"
    low, high = head.runs_min, head.runs_max
    runs = "-" if high is None else (str(high) if low == high else f"{low}-{high}")
    label = one_line(head.release, column)
    out.append(
        f"{label:<{column}} {cases.evaluated:>6}/{cases.errored}/{cases.skipped:<4} "
        f"{runs:>6}{f' {k:>3}' if suite_k is None else ''}  "
        f"{_cell_text(row.pass_at_k.get(1)):<22} "
        f"{_cell_text(at_k):<22} {_cell_text(hat_k):<22} {envelope}"
    )
    if by == "file":
        out.append(f"    file {one_line(head.file, 100)} (format {head.format})")
    for cell in (at_k, hat_k):
        if cell and cell.unknown_reason:
            out.append(f"    {cell.unknown_reason}")
            break
    for case in row.lottery[:LOTTERY_SHOWN]:
        out.append(f"    lottery {case.passes}/{case.runs}: {one_line(case.input)}")
    if len(row.lottery) > LOTTERY_SHOWN:
        more = len(row.lottery) - LOTTERY_SHOWN
        out.append(f"    … {more} more lottery case{'s' if more > 1 else ''}")
    return out
