"""promptfoo evals: a `promptfoo eval -o results.json` file (or `promptfoo export eval ID
-o file.json`, the same shape) is one eval, each of its (prompt, provider) pairs one report.
promptfoo's own database (`promptfoo.db`) holds many evals, each read as its export.

eval.py reads and checks the file and groups its rows by pair and test; rows.py maps a
pair to catalog rows; database.py rebuilds each eval of a database as its export;
transcript.py renders one row (a repeat) for the pages that show a case; unknown.py words
a report's UNKNOWN reasons in tests and repeats. promptfoo's JSON Lines output (`-o
results.jsonl`) has no eval id, config or timestamp: it is claimed here only to say so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.data.formats import PROMPTFOO
from dashboard.data.formats.promptfoo.database import (
    database_rows,
    is_database,
    looks_like_database,
    read_database_eval,
)
from dashboard.data.formats.promptfoo.eval import (
    jsonl_problem,
    looks_like_eval,
    read_eval,
    read_promptfoo_settings,
    tests_of,
)
from dashboard.data.formats.promptfoo.rows import eval_rows
from dashboard.data.formats.promptfoo.transcript import evaluators, transcript
from dashboard.data.formats.promptfoo.unknown import NO_TESTS, word_unknowns
from dashboard.data.formats.protocol import (
    FormatProblem,
    ReportRows,
    RowHarness,
    RunTerms,
    Settings,
)
from dashboard.data.names import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    import duckdb

JSONL = ".jsonl"
# A file named so is read as promptfoo's database: one that is not SQLite (a Thumbs.db)
# is a problem that says what relidash looked for, not that it is not JSON.
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
NOT_A_DATABASE = (
    "is not a SQLite database (relidash reads a .db, .sqlite or .sqlite3 file as "
    "promptfoo's database)"
)
# An eval file is read whole to show one case (it has no index): up to the load's default
# file limit, as the load read it.
READ_BACK_LIMIT = DEFAULT_MAX_BYTES
NO_TRANSCRIPT = "(this repeat's row is no longer in the eval file)"

TERMS = RunTerms(
    trials="repeats",
    trial="repeat",
    case="test",
    shortest="the test with the fewest",
    matched="the matched test with the fewest",
    option="--repeat",
    declines="relidash does not extrapolate.",
    no_cases=NO_TESTS,
)


class PromptfooHarness(RowHarness):
    name = PROMPTFOO
    title = "promptfoo"
    settings_table = "promptfoo"
    # the `release` tag, or the tag [promptfoo] names, else the eval's timestamp
    declared_release = "promptfoo tag or timestamp"
    terms = TERMS

    def claims(self, path: str, leading: bytes) -> bool:
        """Every `.jsonl` file and every file named as a database (to say why it is not
        read, when it is not), a JSON file whose first bytes are an eval's: `{"evalId"`,
        or `"results"` and `"evalId"` among them, and every SQLite database (its tables
        tell whether it is promptfoo's)."""
        if path.endswith("/"):
            return False
        return (
            path.endswith((JSONL, *DATABASE_SUFFIXES))
            or looks_like_eval(leading)
            or looks_like_database(leading)
        )

    def read_settings(self, config: Path | None) -> Settings:
        return read_promptfoo_settings(config)

    def read(self, path: str, size: int, max_bytes: int, settings: Settings) -> list[ReportRows]:
        if path.endswith(JSONL):
            raise jsonl_problem(path)
        if is_database(path):
            return database_rows(path, max_bytes, settings)  # type: ignore[arg-type]
        if path.endswith(DATABASE_SUFFIXES):
            raise FormatProblem(NOT_A_DATABASE)
        return eval_rows(read_eval(path, size, max_bytes), path, settings)  # type: ignore[arg-type]

    trials_query = "formats/promptfoo/case_trials"

    def transcripts(
        self, rows: list[dict[str, Any]], path: Path, size: int
    ) -> list[tuple[str, list[dict[str, Any]]]]:
        """A test's repeats, read from the eval file's rows of the report's pair (from its
        eval's, in a database)."""
        first = rows[0]
        if is_database(str(path)):
            found = read_database_eval(str(path), str(first["eval_id"]))
        else:
            found = read_eval(str(path), size, max(size, READ_BACK_LIMIT))
        pair_rows = found.rows.get(int(first["prompt_idx"]))
        if pair_rows is None:
            raise FormatProblem(
                f"no longer holds the pair this report was read from (promptIdx "
                f"{first['prompt_idx']})"
            )
        tests, _ = tests_of(pair_rows, found.repeats)
        repeats = tests.get(str(first["case_id"]), [])
        filled: list[tuple[str, list[dict[str, Any]]]] = []
        for row in rows:
            position = int(row["run_index"]) - 1
            source = repeats[position] if 0 <= position < len(repeats) else None
            filled.append(
                (transcript(source), evaluators(source)) if source else (NO_TRANSCRIPT, [])
            )
        return filled

    def word_unknowns(self, con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
        word_unknowns(con, report_ids)


HARNESS = PromptfooHarness()
