"""The pages under streamlit.testing.v1.AppTest: headings, widgets, deep links, numbers.

Each test runs the real entry point (dashboard/app/main.py, st.navigation) on a private copy
of sample_reports/ with an in-memory catalog, and clears Streamlit's caches on both sides
so no test sees another's catalog. Expectations that depend on the sample data are looked
up through the same view functions the pages call, never typed in, so regenerated sample
reports do not break the tests; the calculator's figures are worked by hand.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import app_env
import pandas as pd
import pytest
from page_tables import tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis import cases, estimates, loading, lottery, releases, suite_k, summary
from dashboard.analysis.diffing import diff_lines, separating_row
from dashboard.data.catalog import open_catalog
from dashboard.render.diff import diff_html

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
TIMEOUT = 60  # AppTest's 3 s default is too short for a first load on a busy machine.

PAGES = {
    "releases": "Releases",
    "slices": "Slices",
    "lottery": "Lottery cases",
    "gates": "Gates",
    "calculator": "Calculator",
    "data": "Data",
    "case": "Case",
    "review": "Release review",
    "reviews": "Reviews",
}


# ---- fixtures and helpers ----------------------------------------------------------------


@pytest.fixture(scope="module")
def shared_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One private copy of sample_reports/ for the tests that only read it."""
    copy = tmp_path_factory.mktemp("app_pages") / "reports"
    shutil.copytree(SAMPLE, copy)
    return copy


def point_app_at(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app_env.point_app_at(directory, directory.parent / "reviews", monkeypatch)


@pytest.fixture
def reports(shared_reports: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The copy the app is pointed at, with Streamlit's caches cleared on both sides."""
    with app_env.app_serving(shared_reports, shared_reports.parent / "reviews", monkeypatch):
        yield shared_reports


@pytest.fixture
def own_reports(reports: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the test's own, for tests that add files to it."""
    copy = tmp_path / "reports"
    shutil.copytree(SAMPLE, copy)
    point_app_at(copy, monkeypatch)
    return copy


@pytest.fixture
def at(reports: Path) -> AppTest:
    """The app, not yet run (so a test can set deep-link query parameters first)."""
    return AppTest.from_file(str(APP), default_timeout=TIMEOUT)


@pytest.fixture(scope="module")
def catalog(shared_reports: Path) -> Iterator[Any]:
    """Our own in-memory catalog of the same reports, to look expectations up with."""
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, shared_reports)
    yield con
    con.close()


def ok(at: AppTest, heading: str) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == [heading]
    return at


def run(target: Any) -> AppTest:
    """Run the script (from the AppTest or from a widget just set), with a generous timeout."""
    result: AppTest = target.run(timeout=TIMEOUT)
    return result


def open_page(at: AppTest, page: str) -> AppTest:
    """Switch to a page (after a first run, as AppTest requires) and check its heading."""
    if not at.title:  # AppTest can switch only after a first run
        run(at)
    at.switch_page(f"page_scripts/{page}.py")
    return ok(run(at), PAGES[page])


def link(at: AppTest, **params: str) -> None:
    """Replace the query parameters, as opening a copied URL would."""
    at.query_params.clear()
    at.query_params.update(params)


def warnings(at: AppTest) -> list[str]:
    """The warnings as a viewer reads them: Markdown's backslash escapes and the invisible
    word joiners (formatting.md) taken off."""
    return [re.sub(r"\\([!-/:-@[-`{-~])", r"\1", w.value).replace("\u2060", "") for w in at.warning]


def frame(at: AppTest, i: int = 0) -> pd.DataFrame:
    return tables(at)[i]


def captions(at: AppTest) -> list[str]:
    return [c.value for c in at.caption]


def trials_release(catalog: Any) -> tuple[str, str, int]:
    """A (suite, release, report_id) shown by the pages whose report records trials."""
    overview = summary.report_overview(catalog)
    for suite in releases.suite_names(overview):
        shown = releases.suite_releases(overview, suite)
        with_trials = shown[shown["cases_with_trials"] > 0]
        if not with_trials.empty:
            last = with_trials.iloc[-1]
            return suite, str(last["release"]), int(last["report_id"])
    pytest.fail("sample_reports has no release with recorded trials (0.18+)")


# ---- every page --------------------------------------------------------------------------


def test_root_opens_releases_and_writes_its_state_to_the_url(at: AppTest) -> None:
    ok(run(at), "Releases")
    assert {"suite", "k", "release"} <= set(at.query_params)
    assert at.query_params["suite"] == at.selectbox(key="releases_suite").value


@pytest.mark.parametrize("page", list(PAGES))
def test_each_page_renders_its_heading(at: AppTest, page: str) -> None:
    open_page(at, page)
    if page == "reviews":  # nothing signed yet: it says so
        assert any("No sign-offs yet" in i.value for i in at.info)
    else:
        assert tables(at), f"{page} shows no table"
    # a FAILED verdict is shown as an error on the pages that judge
    assert not at.error or page in ("releases", "gates", "review"), [e.value for e in at.error]


def test_switching_through_every_page_in_one_session(at: AppTest) -> None:
    for page in [*PAGES, "lottery", "releases"]:
        open_page(at, page)


# ---- releases ----------------------------------------------------------------------------


def test_releases_table_follows_suite_and_k(at: AppTest, catalog: Any) -> None:
    open_page(at, "releases")
    suites = releases.suite_names(summary.report_overview(catalog))
    assert len(suites) >= 2, "the sample reports should hold two suites"
    first = frame(at)
    shown_suite = at.selectbox(key="releases_suite").value
    in_order = releases.suite_releases(summary.report_overview(catalog), shown_suite)
    assert list(first["release"]) == list(in_order["release"])[::-1]  # newest first

    other = next(s for s in suites if s != at.selectbox(key="releases_suite").value)
    ok(run(at.selectbox(key="releases_suite").set_value(other)), "Releases")
    second = frame(at)
    assert at.query_params["suite"] == other
    in_order = releases.suite_releases(summary.report_overview(catalog), other)
    assert list(second["release"]) == list(in_order["release"])[::-1]
    assert not second.equals(first)

    k_before = at.selectbox(key="releases_k").value
    assert k_before != 2
    ok(run(at.selectbox(key="releases_k").set_value(2)), "Releases")
    third = frame(at)
    assert at.query_params["k"] == "2"
    assert {"pass@2", "pass^2", "Δ pass^2"} <= set(third.columns)
    assert f"pass^{k_before}" not in third.columns
    assert list(third["pass^2"]) != list(second[f"pass^{k_before}"])


def test_releases_deep_link_suite_and_k(at: AppTest) -> None:
    link(at, suite="code-agent", k="3")
    ok(run(at), "Releases")
    assert not warnings(at)
    assert at.selectbox(key="releases_suite").value == "code-agent"
    assert at.selectbox(key="releases_k").value == 3
    assert {"pass@3", "pass^3"} <= set(frame(at).columns)
    assert at.query_params["suite"] == "code-agent" and at.query_params["k"] == "3"


def test_releases_deep_link_to_a_release_curve(at: AppTest, catalog: Any) -> None:
    shown = releases.suite_releases(summary.report_overview(catalog), "support-agent")
    wanted = str(shown["release"].iloc[0])  # not the default (the latest)
    link(at, suite="support-agent", release=wanted)
    ok(run(at), "Releases")
    assert not warnings(at)
    assert at.selectbox(key="releases_release").value == wanted


@pytest.mark.parametrize(
    "params, named",
    [
        ({"suite": "no-such-suite"}, "suite"),
        ({"suite": "code-agent", "k": "999"}, "k"),
        ({"suite": "code-agent", "release": "v0.0.0-nope"}, "release"),
    ],
)
def test_releases_unknown_link_warns_instead_of_failing(
    at: AppTest, params: dict[str, str], named: str
) -> None:
    link(at, **params)
    ok(run(at), "Releases")
    said = warnings(at)
    assert any(named in w and params[named] in w for w in said), said
    assert not frame(at).empty
    assert at.query_params[named] != params[named]  # the URL now names what is shown


def test_agent_error_switch_changes_numbers_and_states_the_policy(at: AppTest) -> None:
    open_page(at, "releases")
    # A suite with errored cases, found from the page's own counts column.
    chosen = None
    for suite in at.selectbox(key="releases_suite").options:
        run(at.selectbox(key="releases_suite").set_value(suite))
        counts = frame(at)["cases (evaluated / errored / skipped)"]
        if any(int(c.split(" / ")[1]) > 0 for c in counts):
            chosen = suite
            break
    assert chosen is not None, "no suite in sample_reports has errored cases"
    before = frame(at)
    policy_before = [c for c in captions(at) if c.startswith("Policy:")]
    assert policy_before == ["Policy: " + estimates.policy_label(False)]

    ok(run(at.toggle(key="count_agent_errors").set_value(True)), "Releases")
    after = frame(at)
    policy_after = [c for c in captions(at) if c.startswith("Policy:")]
    assert policy_after == ["Policy: " + estimates.policy_label(True)]
    assert policy_after != policy_before
    changed = (before != after).any(axis=None)
    assert changed, "counting agent errors as failures changed no number"
    assert (before["pass@1"] != after["pass@1"]).any()

    ok(run(at.toggle(key="count_agent_errors").set_value(False)), "Releases")
    pd.testing.assert_frame_equal(frame(at), before)


# ---- slices ------------------------------------------------------------------------------


def test_slices_follow_dimension_k_and_slice(at: AppTest) -> None:
    open_page(at, "slices")
    dims = at.selectbox(key="slices_dim").options
    assert len(dims) >= 2
    start_dim = at.selectbox(key="slices_dim").value
    metrics = frame(at, 1)
    other = next(d for d in dims if d != start_dim)

    ok(run(at.selectbox(key="slices_dim").set_value(other)), "Slices")
    assert at.query_params["dim"] == other
    changed = frame(at, 1)
    assert set(changed["slice"]) != set(metrics["slice"])
    assert at.selectbox(key="slices_slice").value in set(changed["slice"])
    assert at.selectbox(key="slices_slice").label == f"{other} slice"

    k_now = at.selectbox(key="slices_k").value
    k_new = 1 if k_now != 1 else 2
    ok(run(at.selectbox(key="slices_k").set_value(k_new)), "Slices")
    assert f"pass^{k_new}" in frame(at, 1).columns
    assert any(s.value == f"pass^{k_new} per {other} slice" for s in at.subheader)

    history = frame(at, 2)
    values = at.selectbox(key="slices_slice").options
    assert len(values) >= 2
    pick = next(v for v in values if v != at.selectbox(key="slices_slice").value)
    ok(run(at.selectbox(key="slices_slice").set_value(pick)), "Slices")
    assert at.query_params["slice"] == pick
    assert not frame(at, 2).equals(history)


def test_slices_deep_link(at: AppTest) -> None:
    run(at)
    link(at, suite="support-agent", dim="domain", k="2")
    open_page(at, "slices")
    assert not warnings(at)
    assert at.selectbox(key="slices_suite").value == "support-agent"
    assert at.selectbox(key="slices_dim").value == "domain"
    assert at.selectbox(key="slices_k").value == 2
    assert "pass^2" in frame(at, 1).columns


def test_slices_unknown_dimension_warns(at: AppTest) -> None:
    run(at)
    link(at, suite="code-agent", dim="no_such_dim")
    open_page(at, "slices")
    assert any("no_such_dim" in w for w in warnings(at)), warnings(at)
    assert at.selectbox(key="slices_dim").value != "no_such_dim"


# ---- lottery -----------------------------------------------------------------------------


def test_lottery_deep_link_opens_that_case(at: AppTest, catalog: Any) -> None:
    suite, release, report_id = trials_release(catalog)
    overview = summary.report_overview(catalog)
    row = releases.suite_releases(overview, suite).set_index("release").loc[release]
    table = lottery.lottery_table(catalog, overview, suite, report_id, int(row["runs_max"]))
    assert len(table) >= 2, "need two lottery cases to tell a deep link from the default"
    case = table.iloc[-1]  # the default is the first-ranked one
    key = cases.case_link_key(case["case_id"], int(case["case_idx"]))

    run(at)
    link(at, suite=suite, release=release, case=key)
    open_page(at, "lottery")
    assert not warnings(at), warnings(at)
    assert at.selectbox(key="lottery_suite").value == suite
    assert at.selectbox(key="lottery_release").value == release
    assert at.selectbox(key="lottery_case").value == key
    assert at.query_params["case"] == key
    assert at.code[0].value == case["input"]
    diff = at.html[0].value
    assert "<table class='rd'>" in diff and "▶" in diff
    assert any(s.value == "Passing vs failing transcript" for s in at.subheader)


def test_lottery_unknown_case_warns(at: AppTest, catalog: Any) -> None:
    suite, release, _ = trials_release(catalog)
    run(at)
    link(at, suite=suite, release=release, case="no-such-case")
    open_page(at, "lottery")
    assert any("no-such-case" in w for w in warnings(at)), warnings(at)
    assert at.selectbox(key="lottery_case").value != "no-such-case"
    assert at.html, "the first lottery case should still be shown"


def shown_pass_hat_k_of(table: pd.DataFrame, said: list[str]) -> object:
    """pass^k as the Lottery page shows it: its column, or (when every row has the same
    value, as at k = n) the caption that says it once."""
    if "pass_hat_k" in table.columns:
        return list(table["pass_hat_k"])
    return [c for c in said if c.startswith("Every row:")]


def shown_pass_hat_k(at: AppTest) -> object:
    return shown_pass_hat_k_of(frame(at), captions(at))


def test_lottery_k_and_release_change_the_table(
    at: AppTest, catalog: Any, shared_reports: Path
) -> None:
    suite, release, _ = trials_release(catalog)
    run(at)
    link(at, suite=suite, release=release)
    open_page(at, "lottery")
    table = frame(at)
    captions_before = captions(at)
    k_options = [int(k) for k in at.selectbox(key="lottery_k").options]
    the_suites_k = suite_k.suite_k(catalog, summary.report_overview(catalog), suite).k
    assert at.selectbox(key="lottery_k").value == (
        the_suites_k if the_suites_k in k_options else max(k_options)
    )
    assert min(k_options) != at.selectbox(key="lottery_k").value
    ok(run(at.selectbox(key="lottery_k").set_value(min(k_options))), "Lottery cases")
    assert at.query_params["k"] == str(min(k_options))
    assert shown_pass_hat_k(at) != shown_pass_hat_k_of(table, captions_before)

    # A release from before 0.18 has no trials: the page says so and shows what it has.
    overview = summary.report_overview(catalog)
    shown_releases = releases.suite_releases(overview, suite)
    old = shown_releases[(shown_releases["cases_with_trials"] == 0)]
    for rel in old.itertuples(index=False):
        ok(run(at.selectbox(key="lottery_release").set_value(rel.release)), "Lottery cases")
        said = warnings(at)
        if any("keeps only the last run's output" in w for w in said):
            assert not at.html
            # the last run's output, read back from the file
            shown = lottery.lottery_table(
                catalog, overview, suite, rel.report_id, at.selectbox(key="lottery_k").value
            )
            chosen = cases.find_case(shown, at.selectbox(key="lottery_case").value)
            case_idx = int(chosen.iloc[0]["case_idx"])
            data = json.loads((shared_reports / rel.file).read_text())
            assert [c.value for c in at.code][-1] == data["cases"][case_idx - 1]["output"]
            break
    else:
        pytest.skip(f"no pre-0.18 release of {suite} has a lottery case")


def test_lottery_diff_follows_the_chosen_case(at: AppTest, catalog: Any) -> None:
    suite, release, report_id = trials_release(catalog)
    run(at)
    link(at, suite=suite, release=release)
    open_page(at, "lottery")
    ranked = lottery.lottery_table(
        catalog,
        summary.report_overview(catalog),
        suite,
        report_id,
        at.selectbox(key="lottery_k").value,
    )
    by_key = {cases.case_link_key(r.case_id, r.case_idx): r.case_idx for r in ranked.itertuples()}
    assert len(by_key) >= 2
    keys = list(by_key)
    wrong = []
    for case_key in [*keys[1:], keys[0]]:  # visit every case, coming back to the first
        ok(run(at.selectbox(key="lottery_case").set_value(case_key)), "Lottery cases")
        assert at.selectbox(key="lottery_case").value == case_key
        trials = cases.case_trials(catalog, report_id, by_key[case_key])
        passed = trials["status"] == "passed"
        if not (passed.any() and (~passed).any()):
            assert any("one passing and one failing" in i.value for i in at.info), case_key
            continue
        assert at.html, f"no diff shown for {case_key}, which has passing and failing trials"
        shown = at.html[0].value
        left, right = re.findall(r"<th>(run \d+ \([a-z_]+\))</th>", shown)
        output = {f"run {t.run_index} ({t.status})": t.output or "" for t in trials.itertuples()}
        if left not in output or right not in output:
            wrong.append((case_key, "labels", left, right))
            continue
        rows = diff_lines(output[left], output[right])
        marked = separating_row(
            rows,
            list(trials["output"].fillna("")[passed]),
            list(trials["output"].fillna("")[~passed]),
        )
        expected = diff_html(rows, left, right, marked)
        if shown != expected:
            wrong.append((case_key, left, right))
    assert not wrong, f"diff shows transcripts of another case for {wrong}"


# ---- gates -------------------------------------------------------------------------------


def test_gates_threshold_slices_and_k(at: AppTest) -> None:
    open_page(at, "gates")
    table = frame(at)
    assert set(table["verdict"]) <= {"PASSED", "FAILED", "UNDECIDED", "UNKNOWN"}
    assert (table["threshold"] == at.number_input(key="gate_threshold").value).all()

    ok(run(at.number_input(key="gate_threshold").set_value(0.0)), "Gates")
    low = frame(at)
    assert set(low["verdict"]) <= {"PASSED", "UNKNOWN"}
    assert "PASSED" in set(low["verdict"])
    assert at.success
    ok(run(at.number_input(key="gate_threshold").set_value(1.0)), "Gates")
    high = frame(at)
    assert set(high["verdict"]) <= {"FAILED", "UNKNOWN"}
    assert at.error and not at.success
    # UNKNOWN fails loudly whatever the threshold.
    assert list(low["verdict"] == "UNKNOWN") == list(high["verdict"] == "UNKNOWN")

    tag = next(t for t in at.multiselect(key="gate_slices").options if ":" in t)
    ok(run(at.multiselect(key="gate_slices").set_value([tag])), "Gates")
    with_slice = frame(at)
    assert set(with_slice["slice"]) == {"(all cases)", tag}
    assert len(with_slice) == 2 * len(high)

    ks = at.selectbox(key="gates_k").options
    k_new = int(ks[0]) if at.selectbox(key="gates_k").value != int(ks[0]) else int(ks[1])
    ok(run(at.selectbox(key="gates_k").set_value(k_new)), "Gates")
    assert at.query_params["k"] == str(k_new)
    assert all(d.startswith(f"pass^{k_new} gate") for d in frame(at)["detail"])


def test_gates_deep_link_and_agent_error_policy(at: AppTest) -> None:
    run(at)
    link(at, suite="support-agent", k="2")
    open_page(at, "gates")
    assert not warnings(at)
    assert at.selectbox(key="gates_suite").value == "support-agent"
    assert at.selectbox(key="gates_k").value == 2
    before = frame(at)
    ok(run(at.toggle(key="count_agent_errors").set_value(True)), "Gates")
    assert "Policy: " + estimates.policy_label(True) in captions(at)
    assert list(frame(at)["n_cases"]) != list(before["n_cases"])


def test_gates_rule_for_a_tag_named_like_a_widget(own_reports: Path, at: AppTest) -> None:
    source = sorted(own_reports.glob("support-agent/*.json"))[-1]
    report = json.loads(source.read_text(encoding="utf-8"))
    report["cases"][0]["tags"] = [*(report["cases"][0].get("tags") or []), "threshold"]
    source.write_text(json.dumps(report), encoding="utf-8")
    run(at)
    link(at, suite="support-agent")
    open_page(at, "gates")
    assert "threshold" in at.multiselect(key="gate_slices").options
    ok(run(at.multiselect(key="gate_slices").set_value(["threshold"])), "Gates")
    assert "threshold" in set(frame(at)["slice"])


# ---- calculator --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p, pass5, pass10",
    [(0.99, "95.1%", "90.4%"), (0.90, "59.0%", "34.9%")],
)
def test_calculator_from_a_rate(at: AppTest, p: float, pass5: str, pass10: str) -> None:
    open_page(at, "calculator")
    if at.slider(key="calc_p").value == p:  # move away first, so the widget really reacts
        run(at.slider(key="calc_p").set_value(0.5))
        assert frame(at).set_index("k").loc[5, "pass^k"] == "3.1%"
    ok(run(at.slider(key="calc_p").set_value(p)), "Calculator")
    table = frame(at).set_index("k")
    assert list(table.index) == [5, 10]
    assert table.loc[5, "pass^k"] == pass5
    assert table.loc[10, "pass^k"] == pass10


def test_calculator_from_runs_unbiased_against_plug_in(at: AppTest) -> None:
    open_page(at, "calculator")
    run(at.number_input(key="calc_n").set_value(20))
    ok(run(at.number_input(key="calc_c").set_value(17)), "Calculator")
    runs = frame(at, 1).set_index("k")
    assert runs.loc[5, "pass_hat_k"] == pytest.approx(6188 / 15504, abs=1e-9)  # C(17,5)/C(20,5)
    assert runs.loc[5, "pass_hat_k"] == pytest.approx(0.399, abs=5e-4)
    assert runs.loc[5, "plug_in_pass_hat_k"] == pytest.approx(0.85**5)
    assert runs.loc[5, "plug_in_pass_hat_k"] == pytest.approx(0.444, abs=5e-4)
    assert (runs.loc[18:, "pass_hat_k"] == 0).all() and (runs.loc[:17, "pass_hat_k"] > 0).all()
    assert any("k > c = 17" in c for c in captions(at))

    ok(run(at.number_input(key="calc_c").set_value(5)), "Calculator")
    assert frame(at, 1).set_index("k").loc[5, "pass_hat_k"] == pytest.approx(1 / 15504)
    assert any("k > c = 5" in c for c in captions(at))

    ok(run(at.number_input(key="calc_n").set_value(3)), "Calculator")  # c is clamped to n
    assert at.number_input(key="calc_c").value <= 3
    assert list(frame(at, 1)["k"]) == [1, 2, 3]


# ---- data --------------------------------------------------------------------------------


def test_data_lists_every_file_and_every_problem(own_reports: Path, at: AppTest) -> None:
    reports = own_reports
    (reports / "broken.json").write_text('{"cases": [', encoding="utf-8")
    open_page(at, "data")
    files = frame(at, 0)
    problems = frame(at, 1)
    listed = set(files["file"]) | set(problems.loc[problems["scope"] == "file", "file"])
    on_disk = {
        p.relative_to(reports).as_posix()
        for pattern in ("*.json", "*.eval")  # multivon-eval reports and Inspect logs
        for p in reports.rglob(pattern)
    }
    assert listed == on_disk
    assert "broken.json" in set(problems.loc[problems["scope"] == "file", "file"])
    assert "broken.json" not in set(files["file"])
    assert any(s.value == f"Report files ({len(files)})" for s in at.subheader)


def test_reload_picks_up_a_new_report(own_reports: Path, at: AppTest) -> None:
    reports = own_reports
    open_page(at, "data")
    before = set(frame(at, 0)["file"])
    source = next(reports.glob("support-agent/*.json"))
    report = json.loads(source.read_text(encoding="utf-8"))
    report["suite"] = "reloaded-agent"
    (reports / "reloaded.json").write_text(json.dumps(report), encoding="utf-8")
    ok(run(at.button[0].click()), "Data")  # the sidebar's "Reload reports"
    after = set(frame(at, 0)["file"])
    assert after == before | {"reloaded.json"}
    ok(run(at.switch_page("page_scripts/releases.py")), "Releases")
    assert "reloaded-agent" in at.selectbox(key="releases_suite").options
