"""Inspect AI eval logs: `.eval` archives and `.json` logs, one log one report.

log.py reads a log's header, summaries and reductions; rows.py maps them to catalog rows;
transcript.py reads one sample's epochs back for the page that shows them; unknown.py
words a report's UNKNOWN reasons in samples and epochs.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dashboard.data.formats import INSPECT
from dashboard.data.formats.inspect.log import (
    LogProblem,
    read_inspect_settings,
    read_log,
    sample_id_of,
)
from dashboard.data.formats.inspect.rows import log_rows
from dashboard.data.formats.inspect.transcript import evaluators, read_sample_epochs, transcript
from dashboard.data.formats.inspect.unknown import word_unknowns
from dashboard.data.formats.inspect.zip_members import ZIP_MAGIC
from dashboard.data.formats.protocol import (
    FormatProblem,
    ReportRows,
    RowHarness,
    Settings,
)
from dashboard.data.formats.unknown_wording import TERMS
from dashboard.data.names import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    import duckdb

# An Inspect JSON log opens with one of EvalLog's fields (it writes `version` first);
# a multivon-eval report opens with `suite` or `schema`.
_JSON_HEAD = re.compile(rb'^(?:\xef\xbb\xbf)?\s*\{\s*"(?:version|status|eval)"\s*:', re.DOTALL)
# An epoch's member, decompressed, is read up to the load's default file limit: a member
# a few kilobytes long can claim gigabytes, and each view pays its claim.
SAMPLE_MEMBER_LIMIT = DEFAULT_MAX_BYTES
NO_TRANSCRIPT = "(this epoch's transcript is not in the log)"


class InspectHarness(RowHarness):
    name = INSPECT
    title = "Inspect AI"
    settings_table = "inspect"
    declared_release = "metadata:release"
    terms = TERMS[INSPECT]

    def claims(self, path: str, leading: bytes) -> bool:
        """A zip archive, or a `.eval` file whatever it holds (the reader says why it is
        not a log), or a JSON object whose first key is one of Inspect's top-level fields."""
        if path.endswith("/"):
            return False
        return (
            leading.startswith(ZIP_MAGIC)
            or path.endswith(".eval")
            or bool(_JSON_HEAD.match(leading))
        )

    def read_settings(self, config: Path | None) -> Settings:
        return read_inspect_settings(config)

    def read(self, path: str, size: int, max_bytes: int, settings: Settings) -> list[ReportRows]:
        try:
            return [log_rows(read_log(path, size, max_bytes), settings)]  # type: ignore[arg-type]
        except LogProblem as exc:
            raise FormatProblem(str(exc)) from exc

    trials_query = "formats/inspect/case_trials"

    def transcripts(
        self, rows: list[dict[str, Any]], path: Path, size: int
    ) -> list[tuple[str, list[dict[str, Any]]]]:
        """A sample's epochs, read from the log by the scorer and threshold it was read with."""
        first = rows[0]
        scorer, threshold = str(first["scorer"]), float(first["pass_threshold"])
        try:
            epochs = read_sample_epochs(
                str(path), size, sample_id_of(str(first["case_id"])), SAMPLE_MEMBER_LIMIT
            )
        except LogProblem as exc:
            raise FormatProblem(str(exc)) from exc
        filled: list[tuple[str, list[dict[str, Any]]]] = []
        for row in rows:
            sample = epochs.get(int(row["run_index"]))
            if sample is None:
                filled.append((NO_TRANSCRIPT, []))
            else:
                filled.append(
                    (transcript(sample, scorer, threshold), evaluators(sample, scorer, threshold))
                )
        return filled

    def word_unknowns(self, con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> None:
        word_unknowns(con, report_ids)


HARNESS = InspectHarness()
