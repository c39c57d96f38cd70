"""Begin a batch's parses in the background (BatchStager), so that the next batch is
parsed while the one before it is stored: the strict parse of its large files, the frame
of its small ones (written, then read) and the flattening of both, each on a thread and
cursor of its own. The readers themselves, and the store that takes what they staged,
are dashboard/data/formats/multivon/staging.py's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import duckdb

# the readers are called through their module (staging.stage_framed, ...), as the store
# calls them: a reader replaced there (the tests' spies on where a parse ran) is replaced
# for both
import dashboard.data.formats.multivon.staging as staging
from dashboard.data.catalog.queries import execute, fill_template
from dashboard.data.formats.multivon.findings import staged_findings
from dashboard.data.formats.multivon.staging import (
    STAGE_DATABASE,
    STAGE_PARTS,
    Flattened,
    Frame,
    FrameUnwritten,
    attach_stage,
)
from dashboard.data.sources.walk import FileEntry


def _frame_and_stage(
    con: duckdb.DuckDBPyConnection,
    frame: Frame,
    items: list[tuple[int, bytes]],
    small: list[tuple[FileEntry, str, int]],
    max_bytes: int,
    table: str,
    cursor: duckdb.DuckDBPyConnection,
) -> str:
    """Write the small files' bytes (`items`: report id, bytes) to `frame`, then stage them
    (stage_framed), on the stager's thread."""
    if not frame.write(items):
        raise FrameUnwritten(str(frame.path))
    return staging.stage_framed(con, frame, small, max_bytes, table, cursor)


def _flatten_ahead(
    cursor: duckdb.DuckDBPyConnection,
    begun: list[Future[list[str]] | Future[str]],
    items: list[tuple[FileEntry, str, int]],
    table: str,
    strict: bool,
) -> Flattened | None:
    """The cases of a batch parsed ahead (`begun`, done), flattened into `table` on the
    stager's own cursor, whose temp `stage` and `batch_files` are this batch's, and the
    staged rows' findings; None when a parse failed (the store then parses again, and
    flattens there)."""
    if any(future.exception() is not None for future in begun):
        return None
    sources: list[str] = []
    for future in begun:
        result = future.result()
        sources += result if isinstance(result, list) else [result]
    staging.stage_view(cursor, sources)
    staging.batch_files(cursor, items)
    staging.flatten_cases(cursor, table)
    return Flattened(table, staged_findings(cursor, strict=strict))


@dataclass
class Staged:
    """A batch's parses begun by a BatchStager: its strict parts and its framed table
    (each None when the batch has no such files), and the frame its small files are
    written to (None when the stager has no scratch directory for frames: those files go
    to the JSON reader). A frame that cannot be written fails its future (FrameUnwritten),
    which sends those files to the JSON reader too."""

    strict: Future[list[str]] | None = None
    framed: Future[str] | None = None
    frame: Frame | None = None
    cases: Future[Flattened | None] | None = None  # both parts' cases, flattened


class BatchStager:
    """Parses a batch's large files (stage_strict_parts) and its small ones (stage_framed)
    in the background, so that the next batch's parse runs while the one before it is
    stored: storing is mostly one-threaded statements, which leave a core partly idle in a
    cold load of large reports, and the framed read, on the thread that stores, would be
    the longest statement of a mixed batch's store.

    The large files' parse, the small files' frame (written, then read) and the
    flattening of both each have a thread and cursors of their own: one after the other
    on one thread, they would be the load's chain (that thread busy nearly all the time,
    the thread that stores the batches waiting for it), and the next batch's parse would
    wait for this one's flattening.
    A batch's parses go into one of two sets of tables (and frames) taken in turn: its
    tables stay in place while the next one's are written, until its own store drops
    them. The caller's transaction begins after the futures are done.
    """

    SLOTS = tuple(
        tuple(f"{STAGE_DATABASE}.ahead_{slot}_{i}" for i in range(len(STAGE_PARTS)))
        for slot in range(2)
    )
    FRAMED_SLOTS = tuple(f"{STAGE_DATABASE}.framed_{slot}" for slot in range(2))
    CASES_SLOTS = tuple(f"{STAGE_DATABASE}.cases_{slot}" for slot in range(2))

    def __init__(self, con: duckdb.DuckDBPyConnection, scratch: Path | None = None) -> None:
        self.con = con
        # the frames small files are written to, one per slot (scratch: a directory the
        # load owns; without one, small files are not framed ahead)
        self.frames = (
            [Frame(scratch / f"batch-{slot}.json") for slot in range(2)] if scratch else []
        )
        # made at the first start (a load of Inspect logs alone never starts one): one
        # for each strict part, then the flattening's and the frame's
        self.cursors: list[duckdb.DuckDBPyConnection] = []
        # a thread for each kind of work: a batch's flattening waits for its parses, and
        # the next batch's strict parse need not wait for that flattening
        self.pools = tuple(
            ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"relidash-{kind}")
            for kind in ("strict", "frame", "flatten")
        )
        self.strict_pool, self.frame_pool, self.flatten_pool = self.pools
        self.turn = 0

    def start(
        self,
        large: Sequence[tuple[FileEntry, str, int]],
        small: Sequence[tuple[FileEntry, str, int]] = (),
        texts: dict[str, bytes] | None = None,
        max_bytes: int = 0,
    ) -> Staged:
        """Begin the strict parse of the `large` files and the framed read of the `small`
        ones (whose bytes are `texts`, by path: the stager writes them to its frame), then
        the flattening of their cases; call from the thread that owns `con`."""
        abspaths = [e.abspath for e, _, _ in large]
        if not self.cursors:
            attach_stage(self.con)
            self.cursors = [self.con.cursor() for _ in range(len(STAGE_PARTS) + 2)]
            execute(self.flatten_cursor, "catalog/macros")  # temp macros: each cursor its own
        turn, self.turn = self.turn, 1 - self.turn
        staged = Staged()
        if abspaths:
            parts = self.cursors[: len(STAGE_PARTS)]
            staged.strict = self.strict_pool.submit(
                staging.stage_strict_parts, self.con, abspaths, self.SLOTS[turn], parts
            )
        if small and self.frames:
            assert texts is not None
            staged.frame = self.frames[turn]
            staged.framed = self.frame_pool.submit(
                _frame_and_stage,
                self.con,
                staged.frame,
                [(rid, texts[e.path]) for e, _, rid in small],
                list(small),
                max_bytes,
                self.FRAMED_SLOTS[turn],
                self.cursors[-1],
            )
        begun = [f for f in (staged.strict, staged.framed) if f is not None]
        if begun:
            items = [*large, *(small if staged.framed is not None else ())]
            staged.cases = self.flatten_pool.submit(
                _flatten_ahead,
                self.flatten_cursor,
                begun,
                items,
                self.CASES_SLOTS[turn],
                staged.strict is not None,
            )
        return staged

    @property
    def flatten_cursor(self) -> duckdb.DuckDBPyConnection:
        return self.cursors[len(STAGE_PARTS)]

    def __enter__(self) -> BatchStager:
        return self

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        if not self.cursors:  # never started: nothing to stop or drop
            for pool in self.pools:
                pool.shutdown()
            return
        if kind is not None:  # stopped midway (Ctrl-C, a bug): do not wait out a parse
            for cursor in self.cursors:
                with contextlib.suppress(duckdb.Error):
                    cursor.interrupt()
        for pool in self.pools:  # the flattening last: it waits for the others
            pool.shutdown(wait=True, cancel_futures=kind is not None)
        for cursor in self.cursors:
            cursor.close()
        with contextlib.suppress(duckdb.Error):
            for table in (
                *(p for slot in self.SLOTS for p in slot),
                *self.FRAMED_SLOTS,
                *self.CASES_SLOTS,
            ):
                self.con.execute(fill_template("formats/multivon/drop_stage_table", table=table))
