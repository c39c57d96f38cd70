"""Parse one batch of report files into the catalog, with the reader that suits them, and
isolate the files DuckDB refuses: each becomes one row in `problems`, the rest load.

Three readers fill the temp table `stage` (queries/stage_reports*.sql): DuckDB's JSON
reader file by file, whose verdicts and messages stand; the strict transform, for large
0.19+ reports; and, for small reports, the JSON reader over one framed array of the whole
batch (Frame), which gives the same rows with one file opened instead of many. A batch
that the strict or framed reader refuses is read again by the JSON reader. A batch's large
and small files are staged and stored in one transaction (parse_strict_and_framed), and
both parses of a batch run ahead, while the batch before it is stored
(dashboard/data/formats/multivon/stager.py).
"""

from __future__ import annotations

import codecs
import contextlib
import secrets
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import duckdb

from dashboard.data.catalog import roll_back
from dashboard.data.catalog.problems import record_file, record_files, record_problems
from dashboard.data.catalog.queries import execute, fill_template, reader_buffer_bytes
from dashboard.data.catalog.schema import REPORT_COLUMNS, REPORT_STRUCTURE
from dashboard.data.formats.multivon.checks import has_constant_literal, strict_json_problem
from dashboard.data.formats.multivon.findings import (
    Findings,
    duckdb_reason,
    reject_files,
    staged_findings,
)
from dashboard.data.sources.walk import FileEntry

FRAME_TAG = "relidash:report"
T = TypeVar("T")


# What a bad file can make DuckDB raise. Anything else (a binder or parser error) is a
# bug in relidash's SQL and must surface, not be blamed on the user's files.
DATA_ERRORS = (
    duckdb.InvalidInputException,
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.IOException,
    duckdb.SerializationException,
    # DuckDB can cut a multi-byte character when it quotes a bad value in its message,
    # and the message then fails to decode: still a data error, with an unreadable text.
    UnicodeDecodeError,
)


class Frame:
    """The scratch file a batch of small reports is written to as one JSON array.

    Each report object is opened by FRAME_TAG, whose value (this load's secret and the
    report id) no file can know: stage_reports_framed's rows are matched to their files
    by it, and a batch whose rows do not match its files one to one is parsed again file
    by file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tag = FRAME_TAG.encode()
        self.secret = secrets.token_hex(8) + ":"

    def tag_of(self, report_id: int) -> str:
        """The value of FRAME_TAG that opens this report's element."""
        return f"{self.secret}{report_id}"

    def write(self, items: list[tuple[int, bytes]]) -> bool:
        """Write the batch's files as one array; False when the scratch file cannot be."""
        parts = [b"["]
        for i, (report_id, data) in enumerate(items):
            body = data.removeprefix(codecs.BOM_UTF8).lstrip()
            # precheck_file saw '{' first; were it not, the element is malformed and the
            # batch is read file by file
            parts.append(
                b'%s{"%s":"%s",' % (b",\n" if i else b"", self.tag, self.tag_of(report_id).encode())
            )
            parts.append(body[1:] if body[:1] == b"{" else body)
        parts.append(b"]")
        try:
            self.path.unlink(missing_ok=True)  # a new file: rewriting one in place costs more
            self.path.write_bytes(b"".join(parts))
        except OSError:
            return False
        return True


class FrameMismatch(Exception):
    """A framed batch's rows do not match its files one to one."""


class FrameUnwritten(FrameMismatch):
    """A framed batch's scratch file could not be written: its files go to the JSON reader."""


Group = tuple[str, list[tuple[FileEntry, str, int]]]  # (reader, files): see parse_batch
# The statements that store a batch's staged rows and flattened cases, in this order.
STORE_STAGED = (
    "formats/multivon/insert_reports",
    "formats/multivon/insert_cases",
    "formats/multivon/insert_case_tags",
)


def parse_batch(
    con: duckdb.DuckDBPyConnection,
    batch: list[tuple[FileEntry, str, int]],
    max_bytes: int,
    *,
    reader: str = "json",
    frame: Frame | None = None,
    staged: Future[list[str]] | None = None,
    framed_staged: Future[str] | None = None,
    cases_staged: Future[Flattened | None] | None = None,
) -> None:
    """Parse a batch in one statement; split it to find the files DuckDB rejects.

    `reader` "json": DuckDB's JSON reader, whose verdicts stand. "strict", the fast path
    for large files: a batch it refuses is tried file by file, and a file it refuses alone
    is read by the JSON reader. "framed", for small files (the batch as written to
    `frame`): the JSON reader over one file; a batch it refuses is read file by file.
    `staged` / `framed_staged` / `cases_staged`: the strict or framed parse of the batch,
    and its cases flattened, begun by a BatchStager.
    """
    strict = reader == "strict"
    try:
        _stage_and_store(
            con, [(reader, batch)], max_bytes, frame, staged, framed_staged, cases_staged
        )
    except (*DATA_ERRORS, FrameMismatch) as exc:
        if reader == "framed":
            parse_batch(con, batch, max_bytes)
            return
        if strict and len(batch) > 1:
            for item in batch:
                parse_batch(con, [item], max_bytes, reader="strict")
            return
        if strict:  # refused alone: the JSON reader decides, after the exact NaN check
            entry, digest, _ = batch[0]
            reason = has_constant_literal(entry.abspath) and strict_json_problem(entry.abspath)
            if reason:
                record_file(con, entry, digest, None)
                record_problems(con, [(entry.path, "file", reason)])
            else:
                parse_batch(con, batch, max_bytes)
            return
        if len(batch) == 1:
            entry, digest, _ = batch[0]
            record_file(con, entry, digest, None)
            record_problems(con, [(entry.path, "file", duckdb_reason(exc, entry.abspath))])
            return
        middle = len(batch) // 2
        parse_batch(con, batch[:middle], max_bytes)
        parse_batch(con, batch[middle:], max_bytes)


def parse_strict_and_framed(
    con: duckdb.DuckDBPyConnection,
    large: list[tuple[FileEntry, str, int]],
    small: list[tuple[FileEntry, str, int]],
    max_bytes: int,
    frame: Frame,
    staged: Future[list[str]] | None = None,
    framed_staged: Future[str] | None = None,
    cases_staged: Future[Flattened | None] | None = None,
) -> None:
    """A batch's large files (strict) and small ones (as written to `frame`) in one
    transaction: the statements that flatten and store a batch cost much the same however
    few its files (DuckDB plans them anew each time), and a batch of mixed sizes would pay
    that twice. If either reader refuses its part, each part is parsed on its own
    (parse_batch), as if they had never met."""
    try:
        _stage_and_store(
            con,
            [("strict", large), ("framed", small)],
            max_bytes,
            frame,
            staged,
            framed_staged,
            cases_staged,
        )
    except (*DATA_ERRORS, FrameMismatch):
        # a parse begun ahead that failed says so again at once, instead of running again
        parse_batch(con, large, max_bytes, reader="strict", staged=_failed(staged))
        parse_batch(
            con,
            small,
            max_bytes,
            reader="framed",
            frame=frame,
            framed_staged=_failed(framed_staged),
        )


def _failed(future: Future[T] | None) -> Future[T] | None:
    """`future` if it ended in an exception (waiting for it to end), else None."""
    return future if future is not None and future.exception() is not None else None


def _stage_and_store(
    con: duckdb.DuckDBPyConnection,
    groups: list[Group],
    max_bytes: int,
    frame: Frame | None,
    staged: Future[list[str]] | None = None,
    framed_staged: Future[str] | None = None,
    cases_staged: Future[Flattened | None] | None = None,
) -> None:
    """Stage every group's files by its reader into `stage`, then flatten and store them
    all, in one transaction. Rolled back on any error, which is raised. `staged` /
    `framed_staged`: the strict group's parts and the framed group's table, being parsed
    already; `cases_staged`: the flattened cases of both (None: flatten them here)."""
    readers = dict(groups)
    strict = readers.get("strict", [])
    small = readers.get("framed", []) if frame is not None else []
    everything = [item for _, items in groups for item in items]
    parts: list[str] = []
    try:
        # before the transaction, whose snapshot must see the parts
        if small:
            assert frame is not None
            parts.append(
                framed_staged.result()
                if framed_staged
                else stage_framed(con, frame, small, max_bytes)
            )
        if strict:
            abspaths = [e.abspath for e, _, _ in strict]
            parts += staged.result() if staged else stage_strict_parts(con, abspaths)
        flattened = cases_staged.result() if cases_staged else None
        con.begin()
        batch_files(con, everything)
        sources = list(parts)
        if "json" in readers:
            files = readers["json"]
            execute(
                con,
                "formats/multivon/stage_reports",
                files=[e.abspath for e, _, _ in files],
                columns=REPORT_COLUMNS,
                max_bytes=reader_buffer_bytes(max(e.size for e, _, _ in files), max_bytes),
            )
            sources.append("stage_json")
        stage_view(con, sources)
        findings = flattened.findings if flattened else staged_findings(con, strict=bool(strict))
        rejected = reject_files(con, findings, {e.abspath: e.path for e, _, _ in everything})
        if flattened:  # flattened ahead: the rejected files' cases are left out here
            con.execute(
                fill_template("formats/multivon/stage_cases_of_batch", table=flattened.table)
            )
        else:
            flatten_cases(con, "stage_cases_rows", temp=True)
            execute(con, "formats/multivon/stage_cases_view")
        for name in STORE_STAGED:
            execute(con, name)
        record_files(
            con,
            [(e, digest, None if e.path in rejected else rid) for e, digest, rid in everything],
        )
        execute(con, "formats/multivon/excluded_case_problems")
        con.commit()
    except BaseException:
        roll_back(con)
        raise
    finally:
        # the staged rows are in the catalog now, or refused
        if cases_staged is not None and cases_staged.done() and not cases_staged.exception():
            parts += [done.table] if (done := cases_staged.result()) else []
        with contextlib.suppress(duckdb.Error):
            for part in parts:
                con.execute(fill_template("formats/multivon/drop_stage_table", table=part))


# Where stage_strict_parts parses, in an in-memory database of the connection's own (a
# load's scratch rows never reach the catalog's log): table names, an allow-list.
STAGE_DATABASE = "relidash_stage"
STAGE_PARTS = tuple(f"{STAGE_DATABASE}.part_{i}" for i in range(2))
STAGE_FRAMED = f"{STAGE_DATABASE}.framed"


def attach_stage(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(fill_template("formats/multivon/attach_stage", database=STAGE_DATABASE))


def stage_strict_parts(
    con: duckdb.DuckDBPyConnection,
    abspaths: list[str],
    names: tuple[str, ...] = STAGE_PARTS,
    cursors: list[duckdb.DuckDBPyConnection] | None = None,
) -> list[str]:
    """stage_reports_strict's rows of these files, in up to len(names) tables.

    DuckDB reads a read_text statement's files on one thread, so the strict parse of a
    batch of large files is split between statements run at once, each on its own cursor
    (DuckDB releases the GIL): `cursors`, one per name, or new ones; with a core to spare,
    the parts are parsed side by side. Each part commits on its own, so the caller's
    transaction must begin after this returns. Raises what DuckDB raises for a part (the
    first part's error first). With `cursors` (a BatchStager's, which attached the
    database), `con` itself is not used: it may be busy in another thread.
    """
    if not cursors:
        attach_stage(con)
    count = min(len(names), len(abspaths))
    # every other file to each part: a batch's large files are of similar sizes
    work = [(names[i], abspaths[i::count]) for i in range(count)]

    def stage(i: int) -> None:
        part, files = work[i]
        cursor = cursors[i] if cursors else con.cursor()
        try:
            cursor.execute(
                fill_template("formats/multivon/stage_reports_strict", table=part),
                {"files": files, "structure": REPORT_STRUCTURE},
            )
        finally:
            if not cursors:
                cursor.close()

    if count == 1:
        stage(0)
        return [names[0]]
    with ThreadPoolExecutor(max_workers=count - 1) as pool:
        others = [pool.submit(stage, i) for i in range(1, count)]
        try:
            stage(0)
        finally:
            errors = [future.exception() for future in others]
    for error in errors:
        if error is not None:
            raise error
    return [part for part, _ in work]


def stage_framed(
    con: duckdb.DuckDBPyConnection,
    frame: Frame,
    small: list[tuple[FileEntry, str, int]],
    max_bytes: int,
    table: str = STAGE_FRAMED,
    cursor: duckdb.DuckDBPyConnection | None = None,
) -> str:
    """stage_reports_framed's rows of these small files, as written to `frame`, in
    `table` (returned); FrameMismatch unless they are one row for each file. With
    `cursor` (a BatchStager's), `con` itself is not used."""
    if cursor is None:
        attach_stage(con)
    reader = cursor or con
    reader.execute(
        fill_template("formats/multivon/stage_reports_framed", table=table),
        {
            "frame": str(frame.path),
            "columns": {FRAME_TAG: "VARCHAR", **REPORT_COLUMNS},
            "tags": [frame.tag_of(rid) for _, _, rid in small],
            "abspaths": [e.abspath for e, _, _ in small],
            "max_bytes": reader_buffer_bytes(max(e.size for e, _, _ in small), max_bytes),
        },
    )
    counts = reader.execute(fill_template("formats/multivon/framed_counts", table=table))
    if counts.fetchall()[0] != (len(small), len(small)):
        reader.execute(fill_template("formats/multivon/drop_stage_table", table=table))
        raise FrameMismatch
    return table


def batch_files(
    con: duckdb.DuckDBPyConnection, items: Sequence[tuple[FileEntry, str, int]]
) -> None:
    """The temp table `batch_files` of these (file, digest, report id) items: the files
    the staged rows are read for, by path, absolute path, report id and mtime."""
    execute(
        con,
        "formats/multivon/batch_files",
        paths=[e.path for e, _, _ in items],
        abspaths=[e.abspath for e, _, _ in items],
        ids=[rid for _, _, rid in items],
        mtimes=[e.mtime_ns for e, _, _ in items],
    )


def stage_view(con: duckdb.DuckDBPyConnection, sources: list[str]) -> None:
    """The temp view `stage`: the rows of these tables (allow-listed names), by column name
    (formats/multivon/queries/stage_view.sql says why a view)."""
    con.execute(fill_template("formats/multivon/stage_view", sources=sources))


def flatten_cases(con: duckdb.DuckDBPyConnection, table: str, *, temp: bool = False) -> None:
    """stage_cases' rows (the cases of `stage`, for the files of `batch_files`) into
    `table`, an allow-listed name."""
    template = "formats/multivon/flatten_cases_temp" if temp else "formats/multivon/flatten_cases"
    con.execute(fill_template(template, table=table))


@dataclass(frozen=True)
class Flattened:
    """A batch's cases flattened ahead: the table that holds them, and what its staged
    rows say about its files."""

    table: str
    findings: Findings
