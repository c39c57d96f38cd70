"""multivon-eval reports (0.4 onwards): one `.json` file each, staged by DuckDB's JSON
reader (dashboard/data/formats/multivon/staging.py, queries/stage_*.sql), not read here. This package only
tells the loader so and words the harness's UNKNOWN reasons; it claims every file no other
harness does, so that a file that is no report at all is named with multivon-eval's
fields in mind.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.data.formats import MULTIVON
from dashboard.data.formats.protocol import FormatProblem, NoSettings, ReportRows, Settings
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


HARNESS = MultivonHarness()
