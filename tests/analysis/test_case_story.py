"""A case's whole story and the things a new user trips over: the Case page,
diffs that ignore volatile tokens, failing trials grouped by first divergence, short digest
ids, an error bar per release, the Δ column in view, and "started passing sometimes"
apart from "newly flaky"."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from page_tables import tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis import case_story, summary
from dashboard.analysis.diffing import (
    diff_lines,
    divergence_groups,
    first_divergence,
    normalise_volatile,
)
from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.releases import release_table
from dashboard.data.catalog import open_catalog
from dashboard.render import charts
from dashboard.render.diff import diff_html
from dashboard.render.formatting import display_release_table, short_case_id

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
SUITE = "support-agent"
CASE = "support/shipping-po-box"  # 1/5, 2/5, 1/8, 3/8, 5/8, 0/8, 2/5, 0/5 in sample_reports

PASSING = """collected 12 items
tests/test_cart.py ....
1 failed in 0.38s at 2026-01-02T10:00:00Z
worker 3f2a9c1b-1111-2222-3333-444455556666 run 3
object at 0x7f3a2b1c9d40 in /tmp/pytest-of-root/pytest-7/x.py
assert total == 10
ok"""


def failing(assertion: str) -> str:
    return (
        PASSING.replace("0.38s", "0.93s")
        .replace("10:00:00Z", "11:42:07Z")
        .replace("3f2a9c1b", "9e8d7c6b")
        .replace("run 3", "run 4")
        .replace("0x7f3a2b1c9d40", "0x7f99aa00bb11")
        .replace("pytest-7", "pytest-9")
        .replace("assert total == 10", assertion)
    )


# ---- diffs ---------------------------------------------------------------------------------


def test_volatile_tokens_do_not_decide_the_first_divergence() -> None:
    rows = diff_lines(PASSING, failing("assert total == 11"))
    first = first_divergence(rows)
    assert first is not None and rows[first].right == "assert total == 11"
    assert [r.kind for r in rows[2:5]] == ["volatile"] * 3
    # the original text is what is shown, not the normalised one
    shown = re.sub(r"<[^>]+>", "", diff_html(rows, "a", "b"))
    assert "1 failed in 0.93s" in shown and "duration" not in shown
    # switched off, the timing line is the first divergence, as in a plain diff
    plain = diff_lines(PASSING, failing("assert total == 11"), ignore_volatile=False)
    assert plain[first_divergence(plain) or 0].right == "1 failed in 0.93s at 2026-01-02T11:42:07Z"


@pytest.mark.parametrize(
    "text, normalised",
    [
        ("took 12ms", "took <duration>"),
        ("done in 1.5 s", "done in <duration>"),
        ("at 2026-12-01T07:35:00.123Z", "at <time>"),
        ("id 3f2a9c1b-1111-2222-3333-444455556666", "id <uuid>"),
        ("sha 9f86d081884c7d659a2feaa0c55ad015", "sha <hex>"),
        ("<object at 0x7f3a2b1c>", "<object at <addr>>"),
        ("wrote /tmp/tmpab12/out.json", "wrote <tmp>"),
        ("Run 12 of 20", "<run> of 20"),
        ("total == 10", "total == 10"),  # a number that matters stays
        ("decade", "decade"),  # a word of hex letters stays
    ],
)
def test_normalise_volatile(text: str, normalised: str) -> None:
    assert normalise_volatile(text) == normalised


def test_failing_trials_grouped_by_first_divergence() -> None:
    groups = divergence_groups(
        PASSING,
        {2: failing("assert total == 11"), 4: failing("assert total == 11"), 5: PASSING + "\nboom"},
    )
    assert [(g.trials, g.text) for g in groups] == [
        ((2, 4), "assert total == 11"),
        ((5,), "boom"),
    ]
    assert groups[0].line == 6  # the passing transcript's line where run 2 and 4 diverge


# ---- small things --------------------------------------------------------------------------


def test_digest_ids_are_shortened_for_display() -> None:
    digest = "sha256:" + "ab" * 32
    assert short_case_id(digest) == "sha256:abababababab…"
    assert short_case_id("support/refund-7") == "support/refund-7"


@pytest.fixture(scope="module")
def catalog() -> Iterator[Any]:
    con = open_catalog(":memory:")
    refresh_catalog(con, SAMPLE)
    yield con
    con.close()


def test_every_release_shows_its_interval_as_an_error_bar(catalog: Any) -> None:
    table = release_table(catalog, summary.report_overview(catalog), SUITE, 5)
    spec = charts.releases_chart(table, 5).to_dict()
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert "rule" in marks
    rule = spec["layer"][marks.index("rule")]
    assert (rule["encoding"]["y"]["field"], rule["encoding"]["y2"]["field"]) == (
        "ci_low",
        "ci_high",
    )


def test_release_table_puts_the_change_beside_the_numbers(catalog: Any) -> None:
    table = release_table(catalog, summary.report_overview(catalog), SUITE, 5)
    columns = list(display_release_table(table).columns)
    assert columns[:5] == ["release", "pass@1", "pass@5", "pass^5", "Δ pass^5"]


# ---- the case's story ----------------------------------------------------------------------


def test_case_story_follows_the_case_through_every_release(catalog: Any) -> None:
    story = case_story.case_story(catalog, summary.report_overview(catalog), SUITE, CASE, 5)
    assert story is not None
    assert list(story["cell"]) == ["1/5", "2/5", "1/8", "3/8", "5/8", "0/8", "2/5", "0/5"]
    assert list(story["change"]) == [
        "added",
        "still flaky",
        "still flaky",
        "still flaky",
        "still flaky",
        "regressed",
        "started passing sometimes",
        "regressed",
    ]
    assert set(story["last_change"]) == {"v1.11.0"}
    # pass^5 of one case is C(c, 5) / C(n, 5): 5/8 gives 1/56
    assert story["pass_hat_k"].iloc[4] == pytest.approx(1 / 56)
    # the page's link key of an id-less case still finds it: by input text as well
    assert (
        case_story.case_story(
            catalog, summary.report_overview(catalog), SUITE, "Do you ship to PO boxes?", 5
        )
        is not None
    )


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    reports = tmp_path / "reports"
    shutil.copytree(SAMPLE, reports)
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(tmp_path / "reviews"))
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    yield at
    st.cache_data.clear()
    st.cache_resource.clear()


def open_case(at: AppTest, **params: str) -> AppTest:
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page("page_scripts/case.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Case"]
    return at


def test_case_page_deep_link(app: AppTest, catalog: Any) -> None:
    at = open_case(app, suite=SUITE, case=CASE, k="5")
    assert at.selectbox(key="case_case").value == CASE
    table = at.dataframe[0].value
    assert list(table["passes/runs"]) == ["1/5", "2/5", "1/8", "3/8", "5/8", "0/8", "2/5", "0/5"]
    assert list(table["against the release before"])[-2:] == [
        "started passing sometimes",
        "regressed",
    ]
    # its trials in the chosen release, read from the file
    at.selectbox(key="case_release").set_value("v1.10.0").run()
    assert not at.exception
    trials = next(f.value for f in at.dataframe if "run_index" in f.value.columns)
    assert list(trials["status"]).count("passed") == 2
    assert at.html, "a release with passing and failing trials shows their diff"


def test_case_page_finds_a_case_named_by_its_input(app: AppTest) -> None:
    at = open_case(app, suite=SUITE, case="Do you ship to PO boxes?")
    assert at.selectbox(key="case_case").value == CASE


def test_lottery_and_slices_tables_link_to_the_case_page(app: AppTest) -> None:
    app.query_params.clear()
    app.query_params.update({"suite": SUITE})
    app.switch_page("page_scripts/lottery.py")
    app.run()
    links = list(app.dataframe[0].value["case"])
    assert links and all(link.startswith("/case?suite=support-agent&case=") for link in links)
    app.switch_page("page_scripts/slices.py")
    app.run()
    history = next(f for f in tables(app) if "latest_change" in f.columns)
    assert all(str(link).startswith("/case?") for link in history["case"])
    assert "link_key" not in history.columns


def test_compare_json_files_failing_to_flaky_apart(tmp_path: Path) -> None:
    from dashboard.analysis.comparing import LEDGER_BUCKETS, compare_releases, comparison_json

    con = open_catalog(":memory:")
    refresh_catalog(con, SAMPLE)
    doc = comparison_json(compare_releases(con, SUITE, "v1.9.0", "v1.10.0"))
    started = [e["input"] for e in doc["ledger"]["started passing sometimes"]]
    flaky = [e["input"] for e in doc["ledger"]["newly flaky"]]
    assert "Do you ship to PO boxes?" in started
    assert "Do you ship to PO boxes?" not in flaky  # failing -> flaky is not newly flaky
    assert all(e["base"]["passes"] == 0 for e in doc["ledger"]["started passing sometimes"])
    assert all(e["base"]["passes"] == e["base"]["runs"] for e in doc["ledger"]["newly flaky"])
    # both are flaky in the head release: passing some runs, not all
    for bucket in ("started passing sometimes", "newly flaky"):
        assert doc["ledger"][bucket], bucket
        assert all(0 < e["head"]["passes"] < e["head"]["runs"] for e in doc["ledger"][bucket])
    # every bucket is in the document, in the ledger's order, even when empty ("fixed" here)
    assert list(doc["ledger"]) == list(LEDGER_BUCKETS) and doc["ledger"]["fixed"] == []


def test_gates_holding_cases_link_to_the_case_page(app: AppTest) -> None:
    app.query_params.clear()
    # at k = 4 the latest release fails the page's default threshold: cases hold it down
    app.query_params.update({"suite": "code-agent", "k": "4"})
    app.switch_page("page_scripts/gates.py")
    app.run()
    assert not app.exception, [e.value for e in app.exception]
    holding = next(f.value for f in app.dataframe if "passes/runs" in f.value.columns)
    assert len(holding) > 0
    assert all(str(link).startswith("/case?suite=code-agent&case=") for link in holding["case"])
    # each link names a case the Case page finds
    from urllib.parse import parse_qs, urlparse

    key = parse_qs(urlparse(holding["case"].iloc[0]).query)["case"][0]
    at = open_case(app, suite="code-agent", case=key)
    assert at.selectbox(key="case_case").value == key


def test_a_chart_spec_carries_its_rows_whatever_altairs_data_transformer(catalog: Any) -> None:
    """The pages cache Vega-Lite specs (charts.vega_lite_spec). Streamlit swaps Altair's
    global data transformer while it draws a chart on another thread; a spec made then
    must still hold its own rows, not a reference to data only that draw knows."""
    import altair as alt

    table = release_table(catalog, summary.report_overview(catalog), SUITE, 5)
    alt.data_transformers.register("elsewhere", lambda data: {"name": "not-here"})
    with alt.data_transformers.enable("elsewhere"):
        spec = charts.vega_lite_spec(charts.releases_chart(table, 5))
    (rows,) = spec["datasets"].values()
    assert sorted({r["release"] for r in rows}) == sorted(table["release"])
    assert len(rows) == 2 * len(table)  # pass@k and pass^k of each release
