"""Strings built to break things, in names, tags and ids: bound as SQL values, shown as
text on every page, and a trial list that disagrees with its counts never reaches a metric."""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pytest
import streamlit as st
import summaries
from page_tables import static_bodies
from page_tables import tables as page_tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis import loading
from dashboard.data.catalog import open_catalog

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "mv-0.18.0_early-stop_runs8.json"
HOSTILE_SUITE = "x'); DROP TABLE reports; --\u202e../../etc \x1b[31m"
HOSTILE_TAG = 'risk_tier:"; DELETE FROM cases; --'
HOSTILE_ID = "../../../../etc/passwd\u200f" + "A" * 5000
HOSTILE_RELEASE = "v1 <script>alert(1)</script>"
WEIRD_TAG = "\x00weird\ttag"
# A last line added to every transcript: the diff on the Lottery page must show it as
# these characters, i.e. escaped into the HTML it builds.
HOSTILE_OUTPUT = "[assistant] <script>alert(2)</script> & <img src=x onerror=alert(3)>"
ESCAPED_OUTPUT = (
    "[assistant] &lt;script&gt;alert(2)&lt;/script&gt; &amp; &lt;img src=x onerror=alert(3)&gt;"
)


def hostile_report(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads(FIXTURE.read_text())
    data["suite"] = HOSTILE_SUITE
    data["model"] = HOSTILE_RELEASE
    for case in data["cases"]:
        case["tags"] = [*case.get("tags", []), HOSTILE_TAG, WEIRD_TAG]
        for trial in case.get("trials") or []:
            trial["output"] = f"{trial['output']}\n{HOSTILE_OUTPUT}"
    data["cases"][0]["case_id"] = HOSTILE_ID
    (reports / "hostile.json").write_text(json.dumps(data))
    return reports


def test_hostile_names_load_bound_and_unchanged(tmp_path: Path) -> None:
    reports = hostile_report(tmp_path)
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, reports)
    document = summaries.summary_json(con)
    (report,) = document["reports"]
    assert report["suite"] == HOSTILE_SUITE  # stored as given, not interpreted
    assert con.execute("SELECT count(*) FROM cases").fetchall()[0][0] == len(
        json.loads((reports / "hostile.json").read_text())["cases"]
    )
    tags = {t for (t,) in con.execute("SELECT DISTINCT tag FROM case_tags").fetchall()}
    assert HOSTILE_TAG in tags


def markdown_rendered(at: AppTest) -> list[tuple[str, bool]]:
    """(text, whether HTML in it is rendered) of every element Streamlit renders as Markdown."""
    blocks = [(m.value, m.allow_html) for m in [*at.markdown, *at.caption]]
    alerts = [*at.success, *at.info, *at.warning, *at.error]
    return blocks + [(a.value, False) for a in alerts]  # an alert never renders HTML


def test_every_page_renders_hostile_names_as_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each page shows the report's strings exactly as written, as text: in widgets and
    grids (which never interpret them), in static tables and the transcript diff as HTML
    escaped by relidash itself, and in Markdown only with HTML off (Streamlit then shows
    the tags as typed)."""
    reports = hostile_report(tmp_path)
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    st.cache_data.clear()
    st.cache_resource.clear()
    first_case_tags = json.loads(FIXTURE.read_text())["cases"][0]["tags"]
    risk_tier = next(t for t in first_case_tags if t.startswith("risk_tier:"))
    at = AppTest.from_file(str(ROOT / "dashboard" / "app" / "main.py"), default_timeout=90)
    at.run()
    fragments = ("DROP TABLE", "<script>", "DELETE FROM", "etc/passwd", "weird", "<img")
    for page in ("releases", "slices", "lottery", "gates", "data"):
        at.switch_page(f"page_scripts/{page}.py")
        if page == "slices":  # the slice that holds the case with the hostile id
            at.query_params.update({"dim": "risk_tier", "slice": risk_tier.split(":", 1)[1]})
        at.run()
        assert not at.exception, page
        for text, allow_html in markdown_rendered(at):
            if any(fragment in text for fragment in fragments):
                assert not allow_html, f"{page}: report text rendered as HTML: {text!r}"
        suites = [s for s in at.selectbox if s.label == "Suite"]
        if page != "data":
            assert [(s.options, s.value) for s in suites] == [([HOSTILE_SUITE], HOSTILE_SUITE)]
        for body in static_bodies(at):  # a static table's cells, as sent: escaped
            assert "<script" not in body and "<img" not in body, page
        tables = page_tables(at)
        if page == "releases":
            assert list(tables[0]["release"]) == [HOSTILE_RELEASE]
            assert f"<td>{html.escape(HOSTILE_RELEASE)}</td>" in static_bodies(at)[0]
        elif page == "slices":
            assert any(HOSTILE_ID in list(t.get("case_id", [])) for t in tables), page
        elif page == "lottery":
            (diff,) = at.get("html")
            assert ESCAPED_OUTPUT in diff.value
            assert "<script>" not in diff.value and "<img" not in diff.value
        elif page == "gates":
            (slices,) = at.multiselect
            assert {HOSTILE_TAG, WEIRD_TAG} <= set(slices.options)
        elif page == "data":
            row = tables[0].iloc[0]
            assert (row["suite"], row["release"]) == (HOSTILE_SUITE, HOSTILE_RELEASE)


def test_a_trial_list_that_disagrees_with_its_counts_is_left_out(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads(FIXTURE.read_text())
    target = next(i for i, c in enumerate(data["cases"]) if c.get("trials") and c["runs"] > 1)
    data["cases"][target]["trials"] = data["cases"][target]["trials"][:-1]  # one trial lost
    (reports / "edited.json").write_text(json.dumps(data))
    shutil.copy(FIXTURE, reports / "original.json")
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, reports)
    problems = summaries.summary_json(con)["problems"]
    (problem,) = [p for p in problems if p["file"] == "edited.json"]
    assert problem["scope"] == "case" and "trials but runs is" in problem["reason"]
    excluded = con.execute(
        "SELECT c.n FROM cases c JOIN reports r USING (report_id) "
        "WHERE r.file = 'edited.json' AND c.case_idx = $i",
        {"i": target + 1},
    ).fetchall()
    assert excluded == [(None,)]


def test_a_wrong_type_holding_multibyte_text_is_one_problem(tmp_path: Path) -> None:
    # a case the fuzz test reaches: DuckDB quotes the bad value in its error, cuts a
    # multi-byte character, and the message does not decode; the file must still be one
    # problem row
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
    loading.refresh_catalog(con, reports)
    document = summaries.summary_json(con)
    assert [p["file"] for p in document["problems"]] == ["mutant.json"]
    assert "wrong type" in document["problems"][0]["reason"]
    assert [r["file"] for r in document["reports"]] == ["good.json"]


@pytest.mark.parametrize("ci", [0, "wide", [0.1], {"low": 0}, [None, None]])
def test_a_stored_block_with_a_malformed_interval_is_a_report_problem(
    tmp_path: Path, ci: object
) -> None:
    # a case the fuzz test reaches: "ci_95": 0 in a 0.16 stored block warns, never raises
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads((ROOT / "tests" / "fixtures" / "mv-0.16.0_runs3.json").read_text())
    data["summary"]["pass_hat_k"]["ci_95"] = ci
    (reports / "edited.json").write_text(json.dumps(data))
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, reports)
    document = summaries.summary_json(con)
    assert [r["file"] for r in document["reports"]] == ["edited.json"]
    assert [(p["file"], p["scope"]) for p in document["problems"]] == [("edited.json", "report")]
