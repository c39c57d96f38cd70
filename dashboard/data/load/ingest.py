"""Bring a catalog up to date with a reports directory or another source (a prefix in
object storage, read through its local mirror: dashboard/data/sources/reports.py).

Only new and changed files are parsed (multivon-eval reports by DuckDB, in batches:
dashboard/data/formats/multivon/staging.py; every other harness's in Python, dashboard/data/load/rows.py);
deleted files are dropped. A file that cannot be used becomes one row in `problems` and never stops the
load. Report files are only ever read.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from dashboard.data.catalog import meta_values, roll_back, transaction, write_meta
from dashboard.data.catalog.problems import forget_files, record_file, record_files, record_problems
from dashboard.data.catalog.schema import REPORT_TABLES
from dashboard.data.formats import harness_for, staged_reader
from dashboard.data.formats.protocol import Settings
from dashboard.data.load.facts import (
    FileFacts,
    directory_facts,
    file_facts,
    unchanged_since_digest,
)
from dashboard.data.load.freshness import (  # catalog_version, directory_changed: re-exported
    catalog_version,  # noqa: F401
    directory_changed,  # noqa: F401
    known_digests,
    known_files,
    stored_parts,
    unchanged_key,
)
from dashboard.data.load.releases import assign_releases, release_config_digest
from dashboard.data.load.report_dirs import (
    ROOT_REPORT,
    group_report_directories,
    listed_reports,
    root_is_report,
)
from dashboard.data.load.rows import RowItem, insert_rows, read_rows
from dashboard.data.load.settings import (
    fingerprints,
    read_settings,
    record_settings_problems,
    settings_moved,
)
from dashboard.data.names import DEFAULT_MAX_BYTES
from dashboard.data.sources.reports import ReportSource, as_source
from dashboard.data.sources.walk import PART_OF_PATH, FileEntry, ListingParts, part_of

# A batch is parsed and stored in one transaction of about a dozen statements, whose fixed
# cost is tens of milliseconds: batches this large spread it over enough files that it is
# a small part of a load of large or of many small reports. The bytes bound what a batch
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
# bytes kept for framing stay two batches' worth (at most 2 x 512 x 256 KiB).
FACTS_AHEAD = 2 * BATCH_FILES
# Problems found by the walk (a directory named x.json, a symlink loop) have no row in
# `files`; they are found afresh each load, so last load's are dropped first.
WALK_PROBLEMS = (
    "FROM problems WHERE scope = 'file' AND file NOT IN (SELECT path FROM files "
    "WHERE path IN (SELECT file FROM problems WHERE scope = 'file'))"
)

ProgressFn = Callable[[int, int], None]
BatchFn = Callable[[list[int]], None]


@dataclass(frozen=True)
class IngestResult:
    files: int  # report files found
    parsed: int  # files parsed in this load (new or changed)
    unchanged: int
    removed: int
    problems: int  # rows in `problems` after the load
    seconds: float


def ingest_directory(
    con: duckdb.DuckDBPyConnection,
    reports: Path | ReportSource,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: ProgressFn | None = None,
    on_batch: BatchFn | None = None,
) -> IngestResult:
    """Parse new and changed report files into the catalog and drop deleted ones.

    `reports` is a directory or a source (a prefix in object storage). `on_batch` gets
    the report ids of each batch once it is committed (a file refused in the batch has
    no row in `reports` under its id). SourceError when the source cannot be listed or a
    file fetched: raised before the catalog changes, so no row is dropped for it.
    """
    source = as_source(reports)
    with _insertion_order_free(con):
        return _ingest(con, source, max_bytes=max_bytes, progress=progress, on_batch=on_batch)


@contextmanager
def _insertion_order_free(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Let DuckDB write rows in any order while loading: nested-column writes are several
    times faster.

    Nothing depends on the physical order: case, trial and grader positions are stored
    as columns, and every query whose order matters says ORDER BY.
    """
    before = con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0]
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
    except BaseException:
        # stopped inside a batch's transaction (Ctrl-C, a bug): end it, or the setting
        # below fails on the aborted transaction and hides what happened
        roll_back(con)
        raise
    finally:
        con.execute(f"SET preserve_insertion_order = {'true' if before else 'false'}")


def _ingest(
    con: duckdb.DuckDBPyConnection,
    source: ReportSource,
    *,
    max_bytes: int,
    progress: ProgressFn | None,
    on_batch: BatchFn | None,
) -> IngestResult:
    started = time.perf_counter()
    # Everything that talks to the source comes first: a listing or a download that fails
    # raises before the catalog changes.
    listing = source.listing()
    scan_problems = list(listing.problems) + source.fetch(listing, ())  # relidash.toml
    meta = meta_values(con)
    claimed = meta.get("reports_dir") == source.ident
    parts = listing.parts
    # Parts of the listing (top-level directories) unlike the ones the last load ended
    # with: only their files need a look, and only they can have lost a file. None at all
    # (the usual warm load) compares no file: at many files the per-file comparison is a
    # large share of the load.
    differing = parts.differing(stored_parts(con)) if claimed else set(parts.digests)
    config = source.config_file()
    settings = read_settings(config)
    fingerprint = fingerprints(settings)
    moved = settings_moved(meta.get("harness_settings"), fingerprint)
    settings_changed = bool(moved)
    # A harness's files map to rows by its table of relidash.toml: read again when the
    # table moved (with the files nothing loaded from, whose reason may have been the table's)
    forced = (
        set()
        if not settings_changed or not claimed
        else {
            path
            for (path,) in con.execute(
                "SELECT f.path FROM files f LEFT JOIN reports r USING (report_id) "
                "WHERE f.report_id IS NULL OR list_contains($h, r.harness)",
                {"h": sorted(moved)},
            ).fetchall()
        }
    )
    if differing and claimed and root_is_report(parts):
        differing |= set(parts.digests) | {part_of(ROOT_REPORT)}
    if forced or not claimed:
        # every record: `known` also tells which files the catalog holds
        known = known_files(con) if claimed else {}
        looked_at = listing.entries
    else:  # the records of the differing parts' files only
        known = known_files(con, differing) if differing else {}
        looked_at = parts.files_of(differing)
    looked_at, members = group_report_directories(looked_at)
    candidates = [e for e in looked_at if e.path in forced or known.get(e.path) != unchanged_key(e)]
    gone_since = source.fetch(
        listing, [p for e in candidates for p in members.get(e.path, (e.path,))]
    )
    scan_problems += gone_since
    vanished = {p.path for p in gone_since}
    vanished |= {d for d, files in members.items() if vanished.intersection(files)}
    entries = (
        [e for e in listing.entries if e.path not in vanished] if vanished else listing.entries
    )
    candidates = [e for e in candidates if e.path not in vanished]
    present = {e.path for e in looked_at} - vanished
    removed = [p for p in known if p not in present]

    previous_walk = set(con.execute(f"SELECT file, reason {WALK_PROBLEMS}").fetchall())
    walk_changed = previous_walk != {(p.path, p.reason) for p in scan_problems}
    config_digest = release_config_digest(config)
    config_changed = meta.get("release_config") != config_digest
    if claimed and not (differing or forced or settings_changed or walk_changed or config_changed):
        # The listing is the one the last load ended with: nothing to write. (A commit, even
        # of values already there, syncs the log, a noticeable share of a warm load.)
        listed = listed_reports(entries)
        return IngestResult(
            files=listed,
            parsed=0,
            unchanged=listed,
            removed=0,
            problems=con.execute("SELECT count(*) FROM problems").fetchall()[0][0],
            seconds=time.perf_counter() - started,
        )

    # the statements before the batches commit once (each commit syncs the log)
    with transaction(con):
        if not claimed:
            _claim_catalog(con, meta.get("reports_dir"))
        write_meta(
            con,
            {"reports_dir": source.ident, "ingest_complete": "0"}
            | ({"metrics_complete": "0"} if candidates else {}),
        )
        # the parts this load may change lose their digests until it is complete
        rewritten = differing | {part_of(path) for path in vanished} if claimed else None
        if rewritten is None:
            con.execute("DELETE FROM listing_parts")
        elif rewritten:
            con.execute(
                "DELETE FROM listing_parts WHERE part IN (SELECT unnest($p))",
                {"p": sorted(rewritten)},
            )
        first_new_id = con.execute(
            "SELECT coalesce(max(report_id), 0) + 1 FROM reports"
        ).fetchall()[0][0]
        # suites that lose or gain a report have their releases ranked again
        touched_suites = forget_files(con, removed + [p.path for p in scan_problems])
        if previous_walk:
            con.execute(f"DELETE {WALK_PROBLEMS}")
        record_problems(con, [(p.path, "file", p.reason) for p in scan_problems])

    counts = {"looked": 0, "touched": 0, "parsed": 0}
    total = len(candidates)
    if progress:
        progress(0, total)

    digests = known_digests(con, [e.path for e in candidates if e.path in known])
    local = source.local_root is not None  # a bucket's mirror copies are dated apart

    def changed_files(facts_of: Iterator[FileFacts]) -> Iterator[tuple[FileEntry, FileFacts]]:
        """Candidates whose bytes changed; the rest only get their new size and mtime."""
        for listed, facts in zip(candidates, facts_of, strict=True):
            counts["looked"] += 1
            entry = _as_digested(listed, facts) if local else listed
            if (
                facts.digest
                and digests.get(entry.path) == facts.digest
                and entry.path not in forced
            ):
                counts["touched"] += 1
                con.execute(
                    "UPDATE files SET size = $s, mtime_ns = $m, racy = $r, etag = $e "
                    "WHERE path = $p",
                    {
                        "s": entry.size,
                        "m": entry.mtime_ns,
                        "r": entry.racy,
                        "e": entry.etag,
                        "p": entry.path,
                    },
                )
                continue
            yield entry, facts

    next_id: int = int(first_new_id)

    def take_id() -> int:
        """The next report id (a file read in Python may hold several reports)."""
        nonlocal next_id
        next_id += 1
        return next_id - 1

    reader = staged_reader()

    def prepare(batch: list[tuple[FileEntry, FileFacts]], stager: Any) -> _Prepared:
        """Judge a batch's files, give the parseable ones their ids, begin its strict parse."""
        nonlocal next_id, touched_suites
        touched_suites |= forget_files(con, [e.path for e, _ in batch if e.path in known])
        prepared = _Prepared(len(batch), batch)
        texts: dict[str, bytes] = {}  # the framed files' bytes, for the stager's frame
        for entry, facts in batch:
            harness = harness_for(entry.path, facts.leading)
            if not harness.staged:
                prepared.logs.append((entry, facts.digest, harness.name))
                continue
            suspicious = bool(facts.maybe_constants or facts.maybe_deep)
            reason = reader.judge(entry, max_bytes, facts.data, suspicious)
            if reason:
                record_file(con, entry, facts.digest, None)
                record_problems(con, [(entry.path, "file", reason)])
                continue
            item = (entry, facts.digest, next_id)
            next_id += 1
            if entry.path in strict_first:
                prepared.large.append(item)
            elif facts.data is not None:
                prepared.framed.append(item)
                texts[entry.path] = facts.data
            else:
                prepared.rest.append(item)
        if prepared.large or prepared.framed:
            prepared.staged = stager.start(prepared.large, prepared.framed, texts, max_bytes)
        return prepared

    def store(prepared: _Prepared) -> None:
        """Parse what the batch's readers have not, and store the batch."""
        large, framed = prepared.large, prepared.framed
        reader.store(con, large, framed, prepared.rest, prepared.staged, max_bytes)
        read_ids = _load_rows_batch(con, prepared.logs, settings, max_bytes, take_id)
        _distrust_changed(con, prepared)
        parsed = sorted(rid for _, _, rid in large + framed + prepared.rest)  # file order
        if on_batch and (parsed or read_ids):
            on_batch(parsed + read_ids)
        counts["parsed"] += prepared.files
        if progress:
            progress(counts["looked"], total)

    # Digests and warning signs are computed ahead in a worker thread, so the Python pass
    # over the bytes overlaps DuckDB's parse (which releases the GIL); each batch is
    # prepared, and its strict parse begun, before the batch ahead of it is stored.
    with (
        ThreadPoolExecutor(max_workers=1) as pool,
        tempfile.TemporaryDirectory(prefix="relidash-load-", dir=_memory_backed_tmp()) as scratch,
        reader.stager(con, Path(scratch)) as stager,
    ):
        strict_first = {
            e.path
            for e in candidates
            if e.size >= STRICT_MIN_BYTES
            and not e.path.endswith("/")
            and reader.tries_strict_first(e.abspath)
        }
        # Those leave NaN / Infinity to the strict parse (a tenth of the cost there).
        facts_ahead = _facts_ahead(pool, candidates, strict_first)
        ahead: _Prepared | None = None
        for batch in _batches(changed_files(facts_ahead)):
            prepared = prepare(batch, stager)
            if ahead is not None:
                store(ahead)
            ahead = prepared
        if ahead is not None:
            store(ahead)
    if progress and total:
        progress(total, total)
    touched = counts["touched"]
    to_parse = counts["parsed"]
    gone = removed

    written: dict[str, str] = {}
    with transaction(con):  # what follows the batches, in one commit too
        if to_parse or gone or config_changed:
            # a suite's releases are ordered among themselves: only suites that gained or lost a
            # report are ranked again, unless relidash.toml changed
            touched_suites |= {
                suite
                for (suite,) in con.execute(
                    "SELECT DISTINCT suite FROM reports WHERE report_id >= $first",
                    {"first": first_new_id},
                ).fetchall()
            }
            ranked = None if config_changed else sorted(touched_suites)
            relabelled = assign_releases(con, config, ranked)
            if relabelled:  # stored summary entries carry the release label
                con.execute(
                    "DELETE FROM report_records WHERE report_id IN (SELECT unnest($ids))",
                    {"ids": relabelled},
                )
            written["release_config"] = config_digest
        # assign_releases (run when anything was parsed) clears relidash.toml's problems
        if settings_changed or to_parse or gone or config_changed:
            record_settings_problems(con, settings)
            written["harness_settings"] = json.dumps(fingerprint, sort_keys=True)
        _store_parts(con, ListingParts.of(entries) if vanished else parts, rewritten)
        changed = bool(to_parse or gone or walk_changed or config_changed or touched)
        version = int(meta.get("version") or 0) + (1 if changed else 0)
        write_meta(con, written | {"ingest_complete": "1", "version": str(version)})
    n_problems = con.execute("SELECT count(*) FROM problems").fetchall()[0][0]
    listed = listed_reports(entries)
    return IngestResult(
        files=listed,
        parsed=to_parse,
        unchanged=listed - to_parse,
        removed=len(removed),
        problems=n_problems,
        seconds=time.perf_counter() - started,
    )


@dataclass
class _Prepared:
    """A batch judged and given its report ids, waiting to be stored: its files by reader."""

    files: int  # the batch's files, parseable or not
    read: list[tuple[FileEntry, FileFacts]]  # each file as digested
    large: list[tuple[FileEntry, str, int]] = field(default_factory=list)  # strict first
    framed: list[tuple[FileEntry, str, int]] = field(default_factory=list)  # in a frame
    rest: list[tuple[FileEntry, str, int]] = field(default_factory=list)  # the JSON reader's
    logs: list[RowItem] = field(default_factory=list)  # read in Python by their harness
    staged: Any = None  # the reader's parses of `large` and `framed`, begun


def _as_digested(entry: FileEntry, facts: FileFacts) -> FileEntry:
    """The listed file with the size and mtime of the bytes digested, when it was written
    between the listing and the digest: what the file is judged by (empty, over the size
    limit, DuckDB's buffer for it) and recorded as must be those bytes', not the listing's.
    Recorded racy: its part's listing no longer describes it."""
    if facts.stamp is None or (facts.stamp[0], facts.stamp[1]) == (entry.size, entry.mtime_ns):
        return entry
    return entry._replace(size=facts.stamp[0], mtime_ns=facts.stamp[1], racy=True)


def _distrust_changed(con: duckdb.DuckDBPyConnection, prepared: _Prepared) -> None:
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
        con.execute(
            "UPDATE files SET digest = '', racy = true WHERE path IN (SELECT unnest($p))",
            {"p": changed},
        )


def _store_parts(
    con: duckdb.DuckDBPyConnection, parts: ListingParts, rewritten: set[str] | None
) -> None:
    """Keep the digests of the listing parts the catalog now matches: the `rewritten`
    parts (None: every part) of the listing the load ended with, except those holding a
    file recorded as racy. The other parts' stored digests still hold."""
    if rewritten is not None and not rewritten:
        return
    racy = {
        part
        for (part,) in con.execute(
            f"SELECT DISTINCT {PART_OF_PATH} FROM files WHERE racy"  # a constant expression
        ).fetchall()
    }
    kept = {
        p: d
        for p, d in parts.digests.items()
        if (rewritten is None or p in rewritten) and p not in racy
    }
    if kept:
        con.execute(
            "INSERT INTO listing_parts SELECT unnest($p), unnest($d)",
            {"p": list(kept), "d": list(kept.values())},
        )


def _claim_catalog(con: duckdb.DuckDBPyConnection, previous: str | None) -> None:
    """A catalog describes one source; pointed at another (`previous`, None for a new
    catalog), it starts over. The caller records the new source."""
    if previous is not None:
        for table in (*REPORT_TABLES, "files", "problems"):
            con.execute(f"DELETE FROM {table}")  # table names from the allow-list


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
