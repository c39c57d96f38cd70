"""Bring a catalog up to date with a reports directory or another source (a prefix in
object storage, read through its local mirror: dashboard/data/sources/reports.py).

Only new and changed files are parsed (multivon-eval reports by DuckDB's JSON reader, in
batches; Inspect logs in Python, dashboard/data/ingest_inspect.py); deleted files are
dropped. A file that cannot be used becomes one row in `problems` and never stops the
load. Report files are only ever read.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from dashboard.data.formats import INSPECT, harness_of
from dashboard.data.formats.inspect import CONFIG_NAME, InspectSettings, read_inspect_settings
from dashboard.data.freshness import (  # catalog_version, directory_changed: re-exported
    catalog_version,  # noqa: F401
    directory_changed,  # noqa: F401
    is_changed,
    known_files,
    meta_value,
)
from dashboard.data.ingest_inspect import insert_inspect_rows, read_inspect_logs
from dashboard.data.queries import execute
from dashboard.data.releases import assign_releases, release_config_digest
from dashboard.data.scan import (
    MIB,
    FileEntry,
    FileFacts,
    file_facts,
    has_constant_literal,
    head_has_every_field,
    precheck_file,
    strict_json_problem,
)
from dashboard.data.schema import REPORT_COLUMNS, REPORT_STRUCTURE, REPORT_TABLES
from dashboard.data.sources.reports import ReportSource, as_source

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
BATCH_BYTES = 48 * 1024 * 1024
BATCH_FILES = 128
# Files at least this large whose head shows every field (0.19+) are parsed by the strict
# fast path first (stage_reports_strict): where parsing dominates, and where it succeeds.
# The rest go straight to DuckDB's JSON reader.
STRICT_MIN_BYTES = 1 * 1024 * 1024

ProgressFn = Callable[[int, int], None]
BatchFn = Callable[[list[int]], None]

# What a bad file can make DuckDB raise. Anything else (a binder or parser error) is a
# bug in relidash's SQL and must surface, not be blamed on the user's files.
_DATA_ERRORS = (
    duckdb.InvalidInputException,
    duckdb.ConversionException,
    duckdb.OutOfRangeException,
    duckdb.IOException,
    duckdb.SerializationException,
    # DuckDB can cut a multi-byte character when it quotes a bad value in its message,
    # and the message then fails to decode: still a data error, with an unreadable text.
    UnicodeDecodeError,
)


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
    """Let DuckDB write rows in any order while loading: 3.5x faster nested-column writes.

    Nothing depends on the physical order: case, trial and grader positions are stored
    as columns, and every query whose order matters says ORDER BY.
    """
    before = con.execute("SELECT current_setting('preserve_insertion_order')").fetchall()[0][0]
    con.execute("SET preserve_insertion_order = false")
    try:
        yield
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
    claimed = meta_value(con, "reports_dir") == source.ident
    known = known_files(con) if claimed else {}
    config = source.config_file()
    settings = read_inspect_settings(config)
    settings_changed = meta_value(con, "inspect_settings") != settings.fingerprint()
    # Inspect logs map to rows by relidash.toml's [inspect] table: read again when it moved
    # (with the files nothing loaded from, whose reason may have been the table's)
    forced = (
        set()
        if not settings_changed or not claimed
        else {
            path
            for (path,) in con.execute(
                "SELECT f.path FROM files f LEFT JOIN reports r USING (report_id) "
                "WHERE f.report_id IS NULL OR r.harness = $h",
                {"h": INSPECT},
            ).fetchall()
        }
    )
    candidates = [
        e for e in listing.entries if e.path in forced or is_changed(e, known.get(e.path))
    ]
    gone_since = source.fetch(listing, [e.path for e in candidates])
    scan_problems += gone_since
    vanished = {p.path for p in gone_since}
    entries = [e for e in listing.entries if e.path not in vanished]
    candidates = [e for e in candidates if e.path not in vanished]
    present = {e.path for e in entries}
    removed = [p for p in known if p not in present]

    _claim_catalog(con, source.ident)
    suites_before = dict(con.execute("SELECT report_id, suite FROM reports").fetchall())
    con.execute("INSERT OR REPLACE INTO meta VALUES ('ingest_complete', '0')")
    _forget_files(con, removed + [p.path for p in scan_problems])
    # Problems found by the walk (a directory named x.json, a symlink loop) have no row in
    # `files`; they are found afresh each load, so last load's are dropped first.
    walk_problems = "FROM problems WHERE scope = 'file' AND file NOT IN (SELECT path FROM files)"
    previous_walk = set(con.execute(f"SELECT file, reason {walk_problems}").fetchall())
    con.execute(f"DELETE {walk_problems}")
    _record_problems(con, [(p.path, "file", p.reason) for p in scan_problems])
    walk_changed = previous_walk != {(p.path, p.reason) for p in scan_problems}

    counts = {"looked": 0, "touched": 0, "parsed": 0}
    total = len(candidates)
    if progress:
        progress(0, total)

    def changed_files(facts_of: Iterator[FileFacts]) -> Iterator[tuple[FileEntry, FileFacts]]:
        """Candidates whose bytes changed; the rest only get their new size and mtime."""
        for entry, facts in zip(candidates, facts_of, strict=True):
            counts["looked"] += 1
            previous = known.get(entry.path)
            if (
                previous
                and facts.digest
                and previous[2] == facts.digest
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

    next_id = con.execute("SELECT coalesce(max(report_id), 0) + 1 FROM reports").fetchall()[0][0]
    # Digests and warning signs are computed one file ahead in a worker thread, so the
    # Python pass over the bytes overlaps DuckDB's parse (which releases the GIL).
    with ThreadPoolExecutor(max_workers=1) as pool:
        strict_first = {
            e.path
            for e in candidates
            if e.size >= STRICT_MIN_BYTES and head_has_every_field(e.abspath)
        }
        # Those leave NaN / Infinity to the strict parse (a tenth of the cost there).
        facts_ahead = (
            f.result()
            for f in [
                pool.submit(_facts, e.abspath, e.path not in strict_first) for e in candidates
            ]
        )
        for batch in _batches(changed_files(facts_ahead)):
            _forget_files(con, [e.path for e, _ in batch if e.path in known])
            parseable: list[tuple[FileEntry, str, int]] = []
            logs: list[tuple[FileEntry, str, int]] = []
            for entry, facts in batch:
                if harness_of(entry.path, facts.leading) == INSPECT:
                    logs.append((entry, facts.digest, next_id))
                    next_id += 1
                    continue
                reason = precheck_file(entry, max_bytes)
                if not reason and (facts.maybe_constants or facts.maybe_deep):
                    reason = strict_json_problem(entry.abspath)
                if reason:
                    _record_file(con, entry, facts.digest, None)
                    _record_problems(con, [(entry.path, "file", reason)])
                else:
                    parseable.append((entry, facts.digest, next_id))
                    next_id += 1
            large = [p for p in parseable if p[0].path in strict_first]
            small = [p for p in parseable if p[0].path not in strict_first]
            if large:
                _parse_batch(con, large, max_bytes, strict=True)
            if small:
                _parse_batch(con, small, max_bytes)
            if logs:
                _load_inspect_batch(con, logs, settings, max_bytes)
            if on_batch and (parseable or logs):
                on_batch([report_id for _, _, report_id in parseable + logs])
            counts["parsed"] += len(batch)
            if progress:
                progress(counts["looked"], total)
    if progress and total:
        progress(total, total)
    touched = counts["touched"]
    to_parse = counts["parsed"]
    gone = removed

    config_digest = release_config_digest(config)
    config_changed = meta_value(con, "release_config") != config_digest
    if to_parse or gone or config_changed:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE labels_before AS SELECT report_id, release FROM reports"
        )
        # a suite's releases are ordered among themselves: only suites that gained or lost a
        # report are ranked again, unless relidash.toml changed
        suites_after = dict(con.execute("SELECT report_id, suite FROM reports").fetchall())
        touched_suites = {s for i, s in suites_before.items() if i not in suites_after} | {
            s for i, s in suites_after.items() if i not in suites_before
        }
        assign_releases(con, config, None if config_changed else sorted(touched_suites))
        # stored summary entries carry the release label: drop those whose label moved
        con.execute(
            "DELETE FROM report_records WHERE report_id IN (SELECT r.report_id FROM reports r "
            "JOIN labels_before b USING (report_id) WHERE r.release IS DISTINCT FROM b.release)"
        )
        con.execute(
            "INSERT OR REPLACE INTO meta VALUES ('release_config', $d)", {"d": config_digest}
        )
    # assign_releases (run when anything was parsed) clears relidash.toml's problems
    if settings_changed or to_parse or gone or config_changed:
        _record_settings_problem(con, settings)
        con.execute(
            "INSERT OR REPLACE INTO meta VALUES ('inspect_settings', $s)",
            {"s": settings.fingerprint()},
        )
    con.execute("INSERT OR REPLACE INTO meta VALUES ('ingest_complete', '1')")
    changed = bool(to_parse or gone or walk_changed or config_changed or touched)
    con.execute(
        "INSERT OR REPLACE INTO meta VALUES ('version', CAST(coalesce("
        "(SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'version'), 0) + $d AS VARCHAR))",
        {"d": 1 if changed else 0},
    )
    n_problems = con.execute("SELECT count(*) FROM problems").fetchall()[0][0]
    return IngestResult(
        files=len(entries),
        parsed=to_parse,
        unchanged=len(entries) - to_parse,
        removed=len(removed),
        problems=n_problems,
        seconds=time.perf_counter() - started,
    )


def _claim_catalog(con: duckdb.DuckDBPyConnection, ident: str) -> None:
    rows = con.execute("SELECT value FROM meta WHERE key = 'reports_dir'").fetchall()
    if rows and rows[0][0] != ident:
        # A catalog describes one source; pointed at another, it starts over.
        for table in (*REPORT_TABLES, "files", "problems"):
            con.execute(f"DELETE FROM {table}")  # table names from the allow-list
    con.execute("INSERT OR REPLACE INTO meta VALUES ('reports_dir', $d)", {"d": ident})


def _facts(abspath: str, constants: bool) -> FileFacts:
    try:
        return file_facts(abspath, constants=constants)
    except OSError:
        return FileFacts("", False, False)  # precheck_file names the reason


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


def _parse_batch(
    con: duckdb.DuckDBPyConnection,
    batch: list[tuple[FileEntry, str, int]],
    max_bytes: int,
    *,
    strict: bool = False,
) -> None:
    """Parse a batch in one statement; split it to find the files DuckDB rejects.

    With `strict`, the fast path: a batch it refuses is tried file by file, and a file it
    refuses alone is read by DuckDB's JSON reader, whose verdict stands.
    """
    abspaths = [e.abspath for e, _, _ in batch]
    try:
        con.execute("BEGIN TRANSACTION")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE batch_files AS SELECT unnest($paths) AS path, "
            "unnest($abspaths) AS abspath, CAST(unnest($ids) AS INTEGER) AS report_id, "
            "CAST(unnest($mtimes) AS BIGINT) AS mtime_ns",
            {
                "paths": [e.path for e, _, _ in batch],
                "abspaths": abspaths,
                "ids": [rid for _, _, rid in batch],
                "mtimes": [e.mtime_ns for e, _, _ in batch],
            },
        )
        if strict:
            execute(con, "stage_reports_strict", files=abspaths, structure=REPORT_STRUCTURE)
        else:
            execute(
                con,
                "stage_reports",
                files=abspaths,
                columns=REPORT_COLUMNS,
                max_bytes=reader_buffer_bytes(max(e.size for e, _, _ in batch), max_bytes),
            )
        rejected = _reject_non_reports(con)
        if strict:
            rejected |= _reject_constant_literals(con)
        execute(con, "stage_cases")
        for name in ("insert_reports", "insert_cases", "insert_case_tags", "insert_trials"):
            execute(con, name)
        _record_files(
            con, [(e, digest, None if e.path in rejected else rid) for e, digest, rid in batch]
        )
        con.execute(
            "INSERT INTO problems SELECT r.file, 'case', format('case {} ({}): {}; left out of every metric', "
            "c.case_idx, left(coalesce(c.case_id, c.input, ''), 60), c.excluded_reason) "
            "FROM stage_cases c JOIN reports r USING (report_id) WHERE c.excluded_reason IS NOT NULL"
        )
        con.execute("COMMIT")
    except _DATA_ERRORS as exc:
        con.execute("ROLLBACK")
        if strict and len(batch) > 1:
            for item in batch:
                _parse_batch(con, [item], max_bytes, strict=True)
            return
        if strict:  # refused alone: the JSON reader decides, after the exact NaN check
            entry, digest, _ = batch[0]
            reason = has_constant_literal(entry.abspath) and strict_json_problem(entry.abspath)
            if reason:
                _record_file(con, entry, digest, None)
                _record_problems(con, [(entry.path, "file", reason)])
            else:
                _parse_batch(con, batch, max_bytes)
            return
        if len(batch) == 1:
            entry, digest, _ = batch[0]
            _record_file(con, entry, digest, None)
            _record_problems(con, [(entry.path, "file", _duckdb_reason(exc, entry.abspath))])
            return
        middle = len(batch) // 2
        _parse_batch(con, batch[:middle], max_bytes)
        _parse_batch(con, batch[middle:], max_bytes)


def _load_inspect_batch(
    con: duckdb.DuckDBPyConnection,
    items: list[tuple[FileEntry, str, int]],
    settings: InspectSettings,
    max_bytes: int,
) -> None:
    """Parse a batch of Inspect logs (before the transaction) and store them in one."""
    batch = read_inspect_logs(items, settings, max_bytes)
    con.execute("BEGIN TRANSACTION")
    try:
        insert_inspect_rows(con, batch)
        _record_files(con, batch.files)
        _record_problems(con, batch.problems)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _record_settings_problem(con: duckdb.DuckDBPyConnection, settings: InspectSettings) -> None:
    """An unusable [inspect] table is a problem of relidash.toml, found afresh each load."""
    con.execute(
        "DELETE FROM problems WHERE file = $f AND starts_with(reason, '[inspect]')",
        {"f": CONFIG_NAME},
    )
    if settings.problem:
        _record_problems(con, [(CONFIG_NAME, "report", settings.problem)])


def reader_buffer_bytes(largest: int, limit: int) -> int:
    """`read_json`'s maximum_object_size for files of at most `largest` bytes.

    DuckDB sizes its read buffers by it: the 256 MiB limit itself doubled the CPU time of
    a load (most of it in the kernel, mapping memory). Twice the largest file leaves room
    for a file that grew since it was measured; never above the size limit.
    """
    return min(limit, 2 * largest + MIB) + 1


def _reject_non_reports(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Drop staged files that hold several JSON values or no `cases` list; record why."""
    bad = con.execute(
        "SELECT b.path, count(*) AS values_, bool_or(s.cases IS NULL) AS no_cases "
        "FROM stage s JOIN batch_files b ON s.filename = b.abspath GROUP BY b.path "
        "HAVING count(*) > 1 OR bool_or(s.cases IS NULL)"
    ).fetchall()
    rows = []
    for path, values, _no_cases in bad:
        if values > 1:
            rows.append(
                (path, "file", f"holds {values} JSON values; a report file holds one object")
            )
        else:
            rows.append(
                (path, "file", "is JSON but not a multivon-eval report: it has no `cases` list")
            )
    return _drop_from_batch(con, rows)


def _reject_constant_literals(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Drop staged files that the strict parse saw NaN / Infinity in and that hold such a literal."""
    flagged = con.execute(
        "SELECT b.path, b.abspath FROM stage s JOIN batch_files b ON s.filename = b.abspath "
        "WHERE s.maybe_constants"
    ).fetchall()
    rows = [
        (path, "file", reason)
        for path, abspath in flagged
        if (reason := strict_json_problem(abspath))
    ]
    return _drop_from_batch(con, rows)


def _drop_from_batch(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, str]]) -> set[str]:
    """Record each (path, scope, reason) problem and take its file out of the batch."""
    if rows:
        _record_problems(con, rows)
        con.execute(
            "DELETE FROM batch_files WHERE path IN (SELECT unnest($p))", {"p": [r[0] for r in rows]}
        )
    return {r[0] for r in rows}


def _forget_files(con: duckdb.DuckDBPyConnection, paths: list[str]) -> None:
    if not paths:
        return
    con.execute(
        "CREATE OR REPLACE TEMP TABLE gone_files AS SELECT unnest($p) AS path", {"p": paths}
    )
    gone_ids = "SELECT report_id FROM files WHERE path IN (SELECT path FROM gone_files)"
    for table in REPORT_TABLES:
        con.execute(f"DELETE FROM {table} WHERE report_id IN ({gone_ids})")  # allow-listed names
    con.execute("DELETE FROM problems WHERE file IN (SELECT path FROM gone_files)")
    con.execute("DELETE FROM files WHERE path IN (SELECT path FROM gone_files)")


def _record_file(
    con: duckdb.DuckDBPyConnection, entry: FileEntry, digest: str, report_id: int | None
) -> None:
    _record_files(con, [(entry, digest, report_id)])


def _record_files(
    con: duckdb.DuckDBPyConnection, rows: list[tuple[FileEntry, str, int | None]]
) -> None:
    """Upsert `files` rows in one statement (row-at-a-time inserts cost ms each)."""
    con.execute(
        "INSERT OR REPLACE INTO files SELECT unnest($paths), CAST(unnest($sizes) AS BIGINT), "
        "CAST(unnest($mtimes) AS BIGINT), CAST(unnest($digests) AS VARCHAR), "
        "CAST(unnest($ids) AS INTEGER), CAST(unnest($racy) AS BOOLEAN), "
        "CAST(unnest($etags) AS VARCHAR)",
        {
            "etags": [e.etag for e, _, _ in rows],
            "paths": [e.path for e, _, _ in rows],
            "sizes": [e.size for e, _, _ in rows],
            "mtimes": [e.mtime_ns for e, _, _ in rows],
            "digests": [d for _, d, _ in rows],
            "ids": [r for _, _, r in rows],
            "racy": [e.racy or not d for e, d, _ in rows],
        },
    )


def _record_problems(con: duckdb.DuckDBPyConnection, rows: list[tuple[str, str, str]]) -> None:
    if rows:
        con.executemany("INSERT INTO problems VALUES (?, ?, ?)", rows)


_DUCKDB_NOISE = re.compile(r"^(Invalid Input Error|Conversion Error|Binder Error|IO Error): ")


def _duckdb_reason(exc: Exception, abspath: str) -> str:
    """DuckDB's message, first line, without its prefix, advice or our absolute path."""
    if isinstance(exc, UnicodeDecodeError):
        return (
            "could not be read as a multivon-eval report: a field holds a value of the wrong "
            "type (DuckDB's own message about it could not be decoded)"
        )
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    first = _DUCKDB_NOISE.sub("", first).replace(f' in file "{abspath}"', "")
    first = first.replace(abspath, "the file")
    if "UTF-8" in first:
        return f"is not UTF-8 text: {first}"
    if "duplicate key" in first:
        return f"has a duplicate key: {first}"
    if "Malformed JSON" in first or "unexpected end" in first:
        return f"is not valid JSON (truncated or malformed): {first}"
    return f"could not be read as a multivon-eval report: {first}"
