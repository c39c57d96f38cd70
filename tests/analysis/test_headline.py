"""The first page's headline (dashboard/analysis/headline.py, render/headline.py): the
latest release's verdict is the Review page's, its pass^k and CI are the release
table's, and its Δ is against the latest earlier release where Δ is computable at k.

Expectations come from the code paths the Review page, the release table and `compare`
use, never typed in.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dashboard.analysis import loading, releases, summary
from dashboard.analysis.comparing import compare_releases
from dashboard.analysis.headline import latest_headline, suite_policy
from dashboard.analysis.review import build_review
from dashboard.analysis.suite_k import shortest_runs, suite_k
from dashboard.data.catalog import open_catalog
from dashboard.render import headline as headline_text

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("headline") / "reports"
    shutil.copytree(SAMPLE, copy)
    return copy


@pytest.fixture(scope="module")
def con(reports: Path) -> Iterator[Any]:
    catalog = open_catalog(":memory:")
    loading.refresh_catalog(catalog, reports)
    yield catalog
    catalog.close()


def headline_of(con: Any, reports: Path, suite: str, k: int, count: bool = False) -> Any:
    policy, error = suite_policy(suite, None, reports)
    return latest_headline(
        con,
        summary.report_overview(con),
        suite,
        k,
        policy,
        policy_error=error,
        count_agent_errors=count,
    )


@pytest.mark.parametrize("count_agent_errors", [False, True])
def test_the_verdict_and_numbers_are_the_reviews_and_the_tables(
    con: Any, reports: Path, count_agent_errors: bool
) -> None:
    overview = summary.report_overview(con)
    verdicts = set()
    for suite in releases.suite_names(overview):
        k = suite_k(con, overview, suite, count_agent_errors).k
        head = headline_of(con, reports, suite, k, count_agent_errors)
        review = build_review(
            con, suite, k=k, reports_dir=reports, count_agent_errors=count_agent_errors
        )
        assert (head.release, head.verdict) == (review.release, review.verdict), suite
        verdicts.add(head.verdict)
        table = releases.release_table(con, overview, suite, k, count_agent_errors)
        latest = table.iloc[-1]
        assert head.release == latest["release"]
        for column in ("pass_hat_k", "pass_hat_k_ci_low", "pass_hat_k_ci_high", "pass_at_1"):
            assert head.row[column] == pytest.approx(latest[column]), (suite, column)
        # at the suite's k the release before is comparable: the table's Δ column
        assert head.base == table.iloc[-2]["release"] and not head.passed_over
        assert head.pass_hat_k.delta.delta == pytest.approx(latest["pass_hat_k_change"])
        # and the review's paired Δ, for both numbers
        deltas = {d.key: d.delta for d in review.comparison.deltas}
        assert head.pass_hat_k.delta.delta == pytest.approx(deltas["pass_hat_k"].delta)
        assert head.pass_at_1.delta.delta == pytest.approx(deltas["pass_at_1"].delta)
        assert head.pass_at_1.delta.ci_low == pytest.approx(deltas["pass_at_1"].ci_low)
    if not count_agent_errors:  # both verdicts met: a headline stuck on one would fail
        assert len(verdicts) >= 2, "every sample suite has one verdict: the test is idle"


def test_the_base_skips_releases_where_the_change_is_not_computable(
    con: Any, reports: Path
) -> None:
    """At a k one earlier release ran too few trials for, the Δ is against the latest
    release before it that did, and the headline names the one passed over."""
    overview = summary.report_overview(con)
    for suite in releases.suite_names(overview):
        shown = releases.suite_releases(overview, suite)
        fewest = shortest_runs(con, list(shown["report_id"]), False)
        trials = [fewest.get(int(r)) for r in shown["report_id"]]
        latest = trials[-1]
        # a k the latest supports and the release before it does not, with one before
        # that which does
        for k in range(2, (latest or 0) + 1):
            if (
                trials[-2] is not None
                and trials[-2] < k
                and any(t is not None and t >= k for t in trials[:-2])
            ):
                break
        else:
            continue
        head = headline_of(con, reports, suite, k)
        names = [str(r) for r in shown["release"]]
        expected = max(i for i, t in enumerate(trials[:-2]) if t is not None and t >= k)
        assert head.base == names[expected], (suite, k)
        assert names[-2] in head.passed_over
        compared = compare_releases(con, suite, names[expected], names[-1], k=k)
        hat = next(d for d in compared.deltas if d.key == "pass_hat_k")
        assert head.pass_hat_k.delta.delta == pytest.approx(hat.delta.delta)
        line = headline_text.base_line(head, suite_k(con, overview, suite))
        assert f"Δ against {names[expected]}" in line and names[-2] in line
        assert f"k = {k} as chosen" in line
        return
    pytest.fail("no sample suite has a release between two that ran more trials")


def test_the_text_says_the_verdict_the_change_and_its_direction(con: Any, reports: Path) -> None:
    overview = summary.report_overview(con)
    suite = releases.suite_names(overview)[0]
    chosen = suite_k(con, overview, suite)
    head = headline_of(con, reports, suite, chosen.k)
    assert headline_text.verdict_text(head).startswith(f"{head.verdict} · {head.release}")
    kinds = {"PASSED": "success", "FAILED": "error", "UNDECIDED": "info"}
    assert headline_text.verdict_kind(head) == kinds.get(head.verdict, "warning")
    assert any(line.startswith("Policy: ") for line in headline_text.verdict_reasons(head))
    hat, at_1 = headline_text.numbers(head)
    assert hat.label == f"pass^{chosen.k}" and at_1.label == "pass@1"
    for number, delta in ((hat, head.pass_hat_k), (at_1, head.pass_at_1)):
        d = delta.delta.delta
        assert number.change == f"{100 * d:+.1f} pts"
        assert number.direction == ("flat" if abs(d) < 0.0005 else "up" if d > 0 else "down")
        assert number.significant == (delta.delta.ci_low > 0 or delta.delta.ci_high < 0)
        assert number.detail.startswith("95% CI [")
    line = headline_text.base_line(head, chosen)
    assert line.startswith(f"k = {chosen.k}: ") and f"Δ against {head.base}" in line


def test_a_mistyped_slice_gives_no_verdict_as_the_review_gives_none(
    con: Any, reports: Path, tmp_path: Path
) -> None:
    from dashboard.analysis.policy import read_policy
    from dashboard.analysis.releases import UnknownName

    suite = releases.suite_names(summary.report_overview(con))[0]
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text('[[rule]]\nk = 2\nmin_ci_low = 0.5\nslice = "no-such-tag"\n')
    with pytest.raises(UnknownName, match="no-such-tag") as raised:
        build_review(con, suite, policy_file=policy_file, reports_dir=reports)
    policy, _ = suite_policy(suite, policy_file, reports)
    assert policy is not None and policy.rules == tuple(read_policy(policy_file))
    head = latest_headline(con, summary.report_overview(con), suite, 2, policy)
    assert head.verdict is None and head.gate is None
    assert head.policy_error == str(raised.value)
    assert headline_text.verdict_kind(head) == "warning"
    assert "no-such-tag" in headline_text.verdict_reasons(head)[0]
