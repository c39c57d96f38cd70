"""multivon-eval reports (0.4 onwards): one `.json` file each, staged by DuckDB's JSON
reader in batches (reader.py; staging.py, stager.py and queries/stage_*.sql), checked
cheaply first (checks.py) and judged from the staged rows (findings.py). Its trial records
carry digests a review checks (trial_digests.py). It claims every file no other harness
does, so that a file that is no report at all is named with multivon-eval's fields in
mind.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.data.formats import MULTIVON
from dashboard.data.formats.multivon.reader import READER
from dashboard.data.formats.multivon.trial_digests import check_trial_digests
from dashboard.data.formats.protocol import (
    FormatProblem,
    NoSettings,
    ReportRows,
    Settings,
    TrialDigests,
)
from dashboard.data.formats.unknown_wording import TERMS

if TYPE_CHECKING:
    import duckdb
    import pandas as pd


class MultivonHarness:
    name = MULTIVON
    title = "multivon-eval"
    settings_table = None
    terms = TERMS[MULTIVON]
    staged = True
    staged_reader = READER
    declared_release = "target_version"

    def claims(self, path: str, leading: bytes) -> bool:
        return not path.endswith("/")

    def report_directories(self, paths: set[str]) -> Iterable[str]:
        return ()

    def read_settings(self, config: Path | None) -> Settings:
        return NoSettings()

    def read(self, path: str, size: int, max_bytes: int, settings: Settings) -> list[ReportRows]:
        raise FormatProblem("multivon-eval reports are staged by DuckDB, not read in Python")

    def case_trials(self, con: duckdb.DuckDBPyConnection, *args: Any) -> pd.DataFrame:
        raise FormatProblem("multivon-eval trials are read by queries/case_trials.sql")

    def word_unknowns(self, con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
        return None  # the stats floor words them as multivon-eval does

    def check_records(self, path: Path) -> TrialDigests:
        return check_trial_digests(path)


HARNESS = MultivonHarness()
