"""One case: its outcome in each release, how it moved, and what its report file holds
for it (trials, last output, graders), read on demand.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd

from dashboard.analysis.matching import case_keys, story_link_key
from dashboard.analysis.releases import shown_cases
from dashboard.analysis.slices import in_slice
from dashboard.data.catalog.queries import run_query
from dashboard.data.load.transcripts import read_case_text, read_case_trials
from dashboard.data.sources.reports import ReportSource

NOT_IN_RELEASE = "—"  # a case-history cell for a release that does not have the case


def case_history(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    tag: str | None = None,
    count_agent_errors: bool = False,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """Passes/runs of each case in each release (columns in release order) and what changed."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors, window)
    cases = cases.assign(key=case_keys(cases))
    cases = cases[in_slice(cases, tag)]
    order = list(releases["release"])
    cells = cases.assign(
        cell=[
            f"{int(c)}/{int(n)}" if pd.notna(n) else str(s)
            for n, c, s in zip(cases["n"], cases["c"], cases["status"], strict=True)
        ]
    )
    table = cells.pivot_table(index="key", columns="release", values="cell", aggfunc="first")
    table = table.reindex(columns=[r for r in order if r in table.columns])
    inputs = cases.groupby("key")["input"].last()
    ids = cases.groupby("key")["case_id"].last()
    table.insert(0, "case_id", ids.reindex(table.index))
    table.insert(1, "input", inputs.reindex(table.index))
    table["link_key"] = [story_link_key(str(key)) for key in table.index]
    release_cols = [r for r in order if r in table.columns]
    table["latest_change"] = [
        classify_change(
            row[release_cols[-2]] if len(release_cols) > 1 else None, row[release_cols[-1]]
        )
        if release_cols
        else ""
        for _, row in table.iterrows()
    ]
    table[release_cols] = table[release_cols].fillna(NOT_IN_RELEASE)
    return table.reset_index(drop=True)


def _fraction(cell: Any) -> tuple[int, int] | None:
    if not isinstance(cell, str) or "/" not in cell:
        return None
    c, n = cell.split("/", 1)
    return (int(c), int(n)) if c.isdigit() and n.isdigit() else None


def classify_change(before: Any, after: Any) -> str:
    """How a case moved between two releases: reliable / flaky / failing transitions.

    A cell is "c/n" when the case was evaluated, a status ("model_error", "skipped") when it
    was not, and missing when the release does not have the case.
    """
    a, b = _fraction(before), _fraction(after)
    missing_before = not isinstance(before, str)
    missing_after = not isinstance(after, str)
    if missing_after:
        return "" if missing_before else "removed"
    if missing_before:
        return "added"
    if a is None and b is None:
        return f"still {after}" if before == after else f"now {after}"
    if a is None:
        return f"back from {before}"
    if b is None:
        return f"now {after}"

    def kind(x: tuple[int, int]) -> str:
        c, n = x
        return "reliable" if c == n else ("failing" if c == 0 else "flaky")

    ka, kb = kind(a), kind(b)
    if ka == kb:
        return {"reliable": "still reliable", "failing": "still failing", "flaky": "still flaky"}[
            ka
        ]
    if kb == "flaky":
        return "became flaky" if ka == "reliable" else "started passing sometimes"
    if kb == "reliable":
        return "stabilised" if ka == "flaky" else "fixed"
    return "regressed"


def case_detail(
    con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int
) -> dict[str, Any] | None:
    frame = run_query(con, "read/case_detail", report_id=report_id, case_idx=case_idx)
    return None if frame.empty else frame.iloc[0].to_dict()


def case_trials(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    source: ReportSource | None = None,
) -> pd.DataFrame:
    """The case's trials, read from its report file (TranscriptUnavailable if it changed);
    `source` gives the file (None: the directory the catalog records)."""
    return read_case_trials(con, report_id, case_idx, source)


def case_text(
    con: duckdb.DuckDBPyConnection,
    report_id: int,
    case_idx: int,
    source: ReportSource | None = None,
) -> dict[str, Any]:
    """The case's last output and graders (JSON text), read from its report file."""
    return read_case_text(con, report_id, case_idx, source)


def case_link_key(case_id: Any, case_idx: int) -> str:
    """How a deep link names a case: its case_id (0.18+), else its position in the file."""
    return case_id if isinstance(case_id, str) and case_id else str(int(case_idx))


def find_case(cases: pd.DataFrame, wanted: str) -> pd.DataFrame:
    """Rows whose case_id equals `wanted`, else whose input equals it, else whose case_idx does."""
    by_id = cases[cases["case_id"] == wanted]
    if not by_id.empty:
        return by_id
    by_input = cases[cases["input"] == wanted]
    if not by_input.empty:
        return by_input
    if wanted.isdigit():
        return cases[cases["case_idx"] == int(wanted)]
    return cases.iloc[0:0]
