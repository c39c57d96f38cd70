"""Bring a catalog up to date with a reports directory or another source (a prefix in
object storage, read through its local mirror: dashboard/data/sources/reports.py).

A load is planned first (plan.py: what the source lists and what of it the catalog lacks,
decided before the catalog changes), then its changed files are read in batches
(batches.py: multivon-eval reports by DuckDB, every other harness's in Python), then the
releases of the suites it touched are ranked again. Deleted files are dropped. A file that
cannot be used becomes one row in `problems` and never stops the load. Report files are
only ever read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from dashboard.data.catalog import roll_back, transaction, write_meta
from dashboard.data.catalog.problems import forget_files, record_problems
from dashboard.data.catalog.queries import execute, fetch_rows, fill_template
from dashboard.data.catalog.schema import REPORT_TABLES
from dashboard.data.load.batches import BatchFn, BatchLoad, ProgressFn
from dashboard.data.load.freshness import (  # catalog_version, directory_changed: re-exported
    catalog_version,  # noqa: F401
    directory_changed,  # noqa: F401
)
from dashboard.data.load.plan import LoadPlan, plan_load
from dashboard.data.load.releases import assign_releases
from dashboard.data.load.report_dirs import listed_reports
from dashboard.data.load.settings import record_settings_problems
from dashboard.data.names import DEFAULT_MAX_BYTES
from dashboard.data.sources.reports import ReportSource, as_source
from dashboard.data.sources.walk import ListingParts, part_of

__all__ = ["DEFAULT_MAX_BYTES", "BatchFn", "IngestResult", "ProgressFn", "ingest_directory"]


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
    """Let DuckDB write rows in any order while loading: nested-column writes cost less.

    Nothing depends on the physical order: case, trial and grader positions are stored
    as columns, and every query whose order matters says ORDER BY.
    """
    before = bool(fetch_rows(con, "load/insertion_order")[0]["preserve"])
    execute(con, "load/set_insertion_order", preserve=False)
    try:
        yield
    except BaseException:
        # stopped inside a batch's transaction (Ctrl-C, a bug): end it, or the setting
        # below fails on the aborted transaction and hides what happened
        roll_back(con)
        raise
    finally:
        execute(con, "load/set_insertion_order", preserve=before)


def _ingest(
    con: duckdb.DuckDBPyConnection,
    source: ReportSource,
    *,
    max_bytes: int,
    progress: ProgressFn | None,
    on_batch: BatchFn | None,
) -> IngestResult:
    started = time.perf_counter()
    plan = plan_load(con, source)
    if plan.nothing_to_do:
        # nothing to write: a commit, even of values already there, syncs the log, which
        # a warm load need not wait for
        listed = listed_reports(plan.entries)
        return IngestResult(listed, 0, listed, 0, _problem_count(con), _since(started))
    first_id, touched_suites, rewritten = _begin(con, plan)
    load = BatchLoad(con, plan, first_id, max_bytes=max_bytes, progress=progress, on_batch=on_batch)
    load.run()
    _finish(con, plan, load, first_id, touched_suites | load.touched_suites, rewritten)
    listed = listed_reports(plan.entries)
    return IngestResult(
        files=listed,
        parsed=load.parsed,
        unchanged=listed - load.parsed,
        removed=len(plan.removed),
        problems=_problem_count(con),
        seconds=_since(started),
    )


def _begin(con: duckdb.DuckDBPyConnection, plan: LoadPlan) -> tuple[int, set[str], set[str] | None]:
    """What comes before the batches, in one commit (each commit syncs the log): claim the
    catalog, take the digests from the parts this load may change, forget the files gone.
    (The first new report id, the suites that lost a report, the parts rewritten: None
    for every part.)"""
    with transaction(con):
        if not plan.claimed:
            _claim_catalog(con, plan.meta.get("reports_dir"))
        write_meta(
            con,
            {"reports_dir": plan.source.ident, "ingest_complete": "0"}
            | ({"metrics_complete": "0"} if plan.candidates else {}),
        )
        # the parts this load may change lose their digests until it is complete
        rewritten = (
            plan.differing | {part_of(path) for path in plan.vanished} if plan.claimed else None
        )
        if rewritten is None:
            execute(con, "load/clear_listing_parts")
        elif rewritten:
            execute(con, "load/forget_listing_parts", parts=sorted(rewritten))
        first_id = int(fetch_rows(con, "load/first_new_report_id")[0]["first_id"])
        # suites that lose or gain a report have their releases ranked again
        touched_suites = forget_files(con, plan.removed + [p.path for p in plan.scan_problems])
        if plan.previous_walk:
            execute(con, "load/delete_walk_problems")
        record_problems(con, [(p.path, "file", p.reason) for p in plan.scan_problems])
    return first_id, touched_suites, rewritten


def _finish(
    con: duckdb.DuckDBPyConnection,
    plan: LoadPlan,
    load: BatchLoad,
    first_id: int,
    touched_suites: set[str],
    rewritten: set[str] | None,
) -> None:
    """What follows the batches, in one commit: releases ranked again where a suite gained
    or lost a report (everywhere when relidash.toml changed), the harnesses' settings
    problems, the listing parts the catalog now matches, and the catalog's version."""
    written: dict[str, str] = {}
    gone, config_changed = plan.removed, plan.config_changed
    with transaction(con):
        if load.parsed or gone or config_changed:
            touched_suites |= {
                r["suite"] for r in fetch_rows(con, "load/suites_from_report", first=first_id)
            }
            ranked = None if config_changed else sorted(touched_suites)
            relabelled = assign_releases(con, plan.config, ranked)
            if relabelled:  # stored summary entries carry the release label
                execute(con, "load/forget_report_records", ids=relabelled)
            written["release_config"] = plan.config_digest
        # assign_releases (run when anything was parsed) clears relidash.toml's problems
        if plan.settings_changed or load.parsed or gone or config_changed:
            record_settings_problems(con, plan.settings)
            written["harness_settings"] = json.dumps(plan.fingerprint, sort_keys=True)
        parts = ListingParts.of(plan.entries) if plan.vanished else plan.parts
        _store_parts(con, parts, rewritten)
        changed = bool(load.parsed or gone or plan.walk_changed or config_changed or load.touched)
        version = int(plan.meta.get("version") or 0) + (1 if changed else 0)
        write_meta(con, written | {"ingest_complete": "1", "version": str(version)})


def _problem_count(con: duckdb.DuckDBPyConnection) -> int:
    return int(fetch_rows(con, "catalog/problem_count")[0]["n"])


def _since(started: float) -> float:
    return time.perf_counter() - started


def _store_parts(
    con: duckdb.DuckDBPyConnection, parts: ListingParts, rewritten: set[str] | None
) -> None:
    """Keep the digests of the listing parts the catalog now matches: the `rewritten`
    parts (None: every part) of the listing the load ended with, except those holding a
    file recorded as racy. The other parts' stored digests still hold."""
    if rewritten is not None and not rewritten:
        return
    racy = {r["part"] for r in fetch_rows(con, "load/racy_parts")}
    kept = {
        p: d
        for p, d in parts.digests.items()
        if (rewritten is None or p in rewritten) and p not in racy
    }
    if kept:
        execute(con, "load/store_listing_parts", parts=list(kept), digests=list(kept.values()))


def _claim_catalog(con: duckdb.DuckDBPyConnection, previous: str | None) -> None:
    """A catalog describes one source; pointed at another (`previous`, None for a new
    catalog), it starts over. The caller records the new source."""
    if previous is not None:
        for table in (*REPORT_TABLES, "files", "problems"):  # the allow-list
            con.execute(fill_template("load/clear_table", table=table))
