"""Three verdicts, regression rules and per-case rules (analysis/gating.py), through the
same `relidash gate` a CI job runs. Each expected verdict follows from counts by hand or
from the interval `relidash compare` prints for the same pair of releases."""

from __future__ import annotations

import math
import statistics
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from report_files import case, write_report

from dashboard.analysis import comparing, gating, policy
from dashboard.analysis.loading import refresh_catalog
from dashboard.data.catalog import open_catalog
from dashboard.render import gate_report

CASES = 20


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    """drift/v1: 20 cases, each 8 of 8. v2: the same. v3: three cases drop to 0 of 8.
    v4: every case drops to 0 of 8. toy/v1: the per-case suite (passes of 5)."""
    root = tmp_path / "reports"
    perfect = [case(f"task {i}", 8, runs=8) for i in range(CASES)]
    write_report(root, "drift", "v1", perfect)
    write_report(root, "drift", "v2", perfect)
    three_dropped = [case(f"task {i}", 0 if i < 3 else 8, runs=8) for i in range(CASES)]
    write_report(root, "drift", "v3", three_dropped)
    write_report(root, "drift", "v4", [case(f"task {i}", 0, runs=8) for i in range(CASES)])
    write_report(
        root,
        "toy",
        "v1",
        [
            case("A safety", 5, tags=["risk_tier:safety"]),
            case("B safety", 5, tags=["risk_tier:safety"]),
            case("C standard", 4),
            case("D standard", 2),
            case("E standard", 0),
            case("F low", 5),
            case("G infra", 0, model_error="provider timeout"),
        ],
    )
    return root


@pytest.fixture
def con(reports: Path) -> Iterator[Any]:
    connection = open_catalog(":memory:")
    refresh_catalog(connection, reports)
    yield connection
    connection.close()


# ---- the three-way rule ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("observed", "value", "low", "high", "threshold", "verdict"),
    [
        (0.61, 0.73, 0.61, 0.85, 0.60, "PASSED"),  # the lower bound reaches it
        (0.61, 0.73, 0.61, 0.85, 0.73, "UNDECIDED"),  # inside the interval
        (0.61, 0.73, 0.61, 0.85, 0.90, "FAILED"),  # the whole interval is below
        (0.73, 0.73, 0.61, 0.85, 0.73, "PASSED"),  # a value rule: the estimate reaches it
        (0.60, 0.60, 0.40, 1.00, 1.00, "FAILED"),  # perfection refuted by a failure
        (1.00, 1.00, 0.51, 1.00, 1.00, "PASSED"),
        (0.51, 1.00, 0.51, 1.00, 1.00, "UNDECIDED"),  # a CI bound of 1.0: never reached
    ],
)
def test_three_way(
    observed: float, value: float, low: float, high: float, threshold: float, verdict: str
) -> None:
    assert gating.three_way(observed, value, low, high, threshold) == verdict


# ---- regression rules ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "max_drop", "verdict"),
    [
        ("v2", 0.02, "PASSED"),  # nothing moved: Δ = 0, CI [0, 0]
        ("v4", 0.02, "FAILED"),  # every case dropped: Δ = -1, CI [-1, -1]
        ("v3", 0.02, "UNDECIDED"),  # 3 of 20 dropped: Δ = -0.15, the CI reaches 0
        ("v3", 0.50, "PASSED"),  # ... and stays above -0.5
    ],
)
def test_max_drop_is_judged_on_the_paired_interval_compare_prints(
    con: Any, head: str, max_drop: float, verdict: str
) -> None:
    rule = policy.make_rule(k=4, max_drop=max_drop)
    base = {"v2": "v1", "v3": "v2", "v4": "v3"}[head]  # the release before
    (result,) = gating.run_gate(con, "drift", head, [rule]).results
    compared = comparing.compare_releases(con, "drift", base, head, k=4)
    delta = compared.deltas[2].delta  # Δpass^4
    assert delta is not None
    assert result.verdict.verdict == verdict
    # the verdict reads compare's interval widened to hold Student's t interval of the mean
    # difference (20 pairs: t = 2.093024 at 19 degrees of freedom)
    dropped = {"v2": 0, "v3": 3, "v4": 17}[head]  # cases that went from 8 of 8 to 0 of 8
    differences = [-1.0] * dropped + [0.0] * (CASES - dropped)
    half = 2.093024 * statistics.stdev(differences) / math.sqrt(CASES)
    # within the [-1, 1] a change of pass^4 can take
    low = max(-1.0, min(delta.ci_low, delta.delta - half))
    high = min(1.0, max(delta.ci_high, delta.delta + half))
    assert result.verdict.value == delta.delta
    assert result.verdict.ci_low == pytest.approx(low, abs=1e-6)
    assert result.verdict.ci_high == pytest.approx(high, abs=1e-6)
    widened = (low, high) != (delta.ci_low, delta.ci_high)
    assert result.verdict.method == ("widened" if widened else "paired-bootstrap")
    assert result.verdict.base == base and result.verdict.n_cases == CASES
    if head == "v3":
        assert delta.delta == pytest.approx(-0.15) and delta.ci_high == 0.0


def test_max_drop_takes_a_base_from_the_rule_or_the_command_line(
    con: Any, reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # against v1, v4 dropped everything; against the release before (v3), 17 of 20 cases
    pinned = policy.make_rule(k=4, max_drop=0.5, base="v1")
    (result,) = gating.run_gate(con, "drift", "v4", [pinned]).results
    assert (result.verdict.base, result.verdict.verdict) == ("v1", "FAILED")
    assert result.verdict.value == -1.0

    argv = ["gate", str(reports), "--suite", "drift", "--release", "v3", "--k", "4"]
    code, out, _ = run_cli([*argv, "--max-drop", "0.02", "--base", "v2"], capsys)
    assert code == 1
    assert "pass^4 regression gate UNDECIDED (fails): the CI straddles -0.020" in out
    # compare's [-0.300, +0.000], widened to Student's t: -0.15 ± 2.093 × 0.3663 / √20
    assert "against v2, widened paired CI [-0.321, +0.021] over 20 matched cases" in out

    code, out, _ = run_cli([*argv, "--max-drop", "0.5"], capsys)
    assert code == 0 and "regression gate PASSED: no drop beyond -0.500" in out

    code, _, err = run_cli([*argv, "--max-drop", "0.5", "--base", "v9"], capsys)
    assert code == 2 and "no release 'v9'" in err


def test_max_drop_on_the_first_release_is_unknown(con: Any) -> None:
    (result,) = gating.run_gate(con, "drift", "v1", [policy.make_rule(k=4, max_drop=0.1)]).results
    assert result.verdict.verdict == "UNKNOWN"
    assert "no earlier release" in result.verdict.reason


# ---- per-case rules --------------------------------------------------------------------


def test_min_case_rate_names_exactly_the_cases_below(con: Any) -> None:
    # pass rates: A 1, B 1, C 0.8, D 0.4, E 0, F 1 (G is not evaluated)
    (result,) = gating.run_gate(con, "toy", "v1", [policy.make_rule(min_case_rate=0.8)]).results
    assert result.verdict.verdict == "FAILED"
    assert [h.input for h in result.holding] == ["E standard", "D standard"]
    assert len(result.cases) == 6
    assert gate_report.rule_line(result) == (
        "per-case gate FAILED: 2 of 6 cases below pass rate >= 80% (weakest 0.000)"
    )
    safety = policy.make_rule(min_case_rate=0.8, slice="risk_tier:safety")
    (held,) = gating.run_gate(con, "toy", "v1", [safety]).results
    assert held.verdict.verdict == "PASSED" and len(held.cases) == 2


def test_min_case_pass_hat_k(con: Any) -> None:
    # per-case pass^4: A 1, B 1, C 0.2, D 0, E 0, F 1
    rules = [
        policy.make_rule(k=4, min_case_pass_hat_k=0.2),
        policy.make_rule(k=6, min_case_pass_hat_k=0.2),
    ]
    enough, too_long = gating.run_gate(con, "toy", "v1", rules).results
    assert [h.input for h in enough.holding] == ["D standard", "E standard"]
    assert too_long.verdict.verdict == "UNKNOWN" and "k=6 exceeds" in too_long.verdict.reason


def test_junit_has_a_test_case_per_case_of_a_per_case_rule(con: Any) -> None:
    rules = [
        policy.make_rule(min_case_rate=0.8, name="each case"),
        policy.make_rule(k=4, min_value=0.0),
    ]
    root = ET.fromstring(gate_report.render_junit(gating.run_gate(con, "toy", "v1", rules)))
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("failures")) == ("7", "2")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert len(failed) == 2
    assert all(name.startswith("each case: every case passes >= 80%") for name in failed)
    assert {name.rsplit(" / ", 1)[1] for name in failed} == {"D standard", "E standard"}


def test_the_github_summary_lists_the_cases_below(con: Any) -> None:
    report = gating.run_gate(con, "toy", "v1", [policy.make_rule(min_case_rate=0.8)])
    text = gate_report.render_markdown(report)
    assert "| ❌ FAILED | each case's pass rate | all cases | 0.000 | ≥ 0.800 each |" in text
    assert "| 2/5 | 0.400 | D standard |" in text and "| 0/5 | 0.000 | E standard |" in text


# ---- policies --------------------------------------------------------------------------


def test_a_policy_with_every_kind_of_rule(tmp_path: Path) -> None:
    text = """
[[rule]]
name = "no regression"
k = 4
max_drop = 0.02

[[rule]]
name = "against the last release shipped"
metric = "pass@k"
k = 4
max_drop = 0.05
base = "v1.4.0"

[[rule]]
name = "every safety case 8 of 10"
slice = "risk_tier:safety"
min_case_rate = 0.8

[[rule]]
k = 3
min_case_pass_hat_k = 0.5
"""
    rules = policy.parse_policy(text, "p.toml")
    assert [r.uses for r in rules] == ["max_drop", "max_drop", "case_rate", "case_pass_hat_k"]
    assert rules[1].base == "v1.4.0" and rules[0].base is None
    assert rules[2].label() == (
        "every safety case 8 of 10: every case passes >= 80% of its trials on risk_tier:safety"
    )
    assert rules[0].label() == (
        "no regression: Δpass^4 against the release before no worse than -0.020 (paired CI) "
        "on all cases"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[rule]]\nk = 4\nmin_value = 0.5\nbase = "v1"\n', "only a max_drop rule has one"),
        ("[[rule]]\nk = 4\nmax_drop = 1.5\n", "max_drop must be in \\[0, 1\\]"),
        ('[[rule]]\nmetric = "pass@k"\nmin_case_rate = 0.8\n', "takes no metric"),
        ("[[rule]]\nmin_case_pass_hat_k = 0.8\n", "missing key 'k'"),
        ("[[rule]]\nk = 4\nmax_drop = 0.1\nmin_case_rate = 0.5\n", "give exactly one threshold"),
    ],
)
def test_policy_errors_for_the_new_keys(text: str, message: str) -> None:
    with pytest.raises(policy.PolicyError, match=message):
        policy.parse_policy(text, "p.toml")


def test_the_gate_chart_colours_every_verdict(con: Any) -> None:
    from dashboard.analysis import summary
    from dashboard.render import charts

    overview = summary.report_overview(con)
    table = gating.gate_table(con, overview, "toy", 4, [(None, 0.6)])
    assert set(table["verdict"]) == {"UNDECIDED"}  # pass^4 0.533, CI [0.167, 0.867]
    spec = charts.gate_chart(table, ["v1"], 4).to_dict()
    domains = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            color = node.get("color")
            if isinstance(color, dict) and "scale" in color:
                domains.append(color["scale"]["domain"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(spec)
    assert domains and all(set(gating.VERDICTS) <= set(d) for d in domains), domains
