"""The summary document built the plain way, as a dict, for tests to compare what
`relidash summary --json` streams with: every entry built afresh from the typed rows
(analysis/summary.py summary_rows, render/summary_json.py report_record), not joined from
stored entry texts nor from the cells DuckDB writes."""

from __future__ import annotations

from typing import Any

import duckdb

from dashboard.analysis.summary import ReportHead, every_problem, latest_rows, summary_rows
from dashboard.data.catalog.queries import fetch_rows
from dashboard.render.summary_json import problem_record, report_record


def summary_json(con: duckdb.DuckDBPyConnection, by: str = "file") -> dict[str, Any]:
    """The document `relidash summary --json` prints."""
    overview = fetch_rows(con, "read/report_overview", suites=None, release=None)
    problems = [problem_record(p) for p in every_problem(con)]
    if by == "release":
        files: dict[tuple[str, str], list[str]] = {}
        for row in overview:
            files.setdefault((row["suite"], row["release"]), []).append(row["file"])
        latest = latest_rows(overview)
        records = [report_record(r) for r in summary_rows(con, heads(latest))]
        for record, row in zip(records, latest, strict=True):
            record["release_rank"] = int(row["release_rank"])
            record["files"] = files[(row["suite"], row["release"])]
        return {"releases": records, "problems": problems}
    return {
        "reports": [report_record(r) for r in summary_rows(con, heads(overview))],
        "problems": problems,
    }


def heads(overview: list[dict[str, Any]]) -> list[ReportHead]:
    return [ReportHead.of(row) for row in overview]
