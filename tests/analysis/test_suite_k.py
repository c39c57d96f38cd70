"""The suite's k (dashboard/analysis/suite_k.py): the one k every page, the headline, the
review's default and `relidash summary` show a suite at.

Hand-made tables for the rule; on sample_reports/, the k against the obvious loop over
each release's cases, and the property that names it: every release shown is known at
the suite's k, and one is not at k + 1.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard.analysis import loading, releases, summary
from dashboard.analysis.policy import Policy, parse_policy, resolve_policy
from dashboard.analysis.review import build_review
from dashboard.analysis.suite_k import (
    FROM_POLICY,
    FROM_RELEASES,
    WINDOW,
    choose_k,
    policy_k,
    suite_k,
    suite_ks,
)
from dashboard.data.catalog import open_catalog
from dashboard.data.catalog.queries import run_query

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("suite_k") / "reports"
    shutil.copytree(SAMPLE, copy)
    return copy


@pytest.fixture(scope="module")
def con(reports: Path) -> Iterator[Any]:
    catalog = open_catalog(":memory:")
    loading.refresh_catalog(catalog, reports)
    yield catalog
    catalog.close()


def policy(text: str, source: str = "team.toml") -> Policy:
    return Policy(source, "0" * 64, tuple(parse_policy(text, source)))


RULE = "[[rule]]\nk = {k}\nmin_ci_low = 0.5\n{extra}"


# ---- the rule -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shortest, k, limited_by",
    [
        ([("v1", 5), ("v2", 3), ("v3", 8)], 3, "v2"),
        ([("v1", 3), ("v2", 5), ("v3", 3)], 3, "v3"),  # the latest of the shortest
        ([("v1", None), ("v2", 6)], 6, "v2"),  # a release with no evaluated case limits none
        ([("v1", 8)], 8, "v1"),
    ],
)
def test_the_largest_k_every_release_supports(
    shortest: list[tuple[str, int | None]], k: int, limited_by: str
) -> None:
    chosen = choose_k(shortest)
    assert (chosen.k, chosen.source, chosen.limited_by) == (k, FROM_RELEASES, limited_by)
    assert limited_by in chosen.reason


def test_no_evaluated_case_anywhere_is_k_1() -> None:
    assert choose_k([("v1", None)]).k == 1
    assert choose_k([]).k == 1


def test_a_chosen_policy_at_one_k_sets_it_and_the_default_rule_does_not() -> None:
    team = policy(RULE.format(k=6, extra=""))
    assert policy_k(team) == 6
    chosen = choose_k([("v1", 3)], team)
    assert (chosen.k, chosen.source) == (6, FROM_POLICY)
    assert "team.toml" in chosen.reason
    # rules at two k: the policy does not name one
    assert policy_k(policy(RULE.format(k=2, extra="") + RULE.format(k=4, extra=""))) is None
    # the default rule (pass^4) is a placeholder, not a choice
    default = resolve_policy("any-suite", None, None)
    assert policy_k(default) is None
    assert choose_k([("v1", 3)], default).k == 3


def test_the_window_is_the_latest_releases_a_page_shows() -> None:
    history = [(f"v{i}", 2 if i == 0 else 5) for i in range(WINDOW + 1)]
    assert choose_k(history[-WINDOW:]).k == 5  # the 2-trial release is outside the window
    assert choose_k(history).k == 2
    assert f"latest {WINDOW}" in choose_k(history[-WINDOW:], of_more=True).reason


# ---- on the sample reports -----------------------------------------------------------------


def suites(con: Any) -> list[str]:
    return releases.suite_names(summary.report_overview(con))


@pytest.mark.parametrize("count_agent_errors", [False, True])
def test_suite_k_is_the_fewest_trials_of_any_case_shown(con: Any, count_agent_errors: bool) -> None:
    overview = summary.report_overview(con)
    for suite in suites(con):
        shown = releases.suite_releases(overview, suite).iloc[-WINDOW:]
        fewest = []
        for report_id in shown["report_id"]:  # the obvious loop over each report's cases
            outcomes = run_query(
                con,
                "read/case_outcomes",
                count_agent_errors=count_agent_errors,
                report_ids=[int(report_id)],
            )
            n = [int(x) for x in outcomes["n"].dropna()]
            if n:
                fewest.append(min(n))
        assert suite_k(con, overview, suite, count_agent_errors).k == min(fewest), suite


@pytest.mark.parametrize("count_agent_errors", [False, True])
def test_every_release_is_known_at_the_suite_k_and_one_is_not_above_it(
    con: Any, count_agent_errors: bool
) -> None:
    overview = summary.report_overview(con)
    for suite in suites(con):
        k = suite_k(con, overview, suite, count_agent_errors).k
        at_k = releases.release_table(con, overview, suite, k, count_agent_errors)
        assert at_k["pass_hat_k"].notna().all(), (suite, k)
        above = releases.release_table(con, overview, suite, k + 1, count_agent_errors)
        assert above["pass_hat_k"].isna().any(), (suite, k)


def test_suite_ks_read_the_policy_of_relidash_toml(con: Any, reports: Path) -> None:
    names = suites(con)
    plain = suite_ks(con, names, reports)
    suite = names[0]
    (reports / "relidash.toml").write_text(
        RULE.format(k=7, extra=f'suite = "{suite}"\n'), encoding="utf-8"
    )
    try:
        chosen = suite_ks(con, names, reports)
    finally:
        (reports / "relidash.toml").unlink()
    assert (chosen[suite].k, chosen[suite].source) == (7, FROM_POLICY)
    assert plain[suite].k != 7
    # the other suites have no rule of their own: the default applies, and sets no k
    assert {s: c.k for s, c in chosen.items() if s != suite} == {
        s: c.k for s, c in plain.items() if s != suite
    }


def test_the_review_defaults_to_the_suite_k(con: Any, reports: Path) -> None:
    overview = summary.report_overview(con)
    differs = False
    for suite in suites(con):
        k = suite_k(con, overview, suite).k
        review = build_review(con, suite, reports_dir=reports)
        assert review.k == k, suite
        latest = releases.suite_releases(overview, suite).iloc[-1]
        differs = differs or int(latest["runs_max"]) != k
    assert differs, "no sample suite's latest run count differs from its k: the test is idle"
