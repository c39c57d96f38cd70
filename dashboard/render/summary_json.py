"""`relidash summary --json`'s document, written as it is built, compact for a pipe and
indented for a person.

An entry's text comes one of two ways, equal to the byte (tests/render/test_summary_text.py):

- the plain way: `report_record` of the typed row (analysis/summary.py), dumped by
  json.dumps;
- the way a long history needs: the text an earlier summary stored for the report
  (`stored_entries`), else the head dumped by json.dumps with the cells DuckDB wrote as
  JSON (`written_cells`) spliced in. Reading the metric rows and lottery cases into Python
  to dump them would be most of a summary's time, all of it after the load. A report
  DuckDB cannot write exactly takes the plain way.

Entries built are stored through `keep` (analysis's summary_session), so a load that
changed one file builds one entry again, not every one. By release, each entry gains its
rank and files, spliced in as json.dumps would write them.

Must not: compute a number or read the catalog but through analysis.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from json.encoder import encode_basestring
from typing import IO, Any

import duckdb

from dashboard.analysis.summary import (
    Keep,
    MetricCell,
    ReportHead,
    SummaryProblem,
    SummaryRow,
    WrittenCells,
    stored_entries,
    summary_heads,
    summary_problems,
    summary_rows,
    written_cells,
)
from dashboard.data.load.results import store_records


def head_record(head: ReportHead) -> dict[str, Any]:
    """An entry's fields before its metric cells."""
    cases = head.cases
    return {
        "file": head.file,
        "suite": head.suite,
        "release": head.release,
        "harness": head.harness,
        "format": head.format,
        "upgraded": head.upgraded,
        "complete": head.complete,
        "log_status": head.log_status,
        "cases": {
            "total": cases.total,
            "evaluated": cases.evaluated,
            "errored": cases.errored,
            "skipped": cases.skipped,
            "excluded": cases.excluded,
        },
        "runs": {"min": head.runs_min, "max": head.runs_max},
    }


def _cells(cells: dict[int, MetricCell]) -> dict[str, dict[str, Any]]:
    return {
        str(k): {
            "value": c.value,
            "ci_low": c.ci_low,
            "ci_high": c.ci_high,
            "unknown_reason": c.unknown_reason,
        }
        for k, c in cells.items()
    }


def report_record(row: SummaryRow) -> dict[str, Any]:
    """A report's entry as a JSON-ready dict: what is stored for it, whatever the summary."""
    return {
        **head_record(row.head),
        "pass_at_k": _cells(row.pass_at_k),
        "pass_hat_k": _cells(row.pass_hat_k),
        "lottery": [
            {"case_id": c.case_id, "input": c.input, "passes": c.passes, "runs": c.runs}
            for c in row.lottery
        ],
    }


def problem_record(problem: SummaryProblem) -> dict[str, str]:
    return {"file": problem.file, "reason": problem.reason, "scope": problem.scope}


def summary_stream(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
    keep: Keep = store_records,
) -> Iterator[str]:
    """`relidash summary --json`'s document as pieces of compact JSON text, to be written
    as they come: the first within a batch's time, memory flat in the number of reports.

    The document's opening comes with its first entry: a catalog found damaged by the
    first batch's reads is then rebuilt and the command run again (cli/main.py), where
    half a document written would leave the user to run it again.
    """
    opening = '{"releases": [' if by == "release" else '{"reports": ['
    for entry in entry_texts(con, by, suites, release, keep):
        yield opening + entry
        opening = ", "
    if opening != ", ":  # no entries
        yield opening
    problems = [problem_record(p) for p in summary_problems(con, by, suites, release)]
    yield f'], "problems": {json.dumps(problems, ensure_ascii=False)}}}'


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


# A batch's stored entries by report id, the heads without one, and DuckDB's cells of those.
_BatchReads = tuple[dict[int, str], list[ReportHead], WrittenCells]


def entry_texts(
    con: duckdb.DuckDBPyConnection,
    by: str = "file",
    suites: Sequence[str] | None = None,
    release: str | None = None,
    keep: Keep = store_records,
) -> Iterator[str]:
    """Each entry of the document as compact JSON text, a batch at a time.

    What a batch reads (its stored entries, the cells of those it builds) is read on a
    cursor of its own while the batch before it is written: after a cold load of many
    reports, DuckDB's part of building their entries is a large share of the work.
    """
    cursor = con.cursor()
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="relidash-entries") as pool:
            ahead: tuple[list[ReportHead], Future[_BatchReads]] | None = None
            for heads in summary_heads(con, by, suites, release):
                reads = pool.submit(_batch_reads, cursor, heads)
                if ahead is not None:
                    yield from _batch_entries(con, *ahead, keep)
                ahead = (heads, reads)
            if ahead is not None:
                yield from _batch_entries(con, *ahead, keep)
    finally:
        cursor.close()


def _batch_reads(cursor: duckdb.DuckDBPyConnection, heads: list[ReportHead]) -> _BatchReads:
    stored = stored_entries(cursor, heads)
    missing = [head for head in heads if head.report_id not in stored]
    return stored, missing, written_cells(cursor, missing)


def _batch_entries(
    con: duckdb.DuckDBPyConnection,
    heads: list[ReportHead],
    reads: Future[_BatchReads],
    keep: Keep,
) -> Iterator[str]:
    """The batch's entries in order: stored, or built (and kept) from its reads."""
    stored, missing, cells = reads.result()
    fresh = [
        (head.report_id, text)
        for head, text in zip(missing, report_texts(con, missing, cells), strict=True)
    ]
    if fresh:
        keep(con, fresh)
    stored.update(fresh)
    for head in heads:
        text = stored[head.report_id]
        if head.files is not None:
            text = with_release_keys(text, head.release_rank, head.files)
        yield text


def report_texts(
    con: duckdb.DuckDBPyConnection,
    heads: Sequence[ReportHead],
    cells: WrittenCells | None = None,
) -> list[str]:
    """json.dumps(report_record(row), ensure_ascii=False) of each head's row, most of it
    written by DuckDB (`cells`, or read now): see the module's docstring."""
    written = cells if cells is not None else written_cells(con, heads)
    dumped = {
        row.head.report_id: json.dumps(report_record(row), ensure_ascii=False)
        for row in summary_rows(con, [head for head in heads if head.report_id not in written])
    }
    texts = []
    for head in heads:
        if head.report_id in dumped:
            texts.append(dumped[head.report_id])
            continue
        # json.dumps of a dict is its items joined by ", " inside braces: the head's text
        # without its closing brace, then the cells' and the lottery's items
        head_text = json.dumps(head_record(head), ensure_ascii=False)
        at_k, hat_k, lottery = written[head.report_id]
        texts.append(
            f'{head_text[:-1]}, "pass_at_k": {at_k}, "pass_hat_k": {hat_k}, "lottery": {lottery}}}'
        )
    return texts


def with_release_keys(entry: str, rank: int, files: list[str]) -> str:
    """A report's stored entry (json.dumps of a non-empty object without these keys) with
    `release_rank` and `files` added last, as json.dumps of the object with them would
    write it: spliced before the closing brace, not parsed and written again (parsing
    every entry would make `--by release` cost several times `--by file`)."""
    head = entry.rstrip()
    body = head[:-1]  # one copy of the entry's text, not one per check (one entry a release)
    if not (head.endswith("}") and body.rstrip() != "{"):
        raise ValueError(f"not a stored summary entry: {entry[:60]!r}")
    # json.dumps(files, ensure_ascii=False), written from its own string encoder:
    # json.dumps' setup for a list of one file, once per release, costs more than the list
    files_text = "[" + ", ".join(map(encode_basestring, files)) + "]"
    return f'{body}, "release_rank": {rank}, "files": {files_text}}}'
