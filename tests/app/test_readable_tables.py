"""Tables a reader can take in at 1280 px: the Lottery page flakiest first, a skipped
grader said to be skipped, no column that says one thing in every row, latencies in
whole milliseconds, repeated UNKNOWN reasons said once, SHA-256 cut with the full value
kept.

The AppTest part runs the real entry point on a private copy of sample_reports/ with an
in-memory catalog, as tests/app/test_app_pages.py does; expectations are looked up through
the functions the pages call.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import streamlit as st
from page_tables import tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis import loading, lottery, releases, summary
from dashboard.analysis.graders import case_graders, grader_rows, grader_verdict
from dashboard.data.catalog import open_catalog
from dashboard.render.compact import (
    constant_note,
    drop_constant,
    short_sha,
    trial_rows,
    unknown_notes,
)
from dashboard.stats import rank_flakiest, rank_lottery

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
TIMEOUT = 60
MAX_COLUMNS = 8  # what fits the main area at 1280 px beside the sidebar


# ---- the orders ---------------------------------------------------------------------------


def test_flakiest_first_is_pass_rate_nearest_half_then_more_runs() -> None:
    n = [5, 5, 5, 5, 8, 3]
    c = [4, 2, 1, 3, 4, 3]  # the last is not a lottery case (always passes)
    assert list(rank_flakiest(n, c, 2)) == [4, 1, 3, 0, 2]  # 4/8 exactly half first
    assert list(rank_lottery(n, c, 2)) == [0, 3, 4, 1, 2]  # closest to reliable first


def test_flakiest_distance_is_symmetric_and_ties_keep_file_order() -> None:
    # 1/4 and 3/4 are as far from 1/2: file order decides
    assert list(rank_flakiest([4, 4, 4], [3, 1, 2], 2)) == [2, 0, 1]
    assert list(rank_flakiest([4, 4, 4], [1, 3, 2], 2)) == [2, 0, 1]


# ---- graders ------------------------------------------------------------------------------


def test_skipped_grader_is_skipped_not_failed() -> None:
    skipped = {"name": "policy_guard", "passed": False, "score": 0.0, "metadata": {"skipped": True}}
    assert grader_verdict(skipped) == "skipped"
    old_format = {"name": "g", "passed": False, "reason": "[skipped — model error: timeout]"}
    assert grader_verdict(old_format) == "skipped"
    assert grader_verdict({"name": "g", "passed": False, "reason": "Missing: x"}) == "failed"
    assert grader_verdict({"name": "g", "passed": True}) == "passed"
    assert grader_verdict({"name": "g"}) == "—"
    trials = pd.DataFrame(
        {
            "run_index": [1],
            "attempt": [1],
            "evaluators": ['[{"name": "a", "passed": true, "score": 1.0}, '
                           '{"name": "b", "passed": false, "score": 0.0, '
                           '"metadata": {"skipped": true}}]'],
        }
    )  # fmt: skip
    rows = grader_rows(trials)
    assert list(rows["verdict"]) == ["passed", "skipped"]
    assert pd.isna(rows["score"].iloc[1])  # a placeholder 0 is not a score
    one = case_graders('[{"name": "b", "passed": false, "metadata": {"skipped": true}}]')
    assert list(one["verdict"]) == ["skipped"]


# ---- compacting ---------------------------------------------------------------------------


def test_constant_columns_are_said_once() -> None:
    frame = pd.DataFrame(
        {"run": [1, 2], "attempt": [1, 1], "err": [None, None], "status": ["a", "a"]}
    )
    shown, same = drop_constant(frame, keep=["run", "status"])
    assert list(shown.columns) == ["run", "status"]
    assert constant_note(same) == "Every row: attempt 1 · err —"
    assert drop_constant(frame.iloc[:1])[0].shape[1] == 4  # one row: nothing to say once
    note = constant_note({"p": 1.0}, {"p": "pass@5"}, percent=["p"])
    assert note == "Every row: pass@5 100.0%"


def test_repeated_unknown_reasons_become_notes() -> None:
    frame = pd.DataFrame(
        {
            "m": ["a", "b", "c"],
            "d": ["UNKNOWN — too few runs", "+1.0 pts", "UNKNOWN — too few runs"],
        }
    )
    shown, notes = unknown_notes(frame, ["d"])
    assert list(shown["d"]) == ["UNKNOWN (1)", "+1.0 pts", "UNKNOWN (1)"]
    assert notes == ["(1) UNKNOWN: too few runs"]


def test_latency_in_whole_ms_and_sha_cut() -> None:
    trials = pd.DataFrame({"run_index": [1, 2], "latency_ms": [3716.938, None]})
    shown = trial_rows(trials, ["run_index", "latency_ms"])
    assert list(shown["latency_ms"])[0] == 3717
    digest = "a" * 64
    assert short_sha(digest) == "a" * 12 + "…"


# ---- the pages ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("readable") / "reports"
    shutil.copytree(SAMPLE, copy)
    return copy


@pytest.fixture
def at(shared_reports: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("RELIDASH_REPORTS", str(shared_reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(shared_reports.parent / "reviews"))
    monkeypatch.delenv("RELIDASH_MAX_FILE_MB", raising=False)
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.fixture(scope="module")
def catalog(shared_reports: Path) -> Iterator[Any]:
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, shared_reports)
    yield con
    con.close()


def open_page(at: AppTest, page: str, **params: str) -> AppTest:
    at.run(timeout=TIMEOUT)
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page(f"page_scripts/{page}.py")
    at.run(timeout=TIMEOUT)
    assert not at.exception, [e.value for e in at.exception]
    return at


def assert_readable(table: pd.DataFrame, where: str) -> None:
    assert table.shape[1] <= MAX_COLUMNS, f"{where}: {list(table.columns)}"
    if len(table) > 1:
        same = [c for c in table.columns if table[c].astype(str).nunique(dropna=False) == 1]
        assert not same, f"{where}: every row says the same in {same}"


def test_lottery_page_flakiest_first_by_default(at: AppTest, catalog: Any) -> None:
    open_page(at, "lottery", suite="support-agent")
    assert at.selectbox(key="lottery_order").value == "flakiest"
    release = at.selectbox(key="lottery_release").value
    overview = summary.report_overview(catalog)
    row = releases.suite_releases(overview, "support-agent").set_index("release").loc[release]
    k = at.selectbox(key="lottery_k").value
    expected = lottery.lottery_table(
        catalog, overview, "support-agent", int(row["report_id"]), k, order="flakiest"
    )
    shown = tables(at)[0]
    assert list(shown["passes_runs"]) == [
        f"{p}/{n}" for p, n in zip(expected["passes"], expected["runs"], strict=True)
    ]
    distance = [
        abs(2 * p - n) / n for p, n in zip(expected["passes"], expected["runs"], strict=True)
    ]
    assert distance == sorted(distance)
    reliable = lottery.lottery_table(catalog, overview, "support-agent", int(row["report_id"]), k)
    assert list(reliable["case_idx"]) != list(expected["case_idx"]), "the orders should differ here"

    at.selectbox(key="lottery_order").set_value("reliable").run(timeout=TIMEOUT)
    assert at.query_params["order"] == "reliable"
    again = tables(at)[0]
    assert list(again["passes_runs"]) == [
        f"{p}/{n}" for p, n in zip(reliable["passes"], reliable["runs"], strict=True)
    ]


def test_lottery_page_tables_fit(at: AppTest) -> None:
    open_page(at, "lottery", suite="support-agent")
    shown = tables(at)
    lottery_shown, trials_shown, graders_shown = shown[0], shown[1], shown[2]
    assert_readable(lottery_shown, "lottery table")
    assert_readable(trials_shown, "trials table")
    assert_readable(graders_shown, "graders table")
    assert all(float(v).is_integer() for v in trials_shown["latency_ms"].dropna())
    notes = [c.value for c in at.caption if "Every row" in c.value]
    assert notes, "what every row says alike is said once"


def test_skipped_grader_shown_as_skipped_on_the_case_page(at: AppTest, catalog: Any) -> None:
    # support-agent's policy_guard skips where a case declares no forbidden actions
    open_page(at, "lottery", suite="support-agent")
    graders_shown = tables(at)[2]
    assert "verdict" in graders_shown.columns
    assert "skipped" in set(graders_shown["verdict"])
    assert set(graders_shown["verdict"]) <= {"passed", "failed", "skipped", "—"}
    skipped = graders_shown[graders_shown["verdict"] == "skipped"]
    assert skipped["reason"].str.startswith("[skipped]").all()
    assert any("skipped grader" in c.value for c in at.caption)


def test_review_page_tables_fit(at: AppTest) -> None:
    open_page(at, "review", suite="code-agent")
    for i, table in enumerate(tables(at)):
        assert table.shape[1] <= MAX_COLUMNS, (i, list(table.columns))
        for column in table.columns:
            texts = [str(v) for v in table[column]]
            long_repeats = {t for t in texts if len(t) > 40 and texts.count(t) > 1}
            assert not long_repeats, f"table {i} repeats {long_repeats} in {column}"
    provenance = next(t for t in tables(at) if "SHA-256" in t.columns)
    assert all(len(str(v)) <= 13 for v in provenance["SHA-256"])
    full = [c.value for c in at.code]
    assert any(len(line.split()[0]) == 64 for block in full for line in block.splitlines() if line)


def test_slices_table_says_its_interval_method_once(at: AppTest) -> None:
    open_page(at, "slices", suite="code-agent")
    metrics = tables(at)[1]
    assert "pass^" in "".join(metrics.columns)
    assert "interval" not in metrics.columns  # one method for every row here
    assert_readable(metrics, "slices table")
    assert any("cluster bootstrap over cases" in c.value for c in at.caption)
