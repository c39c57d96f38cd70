"""Plain-text rendering of a summary document for a terminal.

Formatting only: the numbers and the envelope's reading come with the document or from
dashboard/analysis. Must not: compute an estimate, import Streamlit, or print.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from dashboard.analysis.estimates import envelope_reading
from dashboard.render.formatting import envelope_text, one_line, with_ci

LOTTERY_SHOWN = 3


def render_summary(document: dict[str, Any], by: str = "file") -> str:
    rows = document.get("releases") if by == "release" else document.get("reports")
    by_suite: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows or []:
        by_suite[row["suite"]].append(row)
    out: list[str] = []
    header = (
        f"{'release':<22} {'cases e/err/skip':>16} {'runs':>6} {'k':>3}  "
        f"{'pass@1':<22} {'pass@k':<22} {'pass^k':<22} envelope"
    )
    for suite in sorted(by_suite):
        out.append(f"\nSuite {one_line(suite, 60) or '(unnamed)'}")
        out.append(header)
        out.append("-" * len(header))
        for row in by_suite[suite]:
            k = str(max(row["runs"]["max"] or 1, 1))
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
                f"{runs:>6} {k:>3}  {with_ci(row['pass_at_k'].get('1')):<22} "
                f"{with_ci(at_k):<22} {with_ci(hat_k):<22} {envelope}"
            )
            if by == "file":
                out.append(f"    file {one_line(row['file'], 100)} (format {row['format']})")
            for cell in (at_k, hat_k):
                if cell and cell.get("unknown_reason"):
                    out.append(f"    {cell['unknown_reason']}")
                    break
            for case in row["lottery"][:LOTTERY_SHOWN]:
                out.append(
                    f"    lottery {case['passes']}/{case['runs']}: {one_line(case['input'])}"
                )
            if len(row["lottery"]) > LOTTERY_SHOWN:
                out.append(f"    … {len(row['lottery']) - LOTTERY_SHOWN} more lottery cases")
    problems = document.get("problems") or []
    if problems:
        out.append(f"\nProblems ({len(problems)}):")
        for problem in problems:
            out.append(f"  {one_line(problem['file'], 60)}: {one_line(problem['reason'], 160)}")
    if not rows:
        out.append("No reports loaded.")
    return "\n".join(out) + "\n"
