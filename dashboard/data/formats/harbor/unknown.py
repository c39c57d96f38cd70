"""A Harbor report's UNKNOWN reasons in tasks and attempts (`--n-attempts`), set in the
catalog after a load: the stats floor words them as multivon-eval does.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

import duckdb

from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.catalog.unknowns import set_unknown_reasons
from dashboard.data.formats import HARBOR
from dashboard.data.formats.unknown_wording import k_beyond_runs, no_cases


def word_unknowns(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
    if not report_ids:
        return
    rows = fetch_rows(con, "formats/harbor/unknown_metrics", report_ids=report_ids)
    worded = []
    for row in rows:
        if not row["n_cases"]:
            worded.append((row, no_cases(HARBOR)))
        elif row["runs"] and row["k"] > row["runs"]:
            worded.append((row, k_beyond_runs(HARBOR, row["k"], row["runs"], bool(row["uneven"]))))
    set_unknown_reasons(con, worded)
