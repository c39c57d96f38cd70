"""Strings built to break things, in names, tags and ids: bound as SQL values, shown as
text on every page, and a trial list that disagrees with its counts never reaches a metric."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard import service
from dashboard.data.catalog import open_catalog

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "mv-0.18.0_early-stop_runs8.json"
HOSTILE_SUITE = "x'); DROP TABLE reports; --\u202e../../etc \x1b[31m"
HOSTILE_TAG = 'risk_tier:"; DELETE FROM cases; --'
HOSTILE_ID = "../../../../etc/passwd\u200f" + "A" * 5000


def hostile_report(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads(FIXTURE.read_text())
    data["suite"] = HOSTILE_SUITE
    data["model"] = "v1 <script>alert(1)</script>"
    for case in data["cases"]:
        case["tags"] = [*case.get("tags", []), HOSTILE_TAG, "\x00weird\ttag"]
    data["cases"][0]["case_id"] = HOSTILE_ID
    (reports / "hostile.json").write_text(json.dumps(data))
    return reports


def test_hostile_names_load_bound_and_unchanged(tmp_path: Path) -> None:
    reports = hostile_report(tmp_path)
    con = open_catalog(":memory:")
    service.refresh_catalog(con, reports)
    document = service.summary_json(con)
    (report,) = document["reports"]
    assert report["suite"] == HOSTILE_SUITE  # stored as given, not interpreted
    assert con.execute("SELECT count(*) FROM cases").fetchall()[0][0] == len(
        json.loads((reports / "hostile.json").read_text())["cases"]
    )
    tags = {t for (t,) in con.execute("SELECT DISTINCT tag FROM case_tags").fetchall()}
    assert HOSTILE_TAG in tags


def test_every_page_renders_hostile_names_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reports = hostile_report(tmp_path)
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=90)
    at.run()
    for page in ("releases", "slices", "lottery", "gates", "data"):
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, page
    at.switch_page("app_pages/slices.py")
    at.query_params.update({"dim": "risk_tier"})
    at.run()
    assert not at.exception
    for block in at.markdown:  # nothing from the report became markup
        assert "<script>" not in block.value


def test_a_trial_list_that_disagrees_with_its_counts_is_left_out(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads(FIXTURE.read_text())
    target = next(i for i, c in enumerate(data["cases"]) if c.get("trials") and c["runs"] > 1)
    data["cases"][target]["trials"] = data["cases"][target]["trials"][:-1]  # one trial lost
    (reports / "edited.json").write_text(json.dumps(data))
    shutil.copy(FIXTURE, reports / "original.json")
    con = open_catalog(":memory:")
    service.refresh_catalog(con, reports)
    problems = service.summary_json(con)["problems"]
    (problem,) = [p for p in problems if p["file"] == "edited.json"]
    assert problem["scope"] == "case" and "trials but runs is" in problem["reason"]
    excluded = con.execute(
        "SELECT c.n FROM cases c JOIN reports r USING (report_id) "
        "WHERE r.file = 'edited.json' AND c.case_idx = $i",
        {"i": target + 1},
    ).fetchall()
    assert excluded == [(None,)]


def test_a_wrong_type_holding_multibyte_text_is_one_problem(tmp_path: Path) -> None:
    # found by the fuzz test: DuckDB quotes the bad value in its error, cuts a multi-byte
    # character, and the message no longer decodes; the file must still be one problem row
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads((ROOT / "tests" / "fixtures" / "mv-0.16.0_runs3.json").read_text())
    data["cases"][1]["skipped"] = [
        "'; DROP TABLE reports; --",
        "../../etc/passwd",
        "\u202eevil\u202c",
    ]
    (reports / "mutant.json").write_text(json.dumps(data))
    shutil.copy(FIXTURE, reports / "good.json")
    con = open_catalog(":memory:")
    service.refresh_catalog(con, reports)
    document = service.summary_json(con)
    assert [p["file"] for p in document["problems"]] == ["mutant.json"]
    assert "wrong type" in document["problems"][0]["reason"]
    assert [r["file"] for r in document["reports"]] == ["good.json"]


@pytest.mark.parametrize("ci", [0, "wide", [0.1], {"low": 0}, [None, None]])
def test_a_stored_block_with_a_malformed_interval_is_a_report_problem(
    tmp_path: Path, ci: object
) -> None:
    # found by the fuzz test: "ci_95": 0 in a 0.16 stored block raised instead of warning
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads((ROOT / "tests" / "fixtures" / "mv-0.16.0_runs3.json").read_text())
    data["summary"]["pass_hat_k"]["ci_95"] = ci
    (reports / "edited.json").write_text(json.dumps(data))
    con = open_catalog(":memory:")
    service.refresh_catalog(con, reports)
    document = service.summary_json(con)
    assert [r["file"] for r in document["reports"]] == ["edited.json"]
    assert [(p["file"], p["scope"]) for p in document["problems"]] == [("edited.json", "report")]
