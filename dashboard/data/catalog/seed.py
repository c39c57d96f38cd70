"""A catalog built elsewhere, copied in as a first start's catalog, so a replica starts warm.

A CI step builds the catalog once (`relidash summary SRC --catalog relidash.duckdb`) and
uploads it next to the reports; each replica started with `--seed-catalog PATH_OR_URL`
and no local catalog yet copies it into its own cache, then refreshes it incrementally:
only objects whose ETag, size or LastModified differ from the seed's record are
downloaded. The seed is a cache too: one that cannot be read, was written by another
relidash version or schema, or describes another source is ignored with a notice, and
the catalog is built from the reports.

Must not: write anywhere but beside the target catalog; replace a catalog that exists.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import duckdb

from dashboard.data.catalog import MEMORY, SCHEMA_VERSION, relidash_version
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.sources import SourceError, failure_reason, open_filesystem, parse_location


def seed_catalog(seed: str, target: str, source_ident: str, *, anon: bool = False) -> str:
    """Copy the catalog `seed` (a path or an object URL) to `target` if target does not exist.

    Returns one line for the operator: what was copied, or why the seed was ignored.
    """
    if target == MEMORY:
        return f"the seed catalog {seed} is ignored: the catalog is kept in memory"
    destination = Path(target)
    if destination.exists():
        return f"the seed catalog {seed} is not needed: {target} exists and is refreshed"
    destination.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".seed-", suffix=".duckdb", dir=destination.parent)
    os.close(fd)
    try:
        try:
            _copy_seed(seed, temp, anon=anon)
        except (OSError, SourceError) as exc:
            return f"the seed catalog {seed} cannot be read ({_reason(exc)}); it is ignored"
        problem = seed_problem(temp, source_ident)
        if problem is not None:
            return f"the seed catalog {seed} is ignored: {problem}"
        files = _count_files(temp)
        if os.path.exists(temp + ".wal"):
            os.replace(temp + ".wal", target + ".wal")
        os.replace(temp, target)
        return f"seeded the catalog {target} from {seed} ({files} report files)"
    finally:
        for leftover in (temp, temp + ".wal"):
            with contextlib.suppress(OSError):
                os.unlink(leftover)


def seed_problem(path: str, source_ident: str) -> str | None:
    """Why the catalog file at `path` cannot seed a catalog of `source_ident`, or None."""
    try:
        con = duckdb.connect(path, read_only=True)
    except duckdb.Error as exc:
        return f"it is not a DuckDB catalog ({_first_line(exc)})"
    try:
        tables = {r["table_name"] for r in fetch_rows(con, "catalog/table_names")}
        if not {"meta", "files", "reports"} <= tables:
            return "it is not a relidash catalog (no meta, files and reports tables)"
        meta = {r["key"]: r["value"] for r in fetch_rows(con, "catalog/meta_entries")}
    except duckdb.Error as exc:
        return f"it cannot be read as a relidash catalog ({_first_line(exc)})"
    finally:
        con.close()
    schema, version = meta.get("schema_version"), meta.get("relidash_version")
    if schema != SCHEMA_VERSION or version != relidash_version():
        return (
            f"it was written by relidash {version or 'unknown'} (catalog schema "
            f"{schema or 'unknown'}), not relidash {relidash_version()} (schema "
            f"{SCHEMA_VERSION}); the catalog is built from the reports"
        )
    if meta.get("ingest_complete", "1") != "1":
        return "its load did not finish; the catalog is built from the reports"
    if meta.get("reports_dir") != source_ident:
        return (
            f"it describes {meta.get('reports_dir')}, not {source_ident}; "
            "the catalog is built from the reports"
        )
    return None


def _copy_seed(seed: str, temp: str, *, anon: bool) -> None:
    location = parse_location(seed)
    if not location.is_remote:
        shutil.copyfile(seed, temp)
        if os.path.isfile(seed + ".wal"):  # a catalog's changes since its last checkpoint
            shutil.copyfile(seed + ".wal", temp + ".wal")
        return
    fs = open_filesystem(location, anon=anon)
    try:
        fs.get_file(location.root, temp)
    except FileNotFoundError:
        raise
    except Exception as exc:
        raise SourceError(f"cannot download {location.url}: {failure_reason(exc)}") from exc


def _count_files(path: str) -> int:
    with duckdb.connect(path, read_only=True) as con:
        return int(fetch_rows(con, "catalog/file_count")[0]["n"])


def _reason(exc: BaseException) -> str:
    if isinstance(exc, FileNotFoundError):
        return "no such file or object"
    return _first_line(exc)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
