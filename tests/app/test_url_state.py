"""State that travels (dashboard/app/state.py, widgets.linked_select), under AppTest: the
suite and its k kept when the sidebar opens another page, one k per suite on every page,
the agent-errors switch and the trial picks in the URL, the first page's headline.

A sidebar link opens its page without the URL's parameters (Chromium shows it; see
tests/browser/test_browser_first_page.py): here the parameters are cleared before each switch.
Expectations are looked up through the analysis functions the pages call.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from app_env import clear_caches
from page_tables import tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis import cases, loading, lottery, releases, summary
from dashboard.analysis.headline import latest_headline, suite_policy
from dashboard.analysis.review import build_review
from dashboard.analysis.suite_k import suite_k
from dashboard.data.catalog import open_catalog

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
TIMEOUT = 60
TITLES = {
    "releases": "Releases",
    "slices": "Slices",
    "lottery": "Lottery cases",
    "case": "Case",
    "gates": "Gates",
    "review": "Release review",
}


@pytest.fixture(scope="module")
def shared_reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("url_state") / "reports"
    shutil.copytree(SAMPLE, copy)
    return copy


@pytest.fixture
def at(shared_reports: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("RELIDASH_REPORTS", str(shared_reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(shared_reports.parent / "reviews"))
    monkeypatch.delenv("RELIDASH_MAX_FILE_MB", raising=False)
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    clear_caches()
    yield AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    clear_caches()


@pytest.fixture(scope="module")
def con(shared_reports: Path) -> Iterator[Any]:
    catalog = open_catalog(":memory:")
    loading.refresh_catalog(catalog, shared_reports)
    yield catalog
    catalog.close()


def run(target: Any) -> AppTest:
    result: AppTest = target.run(timeout=TIMEOUT)
    assert not result.exception, [e.value for e in result.exception]
    return result


def new_session() -> AppTest:
    clear_caches()
    return AppTest.from_file(str(APP), default_timeout=TIMEOUT)


def open_link(at: AppTest, page: str = "releases", **params: str) -> AppTest:
    """Open a page from a copied URL (these parameters only); in a new session, as a
    browser does, when the AppTest has not run yet."""
    at.query_params.clear()
    at.query_params.update(params)
    if not at.title:  # the first run (AppTest switches only after one): the root, then
        run(at)  # the Releases page with the link's parameters
        at.query_params.clear()
        at.query_params.update(params)
    at.switch_page(f"page_scripts/{page}.py")
    run(at)
    assert [t.value for t in at.title] == [TITLES[page]]
    return at


def sidebar(at: AppTest, page: str) -> AppTest:
    """Open a page as the sidebar's link does: no parameters in its URL."""
    return open_link(at, page)


def the_k(con: Any, suite: str, count: bool = False) -> int:
    return suite_k(con, summary.report_overview(con), suite, count).k


def suite_names(con: Any) -> list[str]:
    return releases.suite_names(summary.report_overview(con))


# ---- one k per suite, and the suite kept ------------------------------------------------------


def test_every_page_opens_a_suite_at_its_k(at: AppTest, con: Any) -> None:
    """Releases, Slices, Gates, Lottery, Case and Review start at the suite's k (the
    Releases page at the latest release's runs, Slices at the fewest, Gates at 4, before)."""
    for suite in suite_names(con):
        k = the_k(con, suite)
        for page in ("releases", "slices", "gates", "lottery", "case", "review"):
            fresh = open_link(new_session(), page, suite=suite)
            assert fresh.selectbox(key=f"{page}_k").value == k, (suite, page)
            assert fresh.query_params["k"] == str(k)
    ks = {the_k(con, s) for s in suite_names(con)}
    assert len(ks) >= 2, "every sample suite has one k: the test cannot tell them apart"


def test_the_sidebar_keeps_the_suite_and_its_k(at: AppTest, con: Any) -> None:
    suites = suite_names(con)
    suite = suites[-1]  # not the first suite, which a fallback would pick
    open_link(at, "releases", suite=suite)
    assert at.selectbox(key="releases_suite").value == suite
    chosen = 2 if the_k(con, suite) != 2 else 1
    run(at.selectbox(key="releases_k").set_value(chosen))
    for page in ("slices", "gates", "lottery", "case", "review", "releases"):
        sidebar(at, page)
        assert at.selectbox(key=f"{page}_suite").value == suite, page
        assert at.query_params["suite"] == suite
        if page != "lottery":  # the lottery needs k >= 2; chosen is 2 or 1
            assert at.selectbox(key=f"{page}_k").value == chosen, page
    # a suite picked on another page is the one the next page opens
    other = suites[0]
    sidebar(at, "gates")
    run(at.selectbox(key="gates_suite").set_value(other))
    sidebar(at, "releases")
    assert at.selectbox(key="releases_suite").value == other


def test_a_suite_changed_on_a_page_takes_its_own_k(at: AppTest, con: Any) -> None:
    # from a suite at a larger k to one at a smaller: the old k stays an option
    first, second = sorted(suite_names(con), key=lambda s: the_k(con, s), reverse=True)[:2]
    assert the_k(con, first) > the_k(con, second), "two sample suites should differ in k"
    open_link(at, "releases", suite=first)
    run(at.selectbox(key="releases_suite").set_value(second))
    assert at.selectbox(key="releases_k").value == the_k(con, second)
    assert at.query_params["k"] == str(the_k(con, second))


def test_the_release_picker_keeps_the_latest_after_a_suite_switch(at: AppTest, con: Any) -> None:
    overview = summary.report_overview(con)
    names = {s: list(releases.suite_releases(overview, s)["release"]) for s in suite_names(con)}
    # a suite whose latest release is not a release of the other, so the old pick goes
    first, second = next(
        (a, b) for a in names for b in names if a != b and names[a][-1] not in names[b]
    )
    open_link(at, "releases", suite=first)
    run(at.selectbox(key="releases_suite").set_value(second))
    latest = str(names[second][-1])
    assert at.selectbox(key="releases_release").value == latest


# ---- the agent-errors switch ------------------------------------------------------------------


def test_the_agent_errors_switch_is_in_the_url_and_a_link_opens_it(at: AppTest) -> None:
    open_link(at, "releases", suite="code-agent")
    assert "agent_errors" not in at.query_params
    before = tables(at)[0]
    run(at.toggle(key="count_agent_errors").set_value(True))
    assert at.query_params["agent_errors"] == "count"
    counted = tables(at)[0]
    sidebar(at, "slices")  # the session keeps it, and the URL says it again
    assert at.toggle(key="count_agent_errors").value is True
    assert at.query_params["agent_errors"] == "count"

    # a copied link opens the same numbers in a new session
    fresh = open_link(new_session(), "releases", suite="code-agent", agent_errors="count")
    assert fresh.toggle(key="count_agent_errors").value is True
    assert tables(fresh)[0].equals(counted)
    assert not counted.equals(before)
    run(fresh.toggle(key="count_agent_errors").set_value(False))
    assert "agent_errors" not in fresh.query_params


# ---- the lottery's trial picks ----------------------------------------------------------------


def a_case_with_choices(con: Any) -> tuple[str, str, str, int, int, int, int]:
    """(suite, release, case key, report_id, case_idx, passing run, failing run) of a
    lottery case whose link can name trials other than the first of each kind."""
    overview = summary.report_overview(con)
    for suite in suite_names(con):
        shown = releases.suite_releases(overview, suite)
        for rel in shown[shown["cases_with_trials"] > 0].itertuples(index=False):
            table = lottery.lottery_table(con, overview, suite, int(rel.report_id), 2)
            for case in table.itertuples(index=False):
                trials = cases.case_trials(con, int(rel.report_id), int(case.case_idx))
                passing = [int(r) for r in trials[trials["status"] == "passed"]["run_index"]]
                failing = [int(r) for r in trials[trials["status"] != "passed"]["run_index"]]
                if len(passing) >= 2 and len(failing) >= 2:
                    return (
                        suite,
                        str(rel.release),
                        cases.case_link_key(case.case_id, int(case.case_idx)),
                        int(rel.report_id),
                        int(case.case_idx),
                        passing[-1],
                        failing[-1],
                    )
    pytest.fail("no sample lottery case has two passing and two failing trials")


def test_a_link_opens_the_same_trials_and_diff(at: AppTest, con: Any) -> None:
    suite, release, key, report_id, case_idx, good, bad = a_case_with_choices(con)
    open_link(at, "lottery", suite=suite, release=release, k="2", case=key)
    assert at.selectbox(key="lottery_case").value == key
    per_case = f"lottery_{report_id}_{case_idx}"
    first_good = at.selectbox(key=f"{per_case}_pass").value
    assert first_good != good and at.selectbox(key=f"{per_case}_fail").value != bad
    run(at.selectbox(key=f"{per_case}_pass").set_value(good))
    run(at.selectbox(key=f"{per_case}_fail").set_value(bad))
    run(at.toggle(key="lottery_volatile").set_value(False))
    params = {name: at.query_params[name] for name in at.query_params}
    assert (params["pass"], params["fail"], params["volatile"]) == (str(good), str(bad), "off")
    diff = at.html[0].value

    fresh = open_link(new_session(), "lottery", **params)
    assert not fresh.warning, [w.value for w in fresh.warning]
    assert fresh.selectbox(key=f"{per_case}_pass").value == good
    assert fresh.selectbox(key=f"{per_case}_fail").value == bad
    assert fresh.toggle(key="lottery_volatile").value is False
    assert fresh.html[0].value == diff
    assert f"run {good} (passed)" in diff

    # another case: the picks, which were this case's, are not carried over to it
    other = next(o for o in fresh.selectbox(key="lottery_case").options if o != key)
    run(fresh.selectbox(key="lottery_case").set_value(other))
    picks = [s for s in fresh.selectbox if s.key and s.key.endswith(("_pass", "_fail"))]
    assert all(p.index == 0 for p in picks), [(p.key, p.value) for p in picks]
    assert all(fresh.query_params.get(p.key.rsplit("_", 1)[1]) == str(p.value) for p in picks)


# ---- the first page's headline ----------------------------------------------------------------


def test_the_first_page_answers_first(at: AppTest, con: Any, shared_reports: Path) -> None:
    overview = summary.report_overview(con)
    for suite in suite_names(con):
        at = open_link(new_session(), "releases", suite=suite)
        k = the_k(con, suite)
        review = build_review(con, suite, k=k, reports_dir=shared_reports)
        shown = (*at.error, *at.success, *at.info, *at.warning)
        banner = [b.value for b in shown if "latest of" in b.value]
        assert len(banner) == 1 and banner[0].startswith(f"**{review.verdict} ·"), banner
        metrics = {m.label: m for m in at.metric}
        policy, _ = suite_policy(suite, None, shared_reports)
        head = latest_headline(con, overview, suite, k, policy)
        assert metrics[f"pass^{k}"].value == f"{100 * head.row['pass_hat_k']:.1f}%"
        assert metrics[f"pass^{k}"].delta == f"{100 * head.pass_hat_k.delta.delta:+.1f} pts"
        assert metrics["pass@1"].delta == f"{100 * head.pass_at_1.delta.delta:+.1f} pts"
        low, high = head.row["pass_hat_k_ci_low"], head.row["pass_hat_k_ci_high"]
        said = [c.value.replace("\\", "") for c in at.caption]  # Markdown escapes removed
        assert any(c.startswith(f"95% CI [{100 * low:.1f}–{100 * high:.1f}]") for c in said), said
        assert any(f"Δ against {head.base}" in c for c in said), said
        # newest first: the latest release at the top of the table
        order = list(releases.suite_releases(overview, suite)["release"])
        assert list(tables(at)[0]["release"]) == order[::-1]


def test_the_headline_names_the_base_it_walked_back_to(at: AppTest, con: Any) -> None:
    """code-agent's release before the latest ran 3 trials: at k = 5 the change is
    against the latest earlier release that ran 5 or more, and the page says which."""
    overview = summary.report_overview(con)
    policy, _ = suite_policy("code-agent", None, None)
    head = latest_headline(con, overview, "code-agent", 5, policy)
    names = list(releases.suite_releases(overview, "code-agent")["release"])
    assert head.base is not None and head.base != names[-2]
    open_link(at, "releases", suite="code-agent", k="5")
    assert {m.label for m in at.metric} >= {"pass^5", "pass@1"}
    said = " ".join(c.value for c in at.caption)
    assert f"Δ against {head.base}" in said.replace("\\", "")
    assert names[-2] in said.replace("\\", "") and "passed over" in said


# ---- the Review page: the verdict's k and the numbers' k ------------------------------------


def test_the_review_says_both_ks_when_the_policy_judges_at_another(at: AppTest, con: Any) -> None:
    """The default rule judges pass^4; a suite at another k says so under the verdict."""
    suite = next(s for s in suite_names(con) if the_k(con, s) != 4)
    open_link(at, "review", suite=suite)
    assert at.selectbox(key="review_k").value == the_k(con, suite)
    said = [c.value.replace("\\", "") for c in at.caption]
    assert any("judged at k = 4" in c and f"at k = {the_k(con, suite)}" in c for c in said)


def test_a_policy_at_one_k_is_every_pages_k(
    shared_reports: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, con: Any
) -> None:
    reports = tmp_path / "reports"
    shutil.copytree(shared_reports, reports)
    suite = suite_names(con)[0]
    k = 2 if the_k(con, suite) != 2 else 1
    (reports / "relidash.toml").write_text(
        f'[[rule]]\nsuite = "{suite}"\nk = {k}\nmin_ci_low = 0.1\n', encoding="utf-8"
    )
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    for page in ("releases", "gates", "review"):
        at = open_link(new_session(), page, suite=suite)
        assert at.selectbox(key=f"{page}_k").value == k, page
        said = " ".join(c.value for c in at.caption)
        assert "judged at" not in said  # the verdict's k and the numbers' k are one
    metrics = {m.label for m in open_link(new_session(), "releases", suite=suite).metric}
    assert f"pass^{k}" in metrics
