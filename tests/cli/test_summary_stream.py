"""`relidash summary` streams: the document is written a batch of reports at a
time, byte-identical to the whole-document form, and `--suite` / `--release` choose what
it covers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import summaries

from dashboard.analysis import summary
from dashboard.analysis.loading import refresh_catalog
from dashboard.data.catalog import open_catalog
from dashboard.render import summary_json

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"


@pytest.fixture
def con() -> Any:
    con = open_catalog(":memory:")
    refresh_catalog(con, SAMPLE)
    return con


@pytest.mark.parametrize("by", ["file", "release"])
def test_stream_equals_the_whole_document(con: Any, by: str) -> None:
    text = "".join(summary_json.summary_stream(con, by))
    assert text == json.dumps(summaries.summary_json(con, by), ensure_ascii=False)


@pytest.mark.parametrize("batch", [1, 2, 3, 500])
def test_by_release_gathers_each_release_across_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    """A release of several files is one entry with all of them, in order, however the
    reports fall into batches (a release's rows may straddle two)."""
    reports = tmp_path / "reports"
    shutil.copytree(SAMPLE, reports)
    for source in sorted(reports.rglob("*.json"))[::4]:
        for copy in ("-rerun", "-third"):
            shutil.copyfile(source, source.with_name(source.stem + copy + ".json"))
    con = open_catalog(":memory:")
    refresh_catalog(con, reports)
    monkeypatch.setattr(summary, "SUMMARY_BATCH", batch)
    text = "".join(summary_json.summary_stream(con, "release"))
    doc = summaries.summary_json(con, "release")
    assert text == json.dumps(doc, ensure_ascii=False)
    assert max(len(r["files"]) for r in doc["releases"]) == 3


def test_stream_writes_before_it_has_read_everything(
    con: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One batch in, its entries are out: a failure in the second batch comes after them."""
    monkeypatch.setattr(summary, "SUMMARY_BATCH", 2)
    con.execute("DELETE FROM report_records")  # every entry is built as it is streamed
    built = summary_json.report_texts
    calls = []

    def second_batch_fails(con: Any, rows: Any, *cells: Any) -> Any:
        calls.append(len(rows))
        if len(calls) == 2:
            raise RuntimeError("second batch")
        return built(con, rows, *cells)

    monkeypatch.setattr(summary_json, "report_texts", second_batch_fails)
    pieces = summary_json.summary_stream(con, "file")
    got = [next(pieces), next(pieces)]
    opening = '{"reports": ['
    assert got[0].startswith(opening) and json.loads(got[0][len(opening) :])["file"]
    assert got[1].startswith(", ") and json.loads(got[1][2:])["file"]
    with pytest.raises(RuntimeError, match="second batch"):
        list(pieces)
    assert calls == [2, 2]


def test_suite_and_release_choose_the_entries(con: Any) -> None:
    doc = json.loads("".join(summary_json.summary_stream(con, "file", ["code-agent"])))
    assert doc["reports"] and {r["suite"] for r in doc["reports"]} == {"code-agent"}
    one = json.loads("".join(summary_json.summary_stream(con, "release", None, "v1.9.0")))
    assert sorted(r["suite"] for r in one["releases"]) == ["code-agent", "support-agent"]
    assert {r["release"] for r in one["releases"]} == {"v1.9.0"}
    every = sorted(summary.loaded_suites(con))
    assert len(every) >= 2
    assert json.loads("".join(summary_json.summary_stream(con, "file", every))) == (
        summaries.summary_json(con)
    )
    two = json.loads("".join(summary_json.summary_stream(con, "file", every[:2])))
    assert {r["suite"] for r in two["reports"]} == set(every[:2])


def test_cli_suite_filter_and_unknown_suite(capsys: pytest.CaptureFixture[str]) -> None:
    from cli_run import run_cli

    code, out, _ = run_cli(
        ["summary", str(SAMPLE), "--suite", "support-agent", "--catalog", ":memory:"], capsys
    )
    assert code == 0 and "Suite support-agent" in out and "Suite code-agent" not in out
    code, _, err = run_cli(
        ["summary", str(SAMPLE), "--suite", "nope", "--catalog", ":memory:"], capsys
    )
    assert code == 2 and "no suite named 'nope'" in err and "code-agent" in err


def test_an_unknown_suite_still_leaves_the_load_checkpointed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 for a suite the catalog lacks comes after the load: its log is checkpointed
    all the same, or every later command would replay it on opening."""
    from cli_run import run_cli

    location = tmp_path / "catalog.duckdb"
    code, _, err = run_cli(
        ["summary", str(SAMPLE), "--suite", "nope", "--catalog", str(location)], capsys
    )
    assert code == 2 and "no suite named 'nope'" in err
    log = Path(str(location) + ".wal")
    assert location.stat().st_size > 0 and (not log.exists() or log.stat().st_size == 0)
