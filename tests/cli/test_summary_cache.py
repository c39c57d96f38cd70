"""The stored summary (one entry per report; the by-release document per catalog version)
always equals the document built from scratch, across loads that change files and releases."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
import summaries

from dashboard.analysis import loading, summary
from dashboard.data.catalog import open_catalog
from dashboard.render import summary_json

ROOT = Path(__file__).resolve().parents[2]


def fresh(con: object, by: str = "file") -> str:
    return json.dumps(summaries.summary_json(con, by), ensure_ascii=False)  # type: ignore[arg-type]


def both(con: object) -> tuple[str, str]:
    """Both groupings as stored, after checking each against a fresh build."""
    texts = summary_json.summary_text(con, "file"), summary_json.summary_text(con, "release")  # type: ignore[arg-type]
    assert texts == (fresh(con), fresh(con, "release"))
    return texts


def test_stored_summary_tracks_every_change(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports)
    con = open_catalog(str(tmp_path / "catalog.duckdb"))
    loading.refresh_catalog(con, reports)
    first = both(con)

    loading.refresh_catalog(con, reports)  # nothing changed: the stored text is reused
    assert both(con) == first

    changed = next(reports.glob("code-agent/*v1.9.0.json"))
    data = json.loads(changed.read_text())
    data["cases"] = data["cases"][:-3]
    changed.write_text(json.dumps(data))
    loading.refresh_catalog(con, reports)
    second = both(con)
    assert second[0] != first[0] and second[1] != first[1]

    (reports / "relidash.toml").write_text('[releases]\nkey = "file_stem"\n')
    loading.refresh_catalog(con, reports)
    third, _ = both(con)
    assert {r["release"] for r in json.loads(third)["reports"]} == {
        p.stem for pattern in ("*.json", "*.eval") for p in reports.rglob(pattern)
    }


def test_a_summary_of_stored_entries_asks_for_no_metric_cells(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once every entry is stored, a summary reads them back and builds none: not even an
    empty metric_cells query per batch, whose fixed cost, once per batch, adds up to a
    large part of a warm summary of many reports."""
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports)
    con = open_catalog(str(tmp_path / "catalog.duckdb"))
    loading.refresh_catalog(con, reports)
    first = summary_json.summary_text(con, "file")  # builds and stores every entry
    asked: list[str] = []
    real = summary.load_query

    def spy(name: str) -> str:
        asked.append(name)
        return real(name)

    monkeypatch.setattr(summary, "load_query", spy)
    assert summary_json.summary_text(con, "file") == first
    assert "read/metric_cells" not in asked


class HeldUntilWaited:
    """A settling that checkpoints until waited for: HeldRecords holds every write meanwhile."""

    def __init__(self) -> None:
        self.waited = False

    def running(self) -> bool:
        return not self.waited

    def wait(self) -> None:
        self.waited = True


def stored_entries(con: object) -> int:
    return int(con.execute("SELECT count(*) FROM report_records").fetchall()[0][0])  # type: ignore[attr-defined]


def test_entries_built_during_a_checkpoint_are_held_then_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the load's log is checkpointed, the entries a summary builds are held back
    (a write would wait for the checkpoint), at most HELD_MOST of them, and every one is
    stored in the end: the document is the same, and the next summary builds none."""
    con = open_catalog(str(tmp_path / "catalog.duckdb"))
    loading.refresh_catalog(con, ROOT / "sample_reports")
    reports = int(con.execute("SELECT count(*) FROM reports").fetchall()[0][0])
    expected = fresh(con)

    settling = HeldUntilWaited()
    keep = summary.HeldRecords(settling)  # type: ignore[arg-type]
    assert "".join(summary_json.summary_stream(con, "file", keep=keep)) == expected
    assert stored_entries(con) == 0 and len(keep.held) == reports
    settling.wait()
    keep.flush(con)
    assert stored_entries(con) == reports
    assert summary_json.summary_text(con, "file") == expected

    # past HELD_MOST, the next batch waits for the checkpoint and stores what was held
    con.execute("DELETE FROM report_records")
    monkeypatch.setattr(summary.HeldRecords, "HELD_MOST", 1)
    monkeypatch.setattr(summary, "SUMMARY_BATCH", 2)
    settling = HeldUntilWaited()
    keep = summary.HeldRecords(settling)  # type: ignore[arg-type]
    assert "".join(summary_json.summary_stream(con, "file", keep=keep)) == expected
    assert settling.waited and stored_entries(con) + len(keep.held) == reports
    keep.flush(con)
    assert stored_entries(con) == reports


def test_summary_checkpoints_a_large_log_beside_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`relidash summary` after a load that logged a lot checkpoints it in a thread while
    it builds the entries; it ends with no log, every entry stored, and the same output
    as a summary that checkpointed after."""
    from cli_run import run_cli

    from dashboard.data import catalog

    ran: list[int] = []
    real = catalog.SettleAhead._checkpoint
    real_keep = summary.HeldRecords.__call__
    kept = threading.Event()

    def keep(self: summary.HeldRecords, con: object, records: list[tuple[int, str]]) -> None:
        real_keep(self, con, records)  # type: ignore[arg-type]
        kept.set()

    def checkpoint(cursor: object) -> None:
        # the checkpoint lasts until entries were built: they are held, and must be stored
        ran.append(catalog.logged_bytes(cursor))  # type: ignore[arg-type]
        kept.wait(timeout=30)
        real(cursor)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog.SettleAhead, "_checkpoint", staticmethod(checkpoint))
    monkeypatch.setattr(summary.HeldRecords, "__call__", keep)
    outputs = {}
    for ahead in (1 << 40, 1):  # never, and for any log
        monkeypatch.setattr(catalog, "SETTLE_AHEAD_BYTES", ahead)
        kept.clear()
        location = tmp_path / f"catalog-{ahead}.duckdb"
        code, out, _ = run_cli(
            ["summary", str(ROOT / "sample_reports"), "--json", "--catalog", str(location)],
            capsys,
        )
        assert code == 0
        log = Path(str(location) + ".wal")
        assert not log.exists() or log.stat().st_size == 0
        con = open_catalog(str(location))
        assert stored_entries(con) == con.execute("SELECT count(*) FROM reports").fetchall()[0][0]
        con.close()
        outputs[ahead] = out
    assert len(ran) == 1 and ran[0] > 0  # only the second ran ahead, over the load's log
    assert outputs[1] == outputs[1 << 40]
