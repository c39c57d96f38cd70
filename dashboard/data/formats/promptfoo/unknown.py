"""A promptfoo report's UNKNOWN reasons in tests and repeats, set in the catalog after a
load: how many tests fall short of k graded repeats and why (errored repeats are left
out), instead of multivon-eval's wording about runs.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

from typing import Any

import duckdb

from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.catalog.unknowns import set_unknown_reasons
from dashboard.data.formats import PROMPTFOO

DECLINES = "relidash does not extrapolate."
NO_TESTS = "UNKNOWN — no test has a graded repeat to estimate from (every repeat errored)."


def word_unknowns(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
    """Reword the stored UNKNOWN reasons of these reports' promptfoo ones."""
    if not report_ids or not fetch_rows(
        con, "catalog/harness_among_reports", harness=PROMPTFOO, ids=report_ids
    ):
        return  # no promptfoo report among them: other loads pay one small query
    rows = fetch_rows(con, "formats/promptfoo/short_tests", report_ids=report_ids)
    if not rows:
        return
    set_unknown_reasons(con, [(r, short_tests(r)) for r in rows])


def short_tests(row: dict[str, Any]) -> str:
    """UNKNOWN at k: the tests with fewer than k graded repeats, counted, and why."""
    k, tests, shortest, short = row["k"], row["tests"], row["shortest"], row["short"]
    errored, ran = row["errored"], row["repeats"]
    if not tests:
        return NO_TESTS
    rerun = f"rerun with --repeat >= {k} or pass k <= {shortest}. {DECLINES}"
    if ran and k > ran:
        fewest = (
            f", and the test with the fewest has {_repeats(shortest)} graded (its errored "
            "ones left out)"
            if shortest < ran
            else ""
        )
        return f"UNKNOWN — k={k} exceeds the {_repeats(ran)} the eval ran{fewest}; {rerun}"
    if short == tests and not errored:
        return f"UNKNOWN — k={k} exceeds the {_repeats(shortest)} of each test; {rerun}"
    why = ""
    if errored:
        have = "has" if errored == 1 else "have"
        why = f", {errored} of them {have} errored repeats, which are left out"
    return (
        f"UNKNOWN — k={k} exceeds the {shortest} graded {_plural(shortest)} of the test "
        f"with the fewest; {short} of {tests} tests {'has' if short == 1 else 'have'} fewer "
        f"than {k}{why}; {rerun}"
    )


def _repeats(count: int) -> str:
    return f"{count} {_plural(count)}"


def _plural(count: int) -> str:
    return "repeat" if count == 1 else "repeats"
