"""Long histories on the pages: a 300-release suite shows a window of the latest
30 releases, any range is reachable and deep-linkable as from= / to=, and UNKNOWN notes
are one line per distinct reason, not one per release."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from page_tables import charts, static_tables, svg_texts, tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.releases import release_table
from dashboard.analysis.summary import report_overview
from dashboard.app.widgets import WINDOW
from dashboard.data.catalog import open_catalog
from dashboard.render.formatting import unknown_notes
from dashboard.simulate import simulate_reports

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
RELEASES = 300
RUNS = 3


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("long") / "reports"
    simulate_reports(out, suites=1, releases=RELEASES, cases=6, runs=RUNS, fmt="0.15")
    return out


@pytest.fixture
def at(history: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("RELIDASH_REPORTS", str(history))
    monkeypatch.setenv("RELIDASH_CATALOG", str(tmp_path / "catalog.duckdb"))
    monkeypatch.setenv("RELIDASH_REVIEWS", str(tmp_path / "reviews"))
    st.cache_data.clear()
    st.cache_resource.clear()
    app = AppTest.from_file(str(APP), default_timeout=120)
    yield app
    st.cache_data.clear()
    st.cache_resource.clear()


def names(history: Path) -> list[str]:
    con = open_catalog(":memory:")
    refresh_catalog(con, history)
    overview = report_overview(con)
    return [str(r) for r in overview.sort_values("release_rank")["release"]]


def test_releases_page_shows_the_latest_window(at: AppTest, history: Path) -> None:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = tables(at)[0]
    all_names = names(history)
    assert len(all_names) == RELEASES
    assert list(shown["release"]) == all_names[-WINDOW:][::-1]  # newest first
    (slider,) = at.select_slider
    assert slider.value == (all_names[-WINDOW], all_names[-1])
    assert at.query_params["from"] in (all_names[-WINDOW], [all_names[-WINDOW]])


def test_any_range_is_reachable_and_deep_linkable(at: AppTest, history: Path) -> None:
    all_names = names(history)
    at.query_params.update({"from": all_names[10], "to": all_names[19]})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(tables(at)[0]["release"]) == all_names[10:20][::-1]
    # the first release of the window (the last row) still shows its change against the
    # one before
    shown = tables(at)[0]
    first_change = shown.iloc[-1][[c for c in shown.columns if c.startswith("Δ")][0]]
    assert first_change != "—"
    at.select_slider[0].set_value((all_names[0], all_names[4])).run()
    assert list(tables(at)[0]["release"]) == all_names[:5][::-1]


def test_the_window_is_a_static_table_and_the_whole_history_the_grid(
    at: AppTest, history: Path
) -> None:
    at.run()
    assert static_tables(at) == 1  # 30 releases: every row in view
    all_names = names(history)
    at.select_slider[0].set_value((all_names[0], all_names[-1])).run()
    assert not at.exception, [e.value for e in at.exception]
    assert static_tables(at) == 0  # 300 releases: the scrolling grid
    assert list(tables(at)[0]["release"]) == all_names[::-1]


def test_unknown_notes_are_grouped_by_reason(at: AppTest, history: Path) -> None:
    at.query_params.update({"k": str(RUNS + 2)})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [c.value for c in at.caption if c.value.startswith("⚠")]
    assert len(notes) == 1, notes  # every release has the same reason: one line
    assert f"and {WINDOW - 8} more" in notes[0]


def test_unknown_notes_name_each_reason_once() -> None:
    import pandas as pd

    table = pd.DataFrame(
        {
            "release": ["a", "b", "c"],
            "pass_at_1_unknown": [None, None, None],
            "pass_at_k_unknown": ["k too big", "k too big", "no cases"],
            "pass_hat_k_unknown": [None, None, None],
        }
    )
    assert unknown_notes(table) == [
        "k too big (releases a, b)",
        "no cases (release c)",
    ]


def test_slices_and_gates_show_the_window(at: AppTest, history: Path) -> None:
    at.run()
    all_names = names(history)
    at.switch_page("page_scripts/gates.py").run()
    assert not at.exception, [e.value for e in at.exception]
    gates = tables(at)[0]
    assert list(gates["release"]) == all_names[-WINDOW:]
    at.switch_page("page_scripts/slices.py").run()
    assert not at.exception, [e.value for e in at.exception]
    per_release = next(f for f in tables(at) if "release" in f.columns)
    assert set(per_release["release"]) == set(all_names[-WINDOW:])


def test_the_whole_history_stays_available(history: Path) -> None:
    con = open_catalog(":memory:")
    refresh_catalog(con, history)
    overview = report_overview(con)
    assert len(release_table(con, overview, "support-chat", RUNS)) == RELEASES


def test_releases_charts_draw_the_window_on_the_server(at: AppTest, history: Path) -> None:
    """The charts are drawn as SVG from cached specs: each release of the window labels
    the chart across releases, no other release does, both metrics are in its legend, and
    a second run (a cache hit) draws the same charts."""
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    drawn = charts(at)
    assert len(drawn) == 2, len(drawn)  # across releases; against k
    every = names(history)
    labels = svg_texts(drawn[0], "axis-label")
    assert [t for t in labels if t in every] == every[-WINDOW:]
    assert svg_texts(drawn[0], "legend-label") == ["pass@k", "pass^k"]
    at.run()
    assert charts(at) == drawn


@pytest.mark.parametrize("span", [(0, 0), (0, 29), (137, 166), (RELEASES - 30, RELEASES - 1)])
def test_a_window_reads_its_own_cases_and_shows_the_whole_historys_numbers(
    history: Path, span: tuple[int, int]
) -> None:
    """A window's table and cases (read for its releases alone, and the one before its
    first for the change) equal the whole history's rows for those releases."""
    from dashboard.analysis.releases import shown_cases

    con = open_catalog(":memory:")
    refresh_catalog(con, history)
    overview = report_overview(con)
    order = overview.sort_values("release_rank")["release"].astype(str).tolist()
    window = (order[span[0]], order[span[1]])
    whole = release_table(con, overview, overview["suite"].iloc[0], RUNS)
    part = release_table(con, overview, overview["suite"].iloc[0], RUNS, window=window)
    expected = whole.iloc[span[0] : span[1] + 1].reset_index(drop=True)
    assert plain(part) == plain(expected)
    releases, cases = shown_cases(con, overview, overview["suite"].iloc[0], False, window)
    _, every = shown_cases(con, overview, overview["suite"].iloc[0], False)
    wanted = every[every["report_id"].isin(releases["report_id"])].reset_index(drop=True)
    assert len(cases) > 0 and plain(cases) == plain(wanted)


def plain(frame: Any) -> list[dict[str, Any]]:
    """A frame's rows with every missing value as None (a window holding only the first
    release has no change at all: a column of None where the whole history's is NaN), and
    lists where DuckDB gave arrays (a case's tags)."""
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return [{k: v.tolist() if hasattr(v, "tolist") else v for k, v in r.items()} for r in rows]


def test_the_pages_of_a_suite_read_that_suites_reports_only(
    at: AppTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Releases, Gates, Slices and Lottery read the overview of their suite alone: that of
    every report, a row per report in a long history, is the Data page's (slow to fetch
    after each load). Their tables are those of the whole history's (the tests above)."""
    from dashboard.analysis import summary

    asked: list[object] = []
    real = summary.report_overview

    def spy(con: object, suites: object = None) -> object:
        asked.append(None if suites is None else list(suites))  # type: ignore[call-overload]
        return real(con, suites)  # type: ignore[arg-type]

    monkeypatch.setattr(summary, "report_overview", spy)
    at.run()
    for page in ("gates", "slices", "lottery"):
        at.switch_page(f"page_scripts/{page}.py").run()
        assert not at.exception, (page, [e.value for e in at.exception])
    assert asked and None not in asked, asked
    at.switch_page("page_scripts/data.py").run()
    assert not at.exception and None in asked  # the Data page lists every report
