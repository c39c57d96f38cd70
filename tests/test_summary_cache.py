"""The stored summary (whole document per catalog version, one entry per report) always
equals the document built from scratch, across loads that change files and releases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dashboard import service
from dashboard.data.catalog import open_catalog

ROOT = Path(__file__).resolve().parents[1]


def fresh(con: object) -> str:
    return json.dumps(service.summary_json(con), ensure_ascii=False)  # type: ignore[arg-type]


def test_stored_summary_tracks_every_change(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports)
    con = open_catalog(str(tmp_path / "catalog.duckdb"))
    service.refresh_catalog(con, reports)
    first = service.summary_text(con)
    assert first == fresh(con)

    service.refresh_catalog(con, reports)  # nothing changed: the stored text is reused
    assert service.summary_text(con) == first

    changed = next(reports.glob("code-agent/*v1.9.0.json"))
    data = json.loads(changed.read_text())
    data["cases"] = data["cases"][:-3]
    changed.write_text(json.dumps(data))
    service.refresh_catalog(con, reports)
    second = service.summary_text(con)
    assert second == fresh(con) and second != first

    (reports / "relidash.toml").write_text('[releases]\nkey = "file_stem"\n')
    service.refresh_catalog(con, reports)
    third = service.summary_text(con)
    assert third == fresh(con)
    assert {r["release"] for r in json.loads(third)["reports"]} == {
        p.stem for p in reports.rglob("*.json")
    }
