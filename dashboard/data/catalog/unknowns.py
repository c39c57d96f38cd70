"""A harness's words for why a stored number is UNKNOWN, kept beside the number.

Every harness words its own reasons (dashboard/data/formats/<harness>/unknown.py) and
stores them the one way this module does.

Must not: word a reason, or import a harness.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import duckdb

from dashboard.data.catalog.queries import execute


def set_unknown_reasons(
    con: duckdb.DuckDBPyConnection, worded: Sequence[tuple[Mapping[str, Any], str]]
) -> None:
    """Store each (metric row, reason): the row names its report_id, metric and k, and
    the metric there must be UNKNOWN (a number is never given a reason)."""
    if not worded:
        return
    execute(
        con,
        "catalog/set_unknown_reason_by_metric",
        report_ids=[row["report_id"] for row, _ in worded],
        metrics=[row["metric"] for row, _ in worded],
        ks=[row["k"] for row, _ in worded],
        reasons=[reason for _, reason in worded],
    )
