"""A plan's candidate files read in batches, harness by harness.

Digests and warning signs are computed ahead in a worker thread, so the Python pass over
the bytes overlaps DuckDB's parse (which releases the GIL); each batch is prepared, and
its strict parse begun, before the batch ahead of it is stored. A file whose bytes are
unchanged only takes its new stat. multivon-eval's files go to the staged reader
(formats/multivon/reader.py); every other harness's are read in Python (rows.py).

Must not: import Streamlit or Altair; write anywhere but the catalog.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from dashboard.data.catalog import transaction
from dashboard.data.catalog.problems import forget_files, record_file, record_files, record_problems
from dashboard.data.catalog.queries import execute
from dashboard.data.formats import harness_for, staged_reader
from dashboard.data.formats.protocol import Settings
from dashboard.data.load.facts import (
    FileFacts,
    directory_facts,
    file_facts,
    unchanged_since_digest,
)
from dashboard.data.load.freshness import known_digests
from dashboard.data.load.plan import LoadPlan
from dashboard.data.load.rows import RowItem, insert_rows, read_rows
from dashboard.data.sources.walk import FileEntry

# A batch is parsed and stored in one transaction of about a dozen statements, whose cost
# does not shrink with the batch: batches this large spread it over enough files that it
# stays a small part of a load of large or of many small reports. The bytes bound what a batch
# holds in memory at once (DuckDB's read of large files).
BATCH_BYTES = 192 * 1024 * 1024
BATCH_FILES = 512
# Files at least this large whose head shows every field (0.19+) are parsed by the strict
# fast path first (stage_reports_strict): where parsing dominates, and where it succeeds.
# The rest go straight to DuckDB's JSON reader.
STRICT_MIN_BYTES = 1 * 1024 * 1024
# Files smaller than this are kept in memory from their digest on and parsed together,
# framed as one JSON array (stage_reports_framed): DuckDB's reader has a cost per file it
# opens, more than it takes to parse a small report.
FRAMED_BELOW = 256 * 1024
# Digests are computed this many files ahead of the batch being parsed, no further: the
# bytes kept for framing stay two batches' worth (BATCH_FILES files below FRAMED_BELOW).
FACTS_AHEAD = 2 * BATCH_FILES

ProgressFn = Callable[[int, int], None]
BatchFn = Callable[[list[int]], None]
Item = tuple[FileEntry, str, int]  # (entry, digest, report_id)


@dataclass
class Prepared:
    """A batch judged and given its report ids, waiting to be stored: its files by reader."""

    files: int  # the batch's files, parseable or not
    read: list[tuple[FileEntry, FileFacts]]  # each file as digested
    large: list[Item] = field(default_factory=list)  # strict first
    framed: list[Item] = field(default_factory=list)  # in a frame
    rest: list[Item] = field(default_factory=list)  # the JSON reader's
    logs: list[RowItem] = field(default_factory=list)  # read in Python by their harness
    staged: Any = None  # the reader's parses of `large` and `framed`, begun


class BatchLoad:
    """The plan's candidates, read and stored batch by batch (`run`)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        plan: LoadPlan,
        first_id: int,
        *,
        max_bytes: int,
        progress: ProgressFn | None,
        on_batch: BatchFn | None,
    ) -> None:
        self.con, self.plan, self.max_bytes = con, plan, max_bytes
        self.progress, self.on_batch = progress, on_batch
        self.next_id = first_id
        self.reader = staged_reader()
        self.looked = self.touched = self.parsed = 0
        self.touched_suites: set[str] = set()  # suites that lost a report to a changed file
        self.strict_first: set[str] = set()
        candidates = plan.candidates
        self.digests = known_digests(con, [e.path for e in candidates if e.path in plan.known])
        self.local = plan.source.local_root is not None  # a bucket's copies are dated apart

    def run(self) -> None:
        candidates = self.plan.candidates
        if self.progress:
            self.progress(0, len(candidates))
        with (
            ThreadPoolExecutor(max_workers=1) as pool,
            tempfile.TemporaryDirectory(prefix="relidash-load-", dir=_memory_backed_tmp()) as tmp,
            self.reader.stager(self.con, Path(tmp)) as stager,
        ):
            self.strict_first = {
                e.path
                for e in candidates
                if e.size >= STRICT_MIN_BYTES
                and not e.path.endswith("/")
                and self.reader.tries_strict_first(e.abspath)
            }
            # Those leave NaN / Infinity to the strict parse (a tenth of the cost there).
            facts_ahead = _facts_ahead(pool, candidates, self.strict_first)
            ahead: Prepared | None = None
            for batch in _batches(self._changed_files(facts_ahead)):
                prepared = self._prepare(batch, stager)
                if ahead is not None:
                    self._store(ahead)
                ahead = prepared
            if ahead is not None:
                self._store(ahead)
        if self.progress and candidates:
            self.progress(len(candidates), len(candidates))

    def _changed_files(
        self, facts_of: Iterator[FileFacts]
    ) -> Iterator[tuple[FileEntry, FileFacts]]:
        """Candidates whose bytes changed; the rest only get their new size and mtime."""
        for listed, facts in zip(self.plan.candidates, facts_of, strict=True):
            self.looked += 1
            entry = _as_digested(listed, facts) if self.local else listed
            if (
                facts.digest
                and self.digests.get(entry.path) == facts.digest
                and entry.path not in self.plan.forced
            ):
                self.touched += 1
                execute(
                    self.con,
                    "load/update_file_stat",
                    path=entry.path,
                    size=entry.size,
                    mtime_ns=entry.mtime_ns,
                    racy=entry.racy,
                    etag=entry.etag,
                )
                continue
            yield entry, facts

    def _take_id(self) -> int:
        """The next report id (a file read in Python may hold several reports)."""
        self.next_id += 1
        return self.next_id - 1

    def _prepare(self, batch: list[tuple[FileEntry, FileFacts]], stager: Any) -> Prepared:
        """Judge a batch's files, give the parseable ones their ids, begin its strict parse."""
        con, known = self.con, self.plan.known
        self.touched_suites |= forget_files(con, [e.path for e, _ in batch if e.path in known])
        prepared = Prepared(len(batch), batch)
        texts: dict[str, bytes] = {}  # the framed files' bytes, for the stager's frame
        for entry, facts in batch:
            harness = harness_for(entry.path, facts.leading)
            if not harness.staged:
                prepared.logs.append((entry, facts.digest, harness.name))
                continue
            suspicious = bool(facts.maybe_constants or facts.maybe_deep)
            reason = self.reader.judge(entry, self.max_bytes, facts.data, suspicious)
            if reason:
                record_file(con, entry, facts.digest, None)
                record_problems(con, [(entry.path, "file", reason)])
                continue
            item = (entry, facts.digest, self._take_id())
            if entry.path in self.strict_first:
                prepared.large.append(item)
            elif facts.data is not None:
                prepared.framed.append(item)
                texts[entry.path] = facts.data
            else:
                prepared.rest.append(item)
        if prepared.large or prepared.framed:
            prepared.staged = stager.start(prepared.large, prepared.framed, texts, self.max_bytes)
        return prepared

    def _store(self, prepared: Prepared) -> None:
        """Parse what the batch's readers have not, and store the batch."""
        large, framed, rest = prepared.large, prepared.framed, prepared.rest
        self.reader.store(self.con, large, framed, rest, prepared.staged, self.max_bytes)
        read_ids = _load_rows_batch(
            self.con, prepared.logs, self.plan.settings, self.max_bytes, self._take_id
        )
        _distrust_changed(self.con, prepared)
        parsed = sorted(rid for _, _, rid in large + framed + rest)  # file order
        if self.on_batch and (parsed or read_ids):
            self.on_batch(parsed + read_ids)
        self.parsed += prepared.files
        if self.progress:
            self.progress(self.looked, len(self.plan.candidates))


def _as_digested(entry: FileEntry, facts: FileFacts) -> FileEntry:
    """The listed file with the size and mtime of the bytes digested, when it was written
    between the listing and the digest: what the file is judged by (empty, over the size
    limit, DuckDB's buffer for it) and recorded as must be those bytes', not the listing's.
    Recorded racy: its part's listing no longer describes it."""
    if facts.stamp is None or (facts.stamp[0], facts.stamp[1]) == (entry.size, entry.mtime_ns):
        return entry
    return entry._replace(size=facts.stamp[0], mtime_ns=facts.stamp[1], racy=True)


def _distrust_changed(con: duckdb.DuckDBPyConnection, prepared: Prepared) -> None:
    """Take the digest from each file of a stored batch whose bytes may have changed
    between its digest and its parse (a report rewritten in place while the load ran):
    its record is then racy with no digest, so the next load parses it again, and a
    review, finding no digest to match, binds no SHA-256 to these numbers.

    The framed files were parsed from the bytes digested: their stat alone is compared
    (a framed batch that falls back to DuckDB's reader reads the file again).
    """
    in_memory = {e.path for e, _, _ in prepared.framed}
    changed = [
        entry.path
        for entry, facts in prepared.read
        if facts.digest
        and not unchanged_since_digest(entry.abspath, facts, reread=entry.path not in in_memory)
    ]
    if changed:
        execute(con, "load/distrust_files", paths=changed)


def _facts(abspath: str, constants: bool) -> FileFacts:
    try:
        if os.path.isdir(abspath):
            return directory_facts(abspath)
        return file_facts(abspath, constants=constants, keep_below=FRAMED_BELOW)
    except OSError:
        return FileFacts("", False, False)  # the reader's judgement names the reason


def _memory_backed_tmp() -> str | None:
    """/dev/shm where it can be written (the framed batches never touch a disk), else the
    system's temporary directory."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def _facts_ahead(
    pool: ThreadPoolExecutor, candidates: list[FileEntry], strict_first: set[str]
) -> Iterator[FileFacts]:
    """Each candidate's facts, in order, computed in `pool` at most FACTS_AHEAD files ahead."""
    pending: deque[Future[FileFacts]] = deque()
    for entry in candidates:
        pending.append(pool.submit(_facts, entry.abspath, entry.path not in strict_first))
        if len(pending) >= FACTS_AHEAD:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _batches(
    items: Iterable[tuple[FileEntry, FileFacts]],
) -> Iterator[list[tuple[FileEntry, FileFacts]]]:
    batch: list[tuple[FileEntry, FileFacts]] = []
    size = 0
    for item in items:
        if batch and (size + item[0].size > BATCH_BYTES or len(batch) >= BATCH_FILES):
            yield batch
            batch, size = [], 0
        batch.append(item)
        size += item[0].size
    if batch:
        yield batch


def _load_rows_batch(
    con: duckdb.DuckDBPyConnection,
    items: list[RowItem],
    settings: dict[str, Settings],
    max_bytes: int,
    take_id: Callable[[], int],
) -> list[int]:
    """Read a batch's files of the harnesses read in Python (before the transaction) and
    store them in one; the ids of the reports stored."""
    if not items:
        return []
    batch = read_rows(items, settings, max_bytes, take_id)
    with transaction(con):
        insert_rows(con, batch)
        record_files(con, batch.files)
        record_problems(con, batch.problems)
    return [report_id for _, report_id, _ in batch.loaded]
