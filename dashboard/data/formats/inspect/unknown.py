"""An Inspect report's UNKNOWN reasons in samples and epochs (dashboard/data/formats/
unknown_wording.py words them), set in the catalog after a load.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

import duckdb

from dashboard.data.catalog.queries import execute, fetch_rows
from dashboard.data.catalog.unknowns import set_unknown_reasons
from dashboard.data.formats import INSPECT
from dashboard.data.formats.unknown_wording import inspect_nothing_scored, inspect_short_samples


def word_unknowns(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
    """An Inspect report's UNKNOWN says, in its own terms, how many samples fall short of k
    scored epochs and why (errored epochs, epochs the log never recorded, or fewer epochs
    than k planned), or that no sample has a scored epoch at all, instead of
    multivon-eval's wording about runs."""
    if not report_ids or not fetch_rows(
        con, "catalog/harness_among_reports", harness=INSPECT, ids=report_ids
    ):
        return  # no Inspect report among them: multivon-eval's loads pay one small query
    unscored = fetch_rows(con, "formats/inspect/nothing_scored", report_ids=report_ids)
    if unscored:
        execute(
            con,
            "catalog/set_unknown_reason_by_report",
            report_ids=[r["report_id"] for r in unscored],
            reasons=[
                inspect_nothing_scored(r["scorer"], r["unscored"], r["errored"]) for r in unscored
            ],
        )
    rows = fetch_rows(con, "formats/inspect/short_samples", report_ids=report_ids)
    if not rows:
        return
    reasons = [
        inspect_short_samples(
            r["k"], r["samples"], r["shortest"], r["short"], r["errored"], r["missing"],
            r["planned"],
        )
        for r in rows
    ]  # fmt: skip
    set_unknown_reasons(con, list(zip(rows, reasons, strict=True)))
