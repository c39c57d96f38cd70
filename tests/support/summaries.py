"""The summary document built the plain way, as a dict, for tests to compare what
`relidash summary --json` streams with: every report's record built afresh from the
catalog (analysis/summary.py report_records), not joined from the stored entry texts."""

from __future__ import annotations

from typing import Any

import duckdb

from dashboard.analysis.summary import latest_rows, problem_entries, report_records
from dashboard.data.catalog.queries import fetch_rows


def summary_json(con: duckdb.DuckDBPyConnection, by: str = "file") -> dict[str, Any]:
    """The document `relidash summary --json` prints."""
    overview = fetch_rows(con, "read/report_overview", suites=None, release=None)
    problems = problem_entries(con)
    if by == "release":
        files: dict[tuple[str, str], list[str]] = {}
        for row in overview:
            files.setdefault((row["suite"], row["release"]), []).append(row["file"])
        latest = latest_rows(overview)
        records = report_records(con, latest)
        for record, row in zip(records, latest, strict=True):
            record["release_rank"] = int(row["release_rank"])
            record["files"] = files[(row["suite"], row["release"])]
        return {"releases": records, "problems": problems}
    return {"reports": report_records(con, overview), "problems": problems}
