"""What a harness gives relidash: the interface every folder under data/formats/ fills.

A harness claims the files (or directories) it wrote by their content, reads one into the
rows of the catalog's harness-neutral tables (reports, cases, case_tags, trials), reads
one case's trials back with their transcripts, names its table in relidash.toml, and
words its UNKNOWN reasons in its own terms. The loader (dashboard/data/load/ingest.py and
ingest_rows.py) and the transcript reader call these and never branch on which harness it
is; dashboard/data/formats/__init__.py holds the registry.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from dashboard.data.sources.walk import FileEntry

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

# The column order of queries/load/insert_rows_*.sql, which every row-reading harness fills.
REPORT_COLUMNS = (
    "suite", "model", "target_version", "format", "schema", "recorded_at", "runs_per_case",
    "cases_total", "cases_evaluated", "cases_errored", "cases_skipped", "runs_min",
    "cases_with_trials", "harness", "log_status", "metadata", "harness_facts",
)  # fmt: skip
CASE_COLUMNS = (
    "case_idx", "case_id", "input", "status", "runs", "pass_count", "n", "c", "agent_errors",
    "trial_passes", "other_errors", "score", "model_error", "tags", "n_trials",
    "agent_errors_left_out",
)  # fmt: skip
TRIAL_COLUMNS = (
    "case_idx", "trial_idx", "run_index", "attempt", "status", "recorded_at", "model_error",
    "latency_ms",
)  # fmt: skip
# What a case's trials read back give the Case and Lottery pages (the columns of
# formats/multivon/queries/case_trials.sql).
CASE_TRIAL_COLUMNS = (
    "trial_idx", "run_index", "attempt", "status", "recorded_at", "output", "model_error",
    "judge_error", "evaluator_error", "latency_ms", "evaluators",
)  # fmt: skip


@dataclass(frozen=True)
class RunTerms:
    """How a harness names a case's recorded trials."""

    trials: str  # the trials of one case, plural
    trial: str  # one of them (multivon-eval's own text says "1 trials")
    case: str
    shortest: str  # the case with the fewest, when the cases differ
    matched: str  # the matched pair of cases with the fewest, comparing two releases
    option: str  # the harness's option that records more of them
    declines: str  # the closing sentence: nobody extrapolates
    no_cases: str  # UNKNOWN with nothing evaluated to estimate from


class FormatProblem(Exception):
    """The file cannot be read as this harness's output; the message says why, for a person."""


@dataclass
class ReportRows:
    """One report's rows for the catalog: `report` has REPORT_COLUMNS, each case a tuple of
    CASE_COLUMNS, each trial one of TRIAL_COLUMNS."""

    report: dict[str, Any]
    cases: list[tuple[Any, ...]] = field(default_factory=list)
    tags: list[tuple[int, str]] = field(default_factory=list)  # (case_idx, tag)
    trials: list[tuple[Any, ...]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # report-scope problems


class Settings(Protocol):
    """A harness's table of relidash.toml, read."""

    @property
    def problem(self) -> str | None:
        """Why the table cannot be used as written (its defaults apply), or None."""

    def fingerprint(self) -> str:
        """Changes whenever the rows the harness reads would change."""


@dataclass(frozen=True)
class NoSettings:
    """For a harness with no table of its own."""

    problem: str | None = None

    def fingerprint(self) -> str:
        return ""


class StagedReader(Protocol):
    """The reader of a harness whose files DuckDB's own JSON reader stages in batches
    (multivon-eval): which files it may read and how, and a batch staged and stored."""

    def judge(
        self, entry: FileEntry, max_bytes: int, data: bytes | None, suspicious: bool
    ) -> str | None:
        """Why the file cannot be read (None: it may be), from its size and first bytes;
        `suspicious` files are parsed strictly to settle it."""

    def tries_strict_first(self, abspath: str) -> bool:
        """Whether a large file goes to the strict parser first (a guess that costs time
        when wrong, never numbers)."""

    def stager(self, con: duckdb.DuckDBPyConnection, scratch: Path) -> Any:
        """A context manager that begins a batch's parses (`start`) before it is stored."""

    def store(
        self,
        con: duckdb.DuckDBPyConnection,
        large: list[tuple[FileEntry, str, int]],
        framed: list[tuple[FileEntry, str, int]],
        rest: list[tuple[FileEntry, str, int]],
        staged: Any,
        max_bytes: int,
    ) -> None:
        """Parse what the stager has not and store the batch's reports."""


@dataclass(frozen=True)
class TrialDigests:
    """A report's own integrity records checked: its trials carrying a digest, and those
    that no longer match it ("case <id> run <n> attempt <a>", the first few listed)."""

    trials: int
    mismatched: tuple[str, ...]
    mismatched_count: int = 0
    readable: bool = True


class Harness(Protocol):
    """One harness's reader. Instances are stateless; the registry holds one of each."""

    name: str  # reports.harness, and how pages name it
    title: str  # for people: "Inspect AI"
    settings_table: str | None  # its table in relidash.toml, e.g. "inspect"
    terms: RunTerms  # how its UNKNOWN reasons word a case's trials
    # Read by relidash's DuckDB staging (multivon-eval) rather than by `read`.
    staged: bool
    # Where its reports' target_version comes from, as a release's source is named.
    declared_release: str
    # The batch reader of a staged harness; None for one read by `read`.
    staged_reader: StagedReader | None

    def claims(self, path: str, leading: bytes) -> bool:
        """Whether this harness wrote the file: its name and first bytes (a directory
        report's `leading` is empty and its path ends in "/")."""

    def report_directories(self, paths: set[str]) -> Iterable[str]:
        """Directories (relative, "" for the root) that are each one report of this
        harness, judged by the names of the files listed (`paths`). Their files are not
        reports of their own."""

    def read_settings(self, config: Path | None) -> Settings:
        """Its table of relidash.toml (`config`: the file; None: the source has none)."""

    def read(self, path: str, size: int, max_bytes: int, settings: Settings) -> list[ReportRows]:
        """The reports one file or directory holds (FormatProblem when it has none)."""

    def case_trials(
        self,
        con: duckdb.DuckDBPyConnection,
        report_id: int,
        case_idx: int,
        path: Path,
        size: int,
    ) -> pd.DataFrame:
        """One case's trials in run order, CASE_TRIAL_COLUMNS, transcripts read from `path`
        (FormatProblem or OSError when it cannot be read again)."""

    def word_unknowns(self, con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
        """Reword the UNKNOWN reasons of these reports (its own) in the harness's terms."""

    def check_records(self, path: Path) -> TrialDigests:
        """The file's own integrity records (trial digests) against its bytes, for a review's
        evidence; none to check for a harness that writes none."""


class RowHarness:
    """Defaults for a harness read in Python: no directory reports, no rewording; a case's
    trials read back as its `trials_query` gives them, each with the transcript and graders
    `transcripts` reads from the file."""

    trials_query: str  # a named query: a case's trial rows and what reading them needs

    def case_trials(
        self,
        con: duckdb.DuckDBPyConnection,
        report_id: int,
        case_idx: int,
        path: Path,
        size: int,
    ) -> pd.DataFrame:
        # at call time: the wording every floor reads imports this module, and DuckDB
        # must not come with it (render/ never opens the catalog)
        from dashboard.data.catalog.queries import fetch_rows

        rows = fetch_rows(con, self.trials_query, report_id=report_id, case_idx=case_idx)
        return trials_frame(rows, self.transcripts(rows, path, size) if rows else [])

    def transcripts(
        self, rows: list[dict[str, Any]], path: Path, size: int
    ) -> list[tuple[str, list[dict[str, Any]]]]:
        """Each trial row's transcript and graders, read back from `path` (FormatProblem or
        OSError when it cannot be read again)."""
        raise NotImplementedError

    staged = False
    staged_reader: StagedReader | None = None
    settings_table: str | None = None
    declared_release = "target_version"

    def report_directories(self, paths: set[str]) -> Iterable[str]:
        return ()

    def read_settings(self, config: Path | None) -> Settings:
        return NoSettings()

    def word_unknowns(self, con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
        return None

    def check_records(self, path: Path) -> TrialDigests:
        return TrialDigests(0, ())


def trials_frame(
    rows: list[dict[str, Any]], filled: list[tuple[str, list[dict[str, Any]]]]
) -> pd.DataFrame:
    """A case's trials as the pages read them (CASE_TRIAL_COLUMNS): the catalog's rows, each
    with its transcript (`output`) and its graders as JSON (`evaluators`)."""
    import pandas as pd

    for row, (output, graders) in zip(rows, filled, strict=True):
        row["output"] = output
        row["evaluators"] = json.dumps(graders, ensure_ascii=False, default=str)
    return pd.DataFrame(
        [{name: row[name] for name in CASE_TRIAL_COLUMNS} for row in rows],
        columns=list(CASE_TRIAL_COLUMNS),
    )
