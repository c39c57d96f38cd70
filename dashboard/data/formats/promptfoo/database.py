"""promptfoo's own database (`~/.promptfoo/promptfoo.db`, SQLite): every eval it holds,
rebuilt as `promptfoo export eval ID -o file.json` writes it and then read as that file is
(eval.py, rows.py), so that an eval loads alike from either.

The export is promptfoo 0.123's `createOutputData` (src/util/output) over `Eval.findById`,
`toEvaluateSummary` (src/models/eval.ts) and `EvalResult.toEvaluateResult`
(src/models/evalResult.ts): `evalId` is the eval's id; `results.timestamp` its
`created_at` (ms since the epoch) in ISO form; `results.prompts` its `prompts` column (the
pairs, with promptfoo's metrics); `results.results` its rows of `eval_results`, each JSON
column parsed, `success` a boolean, `failureReason` 0 unless 1 or 2, `error` and
`response` left out when empty; `config` (description and tags: the tags table indexes
the same), `vars` and `runtimeOptions` (the command line's --repeat) its columns. An eval
promptfoo stored whole in `results` (a `table`, before results had a table of their own)
exports as results version 2. Token counts and stats, which relidash does not read, are
left out, and so is `metadata.promptfooVersion`: the database does not record which
promptfoo wrote it (an export names the promptfoo that exported it).

SQLite never opens the user's file: opening a database in WAL mode, as promptfoo keeps
it, creates `-wal` and `-shm` files beside it even to read, and checkpoints into it. The
database is copied into a temporary directory, removed after the read, and SQLite opens
the copy.

Only the database file is copied, never its `-wal` (what promptfoo wrote since its last
checkpoint) nor a rollback `-journal`: what relidash reads of a file must be what that
file's digest covers, the digest a sign-off binds and `verify` checks. An eval still in
the log alone is read once promptfoo has written it into the database, at the latest
when promptfoo closes it.

Must not: write beside the database, touch DuckDB, import Streamlit or Altair.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

from dashboard.data.catalog.queries import load_query
from dashboard.data.formats.promptfoo.eval import PromptfooEval, PromptfooSettings, eval_from_json
from dashboard.data.formats.promptfoo.rows import eval_rows
from dashboard.data.formats.protocol import FormatProblem, ReportRows

SQLITE_HEADER = b"SQLite format 3\x00"
PROMPTFOO_TABLES = {"evals", "eval_results"}
# A copy made while promptfoo checkpoints may catch the file half written: it is made
# again, up to this many times, until the file's stat is the same after as before.
COPY_ATTEMPTS = 4
COPY_PAUSE_SECONDS = 0.05
FAILURE_REASONS = (0, 1, 2)  # promptfoo's ResultFailureReason: NONE, ASSERT, ERROR
MORE_UNREAD = 3  # unreadable evals named in full when none can be read
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_READ_ERRORS = (FormatProblem, sqlite3.Error, ValueError, TypeError, KeyError, AttributeError)


def looks_like_database(leading: bytes) -> bool:
    """A SQLite database's first bytes (promptfoo's or not: read() tells)."""
    return leading.startswith(SQLITE_HEADER)


def is_database(path: str) -> bool:
    with open(path, "rb") as handle:
        return looks_like_database(handle.read(len(SQLITE_HEADER)))


# ---- reading every eval --------------------------------------------------------------------


def database_rows(path: str, max_bytes: int, settings: PromptfooSettings) -> list[ReportRows]:
    """The reports of every eval in the database, oldest eval first, each as its export's.
    An eval that cannot be read is a warning naming it while the others load (FormatProblem
    when none can); each report's warnings name its eval, the file being shared."""
    reports: list[ReportRows] = []
    unread: list[str] = []
    evals = 0
    with opened_copy(path, max_bytes) as con:
        try:
            for row in fetch(con, "formats/promptfoo/evals", eval_id=None):
                evals += 1
                eval_id = str(row.get("id"))
                try:
                    found = eval_rows(eval_from_json(export_of(con, row)), path, settings)
                except _READ_ERRORS as exc:
                    unread.append(unread_eval(eval_id, exc))
                    continue
                for rows in found:
                    rows.warnings = [f"eval {eval_id}: {warning}" for warning in rows.warnings]
                reports += found
        except sqlite3.Error as exc:
            raise FormatProblem(f"cannot be read as promptfoo's database ({exc})") from exc
    if not evals:
        raise FormatProblem("is promptfoo's database, with no eval in it yet")
    if not reports and unread:
        more = len(unread) - MORE_UNREAD
        raise FormatProblem(
            "; ".join(unread[:MORE_UNREAD]) + (f"; and {more} more evals" if more > 0 else "")
        )
    if reports:
        reports[0].warnings += unread
    return reports


def read_database_eval(path: str, eval_id: str) -> PromptfooEval:
    """One eval of the database, as its export reads (for a case's transcripts). No size
    limit: the load read the database within it, and one eval is held, not all."""
    with opened_copy(path, None) as con:
        try:
            rows = list(fetch(con, "formats/promptfoo/evals", eval_id=eval_id))
        except sqlite3.Error as exc:
            raise FormatProblem(f"cannot be read as promptfoo's database ({exc})") from exc
        if not rows:
            raise FormatProblem(f"no longer holds eval {eval_id}")
        try:
            return eval_from_json(export_of(con, rows[0]))
        except _READ_ERRORS as exc:
            raise FormatProblem(unread_eval(eval_id, exc)) from exc


def unread_eval(eval_id: str, exc: Exception) -> str:
    """Why one eval cannot be read, after the file's name."""
    if isinstance(exc, FormatProblem):  # eval.py's reasons open with a verb ("is …")
        return f"holds eval {eval_id}, which {exc}"
    return f"holds eval {eval_id}, which cannot be read ({type(exc).__name__}: {str(exc)[:200]})"


def fetch(con: sqlite3.Connection, name: str, **params: Any) -> Iterator[dict[str, Any]]:
    """The rows of a named statement, one dict each, as SQLite gives them."""
    cursor = con.execute(load_query(name), params)
    columns = [d[0] for d in cursor.description or ()]
    for values in cursor:
        yield dict(zip(columns, values, strict=True))


# ---- the private copy ----------------------------------------------------------------------


@contextmanager
def opened_copy(path: str, max_bytes: int | None) -> Iterator[sqlite3.Connection]:
    """A connection to a copy of the database in a temporary directory, which is removed
    after; FormatProblem when it is not promptfoo's."""
    source = os.path.realpath(path)
    with tempfile.TemporaryDirectory(prefix="relidash-promptfoo-") as scratch:
        copy = os.path.join(scratch, "promptfoo.db")
        copy_database(source, copy, max_bytes)
        con = sqlite3.connect(copy, isolation_level=None)
        try:
            try:
                tables = {row["name"] for row in fetch(con, "formats/promptfoo/promptfoo_tables")}
            except sqlite3.DatabaseError as exc:
                raise FormatProblem(
                    f"has a SQLite header but cannot be read as a database ({exc})"
                ) from exc
            if tables != PROMPTFOO_TABLES:
                raise FormatProblem(
                    "is a SQLite database, not promptfoo's: it lacks promptfoo's `evals` and "
                    "`eval_results` tables (relidash reads promptfoo's promptfoo.db)"
                )
            yield con
        finally:
            con.close()


def copy_database(source: str, copy: str, max_bytes: int | None) -> None:
    """Copy the database, again while its stat changes under the copy (FormatProblem when
    it is over `max_bytes`, or never holds still)."""
    for attempt in range(COPY_ATTEMPTS):
        before = _stamp(source)
        if max_bytes is not None and before[0] > max_bytes:
            raise FormatProblem(
                f"is {before[0] / 2**20:.1f} MiB, over the {max_bytes / 2**20:g} MiB size "
                "limit (raise it with --max-file-mb)"
            )
        shutil.copyfile(source, copy)
        if _stamp(source) == before:
            return
        time.sleep(COPY_PAUSE_SECONDS * (attempt + 1))
    raise FormatProblem(
        f"changed each of the {COPY_ATTEMPTS} times relidash copied it (promptfoo is "
        "writing to it); it is read again once promptfoo is done with it"
    )


def _stamp(source: str) -> tuple[int, int, int, int]:
    """(size, mtime, ctime, inode) of the file."""
    st = os.stat(source)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


# ---- an eval as promptfoo exports it -------------------------------------------------------


def export_of(con: sqlite3.Connection, row: dict[str, Any]) -> dict[str, Any]:
    """The eval of an `evals` row as `promptfoo export eval` writes it, the fields relidash
    reads (eval.py) and their neighbours."""
    eval_id = row.get("id")
    created = iso_time(row.get("created_at"))
    stored = column(row, "evals", "results")
    if isinstance(stored, dict) and "table" in stored:
        summary: dict[str, Any] = {"version": 2, "timestamp": created}
        summary |= {key: stored.get(key) for key in ("results", "table", "stats")}
    else:
        summary = {
            "version": 3,
            "timestamp": created,
            "prompts": column(row, "evals", "prompts") or [],
            "results": [
                result_of(r) for r in fetch(con, "formats/promptfoo/eval_results", eval_id=eval_id)
            ],
        }
    data: dict[str, Any] = {
        "evalId": eval_id,
        "results": summary,
        "config": column(row, "evals", "config"),
        "metadata": {"evaluationCreatedAt": created, "author": row.get("author")},
    }
    for key, name in (("vars", "vars"), ("runtimeOptions", "runtime_options")):
        value = column(row, "evals", name)
        if value:
            data[key] = value
    return data


def result_of(row: dict[str, Any]) -> dict[str, Any]:
    """One `eval_results` row as toEvaluateResult gives it (token counts left out)."""
    test_case = column(row, "eval_results", "test_case")
    provider = column(row, "eval_results", "provider")
    provider = provider if isinstance(provider, dict) else {}
    reason = row.get("failure_reason")
    result = {
        "cost": row.get("cost") or 0,
        "gradingResult": column(row, "eval_results", "grading_result"),
        "id": row.get("id"),
        "latencyMs": row.get("latency_ms") or 0,
        "namedScores": column(row, "eval_results", "named_scores") or {},
        "prompt": column(row, "eval_results", "prompt"),
        "promptId": row.get("prompt_id"),
        "promptIdx": row.get("prompt_idx"),
        "provider": {key: provider[key] for key in ("id", "label") if provider.get(key)},
        "score": row.get("score"),
        "success": row.get("success") == 1,  # drizzle's boolean column: 1 is true
        "testCase": test_case,
        "testIdx": row.get("test_idx"),
        "vars": (test_case.get("vars") if isinstance(test_case, dict) else None) or {},
        "metadata": column(row, "eval_results", "metadata"),
        "failureReason": reason if reason in FAILURE_REASONS else 0,
    }
    if row.get("error"):
        result["error"] = row["error"]
    response = column(row, "eval_results", "response")
    if response:
        result["response"] = response
    return result


def column(row: dict[str, Any], table: str, name: str) -> Any:
    """A JSON column parsed (drizzle's `mode: 'json'`); None when NULL or absent."""
    value = row.get(name)
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError as exc:
        raise FormatProblem(f"has a `{table}.{name}` value that is not JSON") from exc


def iso_time(value: Any) -> str | None:
    """Milliseconds since the epoch as JavaScript's toISOString writes them."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        moment = _EPOCH + timedelta(milliseconds=value)
    except (OverflowError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
