"""The served catalog: refresh in a short-lived writer, read an in-memory copy, notice
changes cheaply, and read transcripts back from the report file on demand."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from dashboard.analysis import loading
from dashboard.cli import main as cli
from dashboard.data.load import ingest
from dashboard.data.load.snapshot import ServedCatalog
from dashboard.data.load.transcripts import TranscriptUnavailable, read_case_text, read_case_trials

FIXTURES = Path(__file__).parents[1] / "fixtures"
WITH_TRIALS = "mv-0.20.0_early-stop_runs8.json"


@pytest.fixture
def served(tmp_path: Path) -> ServedCatalog:
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in (WITH_TRIALS, "mv-0.15.2_early-stop_runs8.json"):
        shutil.copy(FIXTURES / name, reports / name)
        os.utime(reports / name, ns=(1_700_000_000_000_000_000,) * 2)  # not "just written"
    catalog = ServedCatalog(reports, str(tmp_path / "catalog.duckdb"))
    catalog.refresh(lambda con: loading.refresh_catalog(con, reports))
    return catalog


def test_an_unchanged_directory_is_not_stale(served: ServedCatalog) -> None:
    assert not served.stale()


def test_touching_adding_or_removing_a_file_makes_it_stale(served: ServedCatalog) -> None:
    report = served.reports_dir / WITH_TRIALS
    os.utime(report, ns=(1_700_000_000_000_000_001,) * 2)
    assert served.stale()
    served.refresh(lambda con: loading.refresh_catalog(con, served.reports_dir))
    assert not served.stale()
    (served.reports_dir / "new.json").write_text("{}")
    assert served.stale()
    served.refresh(lambda con: loading.refresh_catalog(con, served.reports_dir))
    (served.reports_dir / "new.json").unlink()
    assert served.stale()


def test_the_server_holds_no_lock_between_refreshes(
    served: ServedCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    # a CLI writer can open the same catalog while the served copy is in use
    assert (
        cli.main(["summary", str(served.reports_dir), "--json", "--catalog", served.location]) == 0
    )
    assert '"reports"' in capsys.readouterr().out
    assert served.cursor().execute("SELECT count(*) FROM reports").fetchall() == [(2,)]


def _case_with_trials(served: ServedCatalog) -> tuple[int, int, int]:
    rows = (
        served.cursor()
        .execute(
            "SELECT report_id, case_idx, n_trials FROM cases WHERE n_trials > 0 ORDER BY report_id, case_idx"
        )
        .fetchall()
    )
    assert rows
    return rows[0]


def test_transcripts_come_from_the_file(served: ServedCatalog) -> None:

    report_id, case_idx, n_trials = _case_with_trials(served)
    trials = read_case_trials(served.cursor(), report_id, case_idx)
    data = json.loads((served.reports_dir / WITH_TRIALS).read_text())
    expected = data["cases"][case_idx - 1]["trials"]
    assert len(trials) == n_trials == len(expected)
    assert sorted(trials["output"]) == sorted(t["output"] for t in expected)
    assert set(trials["status"]) <= {
        "passed",
        "failed_quality",
        "model_error",
        "judge_error",
        "evaluator_error",
        "skipped",
    }


def test_case_output_and_graders_come_from_the_file(served: ServedCatalog) -> None:

    for name in ("mv-0.15.2_early-stop_runs8.json", WITH_TRIALS):
        (report_id,) = (
            served.cursor()
            .execute("SELECT report_id FROM reports WHERE file = $f", {"f": name})
            .fetchall()[0]
        )
        data = json.loads((served.reports_dir / name).read_text())
        for case_idx, case in enumerate(data["cases"], start=1):
            text = read_case_text(served.cursor(), report_id, case_idx)
            assert text["output"] == case["output"]
            graders = json.loads(text["evaluators"])
            assert [g["name"] for g in graders] == [e["name"] for e in case["evaluators"]]
            assert [g["reason"] for g in graders] == [e.get("reason") for e in case["evaluators"]]
        assert read_case_text(served.cursor(), report_id, len(data["cases"]) + 1)["output"] is None
    (served.reports_dir / name).write_text("{}")
    with pytest.raises(TranscriptUnavailable, match="changed since it was loaded"):
        read_case_text(served.cursor(), report_id, 1)


def test_a_changed_report_file_is_never_misread(served: ServedCatalog) -> None:
    report_id, case_idx, _ = _case_with_trials(served)
    report = served.reports_dir / WITH_TRIALS
    report.write_bytes(report.read_bytes() + b"\n")
    with pytest.raises(TranscriptUnavailable, match="changed since it was loaded"):
        read_case_trials(served.cursor(), report_id, case_idx)
    report.unlink()
    with pytest.raises(TranscriptUnavailable, match="cannot be read now"):
        read_case_trials(served.cursor(), report_id, case_idx)


def test_a_corrupt_catalog_is_rebuilt_from_the_reports(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(FIXTURES, reports)
    catalog = tmp_path / "catalog.duckdb"
    catalog.write_bytes(os.urandom(64 * 1024))  # not a DuckDB file at all
    assert cli.main(["summary", str(reports), "--json", "--catalog", str(catalog)]) == 0
    rebuilt = ServedCatalog(reports, str(catalog))
    rebuilt.refresh(lambda con: loading.refresh_catalog(con, reports))
    count = rebuilt.cursor().execute("SELECT count(*) FROM reports").fetchall()[0][0]
    # as many reports as a catalog built afresh from the same files
    fresh = ServedCatalog(reports, str(tmp_path / "fresh.duckdb"))
    fresh.refresh(lambda con: loading.refresh_catalog(con, reports))
    expected = fresh.cursor().execute("SELECT count(*) FROM reports").fetchall()[0][0]
    assert count == expected > len(list(FIXTURES.glob("*.json")))


def test_a_restarted_server_adopts_a_current_catalog_without_loading(served: ServedCatalog) -> None:
    def must_not_load(con: object) -> ingest.IngestResult:
        raise AssertionError("an unchanged directory needs no load")

    restarted = ServedCatalog(served.reports_dir, served.location)
    result = restarted.refresh(must_not_load)
    assert result is not None and result.files == 2 and result.parsed == 0
    assert restarted.version == served.version

    os.utime(served.reports_dir / WITH_TRIALS, ns=(1_700_000_000_000_000_002,) * 2)
    loads = []
    again = ServedCatalog(served.reports_dir, served.location)
    again.refresh(lambda con: loads.append(1) or loading.refresh_catalog(con, served.reports_dir))
    assert loads == [1]  # a changed directory takes the writer and loads
