"""The stored summary (one entry per report; the by-release document per catalog version)
always equals the document built from scratch, across loads that change files and releases."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dashboard.analysis import loading, summary
from dashboard.data.catalog import open_catalog

ROOT = Path(__file__).resolve().parents[1]


def fresh(con: object, by: str = "file") -> str:
    return json.dumps(summary.summary_json(con, by), ensure_ascii=False)  # type: ignore[arg-type]


def both(con: object) -> tuple[str, str]:
    """Both groupings as stored, after checking each against a fresh build."""
    texts = summary.summary_text(con, "file"), summary.summary_text(con, "release")  # type: ignore[arg-type]
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
