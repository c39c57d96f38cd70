"""Harbor jobs: a job folder (config.json, lock.json, result.json and one folder per
trial) is one directory report, read into one report per eval of the job.

job.py reads a job's files and relidash.toml's `[harbor]` table and checks the version;
outcome.py decides each trial's outcome by the rule of the Harbor version that wrote it;
causes.py names an exception's failure cause by Harbor 0.26's error policy; rows.py maps a
job to catalog rows; tasks.py reads the slices of a task's task.toml; transcript.py reads
a task's attempts back for the pages that show them; unknown.py words UNKNOWN reasons in
tasks and attempts.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.data.formats import HARBOR
from dashboard.data.formats.harbor.job import read_harbor_settings, read_job
from dashboard.data.formats.harbor.outcome import trial_outcome
from dashboard.data.formats.harbor.rows import job_rows
from dashboard.data.formats.harbor.transcript import evaluators, read_task_attempts, transcript
from dashboard.data.formats.harbor.unknown import word_unknowns
from dashboard.data.formats.protocol import (
    ReportRows,
    RowHarness,
    RunTerms,
    Settings,
)

if TYPE_CHECKING:
    import duckdb

TERMS = RunTerms(
    trials="attempts",
    trial="attempt",
    case="task",
    shortest="the task with the fewest",
    matched="the matched task with the fewest",
    option="--n-attempts",
    declines="relidash does not extrapolate.",
    no_cases="UNKNOWN — no task has an attempt that counts (each attempt ended without a "
    "valid reward) to estimate from.",
)
NO_TRANSCRIPT = "(this attempt's folder is no longer in the job)"


def job_directories(paths: set[str]) -> list[str]:
    """Harbor job folders among the listed files' directories, by name only: a folder
    with config.json and lock.json (Harbor writes both as a job starts), or, from a
    Harbor that writes no lock.json, config.json, result.json and a trial folder with a
    result.json. Trial folders (which hold the same names) are left to their job: only
    the outermost such folder is a job."""
    found: set[str] = set()
    unlocked: list[str] = []
    for path in paths:
        if not path.endswith("config.json") or (path != "config.json" and path[-12] != "/"):
            continue
        folder = path[:-12] if path != "config.json" else ""
        prefix = f"{folder}/" if folder else ""
        if f"{prefix}lock.json" in paths:
            found.add(folder)
        elif f"{prefix}result.json" in paths:
            unlocked.append(folder)
    if unlocked:
        parents = {
            posixpath.dirname(posixpath.dirname(p)) for p in paths if p.endswith("/result.json")
        }
        found.update(d for d in unlocked if d in parents)
    # a folder inside a found one is a trial: dropped by its parent first (one lookup each),
    # then the few left are checked against every ancestor
    jobs = [d for d in found if not d or posixpath.dirname(d) not in found]
    return sorted(d for d in jobs if not _inside(d, found))


def _inside(folder: str, found: set[str]) -> bool:
    if "" in found and folder:
        return True
    parts = folder.split("/")
    return any("/".join(parts[:end]) in found for end in range(1, len(parts)))


class HarborHarness(RowHarness):
    name = HARBOR
    title = "Harbor"
    settings_table = "harbor"
    terms = TERMS

    def claims(self, path: str, leading: bytes) -> bool:
        """A directory report: the registry's only directory reports are Harbor jobs
        (report_directories named them); read() checks that it is one."""
        return path.endswith("/")

    def report_directories(self, paths: set[str]) -> Iterable[str]:
        return job_directories(paths)

    def read_settings(self, config: Path | None) -> Settings:
        return read_harbor_settings(config)

    def read(self, path: str, size: int, max_bytes: int, settings: Settings) -> list[ReportRows]:
        return job_rows(read_job(path), settings)  # type: ignore[arg-type]

    trials_query = "formats/harbor/case_trials"

    def transcripts(
        self, rows: list[dict[str, Any]], path: Path, size: int
    ) -> list[tuple[str, list[dict[str, Any]]]]:
        """A task's attempts, read from the job folder in the order the catalog holds them."""
        first = rows[0]
        key, threshold = str(first["reward_key"]), float(first["pass_threshold"])
        attempts = read_task_attempts(str(path), str(first["case_id"]), str(first["eval_key"]))
        filled: list[tuple[str, list[dict[str, Any]]]] = []
        for _, trial in zip(rows, [*attempts, *[None] * len(rows)], strict=False):
            if trial is None:
                filled.append((NO_TRANSCRIPT, []))
                continue
            outcome = trial_outcome(trial, bool(first["valid_rule"]), key, threshold)
            folder = str(path / trial["_folder"])
            filled.append(
                (
                    transcript(folder, trial, outcome, key, threshold),
                    evaluators(outcome, key, threshold),
                )
            )
        return filled

    def word_unknowns(self, con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
        word_unknowns(con, report_ids)


HARNESS = HarborHarness()
