"""multivon-eval's reader as the loader calls it (formats/protocol.py StagedReader): which
files DuckDB may read and how, and a batch staged and stored.

A batch's files come in three parts: large reports that show every field (0.19+), parsed
strictly first; small ones framed together as one JSON array; the rest through DuckDB's
JSON reader (staging.py). The stager begins the first two while the batch ahead is stored.

Must not: import Streamlit or Altair.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from dashboard.data.formats.multivon.checks import (
    head_has_every_field,
    precheck_file,
    strict_json_problem,
)
from dashboard.data.formats.multivon.stager import BatchStager, Staged
from dashboard.data.formats.multivon.staging import parse_batch, parse_strict_and_framed
from dashboard.data.sources.walk import FileEntry

Item = tuple[FileEntry, str, int]  # (entry, digest, report_id)


class MultivonReader:
    def judge(
        self, entry: FileEntry, max_bytes: int, data: bytes | None, suspicious: bool
    ) -> str | None:
        """Why the file cannot be read as a report (None: it may be). `suspicious`: its
        bytes showed NaN / Infinity or deep nesting, which only a strict parse settles."""
        reason = precheck_file(entry, max_bytes, data)
        if not reason and suspicious:
            reason = strict_json_problem(entry.abspath)
        return reason

    def tries_strict_first(self, abspath: str) -> bool:
        return head_has_every_field(abspath)

    def stager(self, con: duckdb.DuckDBPyConnection, scratch: Path) -> BatchStager:
        return BatchStager(con, scratch)

    def store(
        self,
        con: duckdb.DuckDBPyConnection,
        large: list[Item],
        framed: list[Item],
        rest: list[Item],
        staged: Any,
        max_bytes: int,
    ) -> None:
        """Parse what the stager has not, and store the batch's three parts."""
        staged = staged if staged is not None else Staged()
        frame = staged.frame  # None: no frame (the stager had no scratch directory)
        if large and framed and frame:  # one transaction for both
            parse_strict_and_framed(
                con, large, framed, max_bytes, frame, staged.strict, staged.framed, staged.cases
            )
        else:
            # only one part was begun: its cases were flattened alone
            if large:
                parse_batch(
                    con,
                    large,
                    max_bytes,
                    reader="strict",
                    staged=staged.strict,
                    cases_staged=staged.cases,
                )
            if framed and frame:
                parse_batch(
                    con,
                    framed,
                    max_bytes,
                    reader="framed",
                    frame=frame,
                    framed_staged=staged.framed,
                    cases_staged=staged.cases,
                )
            elif framed:
                parse_batch(con, framed, max_bytes)
        if rest:
            parse_batch(con, rest, max_bytes)


READER = MultivonReader()
