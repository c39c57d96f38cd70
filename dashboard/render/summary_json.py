"""`relidash summary --json`'s document, written as it is built: the stored entries of the
reports (analysis/summary.py) joined into one JSON text, compact for a pipe and indented
for a person, without parsing them again on the way.

Must not: compute a number or read the catalog but through analysis.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import IO

import duckdb

from dashboard.analysis.summary import Keep, summary_entries, summary_problems
from dashboard.data.load.results import store_records


def summary_stream(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
    keep: Keep = store_records,
) -> Iterator[str]:
    """`relidash summary --json`'s document as pieces of compact JSON text, to be written
    as they come: the first within a batch's time, memory flat in the number of reports."""
    yield '{"releases": [' if by == "release" else '{"reports": ['
    for i, entry in enumerate(summary_entries(con, by, suites, release, keep)):
        yield entry if i == 0 else ", " + entry
    problems = json.dumps(summary_problems(con, by, suites, release), ensure_ascii=False)
    yield f'], "problems": {problems}}}'


def summary_text(con: duckdb.DuckDBPyConnection, by: str = "file") -> str:
    """The whole document as compact JSON text."""
    return "".join(summary_stream(con, by))


def write_summary(
    out: IO[str],
    con: duckdb.DuckDBPyConnection,
    by: str,
    suites: Sequence[str] | None,
    release: str | None,
    keep: Keep,
) -> None:
    """Write the document: compact piece by piece in a pipe (what tools read), indented at a
    terminal (a person: small enough to hold)."""
    pieces = summary_stream(con, by, suites, release, keep)
    if not out.isatty():
        for piece in pieces:
            out.write(piece)
        out.write("\n")
        return
    out.write(json.dumps(json.loads("".join(pieces)), indent=2, ensure_ascii=False) + "\n")
