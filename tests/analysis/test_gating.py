"""`relidash gate`: rules, policy files, verdicts derived by hand, exit codes, renderings.

Every fixture is a small multivon-eval 0.15-style report written into tmp_path, so each
expected verdict below follows from the counts by hand.

The toy suite's release v1 (5 runs per case):

    case  tags                passes  pass^4 = C(c,4)/C(5,4)   pass@4 = 1 - C(5-c,4)/C(5,4)
    A     risk_tier:safety    5/5     1                        1
    B     risk_tier:safety    5/5     1                        1
    C     risk_tier:standard  4/5     1/5 = 0.2                1   (5-c = 1 < 4)
    D     risk_tier:standard  2/5     0                        1   (5-c = 3 < 4)
    E     risk_tier:standard  0/5     0                        0
    F     risk_tier:low       5/5     1                        1
    G     team:infra          model error: not evaluated (multivon-eval's rule)

    all evaluated (A-F): pass^4 = (1+1+0.2+0+0+1)/6 = 3.2/6 = 0.5333, pass@4 = 5/6 = 0.8333
    safety (A, B): pass^4 = 1; both cases equal, so the CI is Wilson's for 2 of 2:
        low = 1 / (1 + z²/2) = 1 / (1 + 3.8415/2) = 0.3424
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from report_files import case, write_report

from dashboard.analysis import gating, policy, releases, summary
from dashboard.analysis.loading import refresh_catalog
from dashboard.data.catalog import open_catalog
from dashboard.render import gate_report

Z2 = 1.959963984540054**2  # the 97.5% normal quantile, squared


# ---- fixtures ----------------------------------------------------------------------------


TOY_V1 = [
    case("A safety", 5, tags=["risk_tier:safety"]),
    case("B safety", 5, tags=["risk_tier:safety"]),
    case("C standard", 4, tags=["risk_tier:standard"]),
    case("D standard", 2, tags=["risk_tier:standard"]),
    case("E standard", 0, tags=["risk_tier:standard"]),
    case("F low", 5, tags=["risk_tier:low"]),
    case("G infra", 0, tags=["team:infra"], model_error="provider timeout"),
]


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    write_report(root, "toy", "v0", [case("A safety", 3, tags=["risk_tier:safety"])])
    write_report(root, "toy", "v1", TOY_V1)
    # every case passes every run: pass^4 = 1 for each of 4 cases, a flat sample, so the
    # CI is Wilson's for 4 of 4: low = 1 / (1 + z²/4) = 1 / 1.9604 = 0.5101 < 1.0
    write_report(root, "allpass", "v1", [case(f"case {i}", 5) for i in range(4)])
    return root


@pytest.fixture
def con(reports: Path) -> Iterator[Any]:
    connection = open_catalog(":memory:")
    refresh_catalog(connection, reports)
    yield connection
    connection.close()


def rule(**kwargs: Any) -> policy.GateRule:
    return policy.make_rule(**kwargs)


# ---- verdicts ----------------------------------------------------------------------------


def test_slice_gate_on_the_point_estimate_passes(con: Any) -> None:
    report = gating.run_gate(con, "toy", "v1", [rule(k=4, min_value=1.0, slice="risk_tier:safety")])
    (result,) = report.results
    assert result.verdict.verdict == "PASSED"
    assert result.verdict.value == 1.0 and result.verdict.n_cases == 2
    assert result.verdict.ci_low == pytest.approx(1 / (1 + Z2 / 2))
    assert gate_report.rule_line(result) == (
        "[risk_tier:safety] pass^4 gate PASSED: value 1.000 >= required 1.000 "
        "(pass^4 = 1.000, CI [0.342, 1.000], 2 cases)"
    )
    assert report.passed


def test_slice_gate_on_the_ci_lower_bound_fails_with_no_case_to_blame(con: Any) -> None:
    # both safety cases are perfect; only the sample size (2 cases) holds the bound down
    report = gating.run_gate(
        con, "toy", "v1", [rule(k=4, min_ci_low=0.5, slice="risk_tier:safety")]
    )
    (result,) = report.results
    # the CI [0.342, 1.0] straddles 0.5: two perfect cases neither meet nor fail the claim
    assert result.verdict.verdict == "UNDECIDED" and result.holding == ()
    text = gate_report.render_text(report)
    assert "the CI [0.342, 1.000] straddles the required 0.500" in text
    assert "held down by the number of cases (2) alone" in text


def test_failure_lists_the_cases_holding_it_down_lowest_first(con: Any) -> None:
    # pass^4 = 0.533 < 0.6; below 1: E (0, pass rate 0), D (0, 0.4), C (0.2): lowest
    # per-case pass^4 first, ties broken by the lower pass rate
    # the estimate misses 0.6 but the CI [0.167, 0.867] reaches it: UNDECIDED, not FAILED
    (result,) = gating.run_gate(con, "toy", "v1", [rule(k=4, min_value=0.6)]).results
    assert result.verdict.verdict == "UNDECIDED"
    assert result.verdict.value == pytest.approx(3.2 / 6)
    assert [(h.input, h.passes, h.runs, h.value) for h in result.holding] == [
        ("E standard", 0, 5, 0.0),
        ("D standard", 2, 5, 0.0),
        ("C standard", 4, 5, pytest.approx(0.2)),
    ]
    assert gate_report.rule_line(result).startswith(
        "pass^4 gate UNDECIDED (fails): the CI [0.167, 0.867] straddles the required 0.600"
    )
    (failed,) = gating.run_gate(con, "toy", "v1", [rule(k=4, min_value=0.9)]).results
    assert failed.verdict.verdict == "FAILED"
    assert gate_report.rule_line(failed).startswith(
        "pass^4 gate FAILED: value 0.533 < required 0.900 (pass^4"
    )


def test_pass_at_k_gate(con: Any) -> None:
    (result,) = gating.run_gate(
        con, "toy", "v1", [rule(metric="pass@k", k=4, min_value=0.8)]
    ).results
    assert result.verdict.verdict == "PASSED"
    assert result.verdict.value == pytest.approx(5 / 6)


def test_unknown_when_k_exceeds_the_recorded_runs(con: Any) -> None:
    (result,) = gating.run_gate(con, "toy", "v1", [rule(k=6, min_ci_low=0.0)]).results
    assert result.verdict.verdict == "UNKNOWN" and not result.passed
    assert gate_report.rule_line(result) == (
        "pass^6 gate UNKNOWN (fails): UNKNOWN — k=6 exceeds the 5 trials of each case; "
        "rerun with --runs >= 6 or pass k <= 5. multivon-eval does not extrapolate."
    )


def test_unknown_when_a_slice_has_no_evaluated_cases(con: Any) -> None:
    # team:infra holds only G, a model error: nothing to estimate from, even at threshold 0
    (result,) = gating.run_gate(
        con, "toy", "v1", [rule(k=1, min_ci_low=0.0, slice="team:infra")]
    ).results
    assert result.verdict.verdict == "UNKNOWN"
    assert "slice team:infra has no evaluated cases in release v1 (its 1 cases: 1 model_error)" in (
        gate_report.rule_line(result)
    )


def test_unknown_when_the_release_has_no_case_with_the_tag(con: Any) -> None:
    # v0 has no risk_tier:standard case, though the suite knows the tag from v1
    (result,) = gating.run_gate(
        con, "toy", "v0", [rule(k=1, min_value=0.0, slice="risk_tier:standard")]
    ).results
    assert result.verdict.verdict == "UNKNOWN"
    assert "no case of release v0 carries the tag risk_tier:standard" in gate_report.rule_line(
        result
    )


def test_all_pass_suite_wilson_bound_stays_below_one(con: Any) -> None:
    report = gating.run_gate(
        con,
        "allpass",
        "latest",
        [rule(k=4, min_ci_low=1.0), rule(k=4, min_value=1.0), rule(k=4, min_ci_low=0.5)],
    )
    strict_bound, point, loose_bound = report.results
    assert strict_bound.verdict.ci_low == pytest.approx(1 / (1 + Z2 / 4))  # 0.5101
    assert strict_bound.verdict.value == 1.0
    # a Wilson bound never reaches 1.0, and the interval's top is 1.0: never decided
    assert [r.verdict.verdict for r in report.results] == ["UNDECIDED", "PASSED", "PASSED"]
    assert not report.passed and report.failures == 1


def test_latest_is_the_newest_release_and_unknown_names_are_refused(con: Any) -> None:
    assert gating.run_gate(con, "toy", "latest", [rule(k=1, min_value=0.0)]).release == "v1"
    with pytest.raises(releases.UnknownName, match="no suite named 'nope'.*allpass, toy"):
        gating.run_gate(con, "nope", "latest", [rule(k=1, min_value=0.0)])
    with pytest.raises(releases.UnknownName, match="has no release 'v9'.*'v0', 'v1'"):
        gating.run_gate(con, "toy", "v9", [rule(k=1, min_value=0.0)])
    with pytest.raises(releases.UnknownName, match="carries the tag 'risk_tier:typo'"):
        gating.run_gate(con, "toy", "v1", [rule(k=1, min_value=0.0, slice="risk_tier:typo")])


def test_gate_agrees_with_the_gates_page(con: Any) -> None:

    table = gating.gate_table(
        con, summary.report_overview(con), "toy", 4, [("risk_tier:safety", 0.3)]
    )
    page = table[table["release"] == "v1"].iloc[0]
    (result,) = gating.run_gate(
        con, "toy", "v1", [rule(k=4, min_ci_low=0.3, slice="risk_tier:safety")]
    ).results
    assert page["verdict"] == result.verdict.verdict == "PASSED"
    assert gate_report.gate_table_shown(table)[table["release"] == "v1"].iloc[0]["detail"] == (
        gate_report.verdict_line(result.verdict)
    )


# ---- policy files ------------------------------------------------------------------------

MIXED_POLICY = """
[[rule]]
name = "safety never flaky"
slice = "risk_tier:safety"
k = 4
min_value = 1.0          # A, B: pass^4 = 1            -> PASSED

[[rule]]
name = "suite reliable"
metric = "pass^k"
k = 4
min_ci_low = 0.9         # CI low <= pass^4 = 0.533     -> FAILED

[[rule]]
metric = "pass@k"
k = 4
min_value = 0.8          # pass@4 = 5/6 = 0.833         -> PASSED
"""


def test_policy_parses_into_rules(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(MIXED_POLICY, encoding="utf-8")
    rules = policy.read_policy(path)
    assert rules == [
        policy.GateRule("pass^k", 4, 1.0, "value", "risk_tier:safety", "safety never flaky"),
        policy.GateRule("pass^k", 4, 0.9, "ci_low", None, "suite reliable"),
        policy.GateRule("pass@k", 4, 0.8, "value", None, ""),
    ]


def test_policy_with_mixed_results(con: Any) -> None:
    report = gating.run_gate(con, "toy", "v1", policy.parse_policy(MIXED_POLICY, "p.toml"))
    assert [r.verdict.verdict for r in report.results] == ["PASSED", "FAILED", "PASSED"]
    lines = gate_report.render_text(report).splitlines()
    assert lines[0] == ("relidash gate: suite toy, release v1 (toy/v1.json; agent errors excluded)")
    assert lines[1].startswith("safety never flaky [risk_tier:safety] pass^4 gate PASSED")
    assert lines[2].startswith("suite reliable pass^4 gate FAILED: the whole CI is below")
    assert lines[-1] == "gate FAILED: 1 of 3 checks failed"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[rule]]\nk = 4\nmin_ci = 0.5\n", "p.toml: rule 1: unknown key 'min_ci'"),
        ("[[rule]]\nmin_value = 0.5\n", "p.toml: rule 1: missing key 'k'"),
        (
            '[[rule]]\nname = "x"\nk = 4\nmin_value = 0.5\nmin_ci_low = 0.5\n',
            "p.toml: rule 1 \\(x\\): give exactly one threshold",
        ),
        ("[[rule]]\nk = 4\n", "p.toml: rule 1: give exactly one threshold"),
        ('[[rule]]\nk = 4\nmin_value = 0.5\nmetric = "pass^x"\n', "metric must be one of"),
        ("[[rule]]\nk = 0\nmin_value = 0.5\n", "p.toml: rule 1: k must be a whole number"),
        ('[[rule]]\nk = "4"\nmin_value = 0.5\n', "k must be a whole number >= 1, got '4'"),
        ("[[rule]]\nk = 4\nmin_value = 1.5\n", "min_value must be in \\[0, 1\\]"),
        ("[[rule]]\nk = 4\nmin_ci_low = true\n", "min_ci_low must be a number"),
        ('[[rule]]\nk = 4\nmin_value = 1\nslice = ""\n', "slice must be a case tag"),
        ("[[rule]]\nk = 4\nmin_value = 1\n[[rule]]\nk = 2\n", "p.toml: rule 2: give exactly"),
        ("k = 4\n", "p.toml: unknown top-level key 'k'"),
        ("", "p.toml: defines no rules"),
        ("[[rule]\n", "p.toml: not valid TOML"),
    ],
)
def test_policy_errors_name_the_file_and_the_key(text: str, message: str) -> None:
    with pytest.raises(policy.PolicyError, match=message):
        policy.parse_policy(text, "p.toml")


def test_missing_policy_file(tmp_path: Path) -> None:
    with pytest.raises(policy.PolicyError, match="no such policy file"):
        policy.read_policy(tmp_path / "absent.toml")


def test_example_policy_in_the_repository_parses() -> None:
    rules = policy.read_policy(Path(__file__).parents[2] / "examples" / "gate-policy.toml")
    assert any(r.slice == "risk_tier:safety" and r.uses == "value" for r in rules)
    assert any(r.slice is None and r.uses == "ci_low" for r in rules)


# ---- renderings --------------------------------------------------------------------------


def test_github_markdown(con: Any, reports: Path) -> None:
    hostile = "Close <b>ticket</b> | now"
    write_report(reports, "toy", "v2", [*TOY_V1, case(hostile, 1, tags=["risk_tier:safety"])])
    refresh_catalog(con, reports)
    report = gating.run_gate(con, "toy", "v2", policy.parse_policy(MIXED_POLICY, "p.toml"))
    text = gate_report.render_markdown(report)
    assert text.startswith("## ❌ relidash gate FAILED: toy v2\n")
    assert "| ❌ FAILED | safety never flaky: pass^4 value | risk\\_tier:safety |" in text
    assert "| ✅ PASSED | pass@4 value | all cases |" in text
    # report text is escaped: no raw HTML, no table-breaking pipe
    assert "<b>" not in text and "Close &lt;b&gt;ticket&lt;/b&gt; \\| now" in text
    # safety: only the new case (1/5) is below 1; the whole suite: E, the new case, D, C
    assert "<details><summary>1 case holds pass^4 down (lowest first)</summary>" in text
    assert "<details><summary>4 cases hold pass^4 down (lowest first)</summary>" in text
    assert "| 0/5 | 0.000 | E standard |" in text


def test_junit_xml_has_one_test_case_per_rule(con: Any) -> None:
    rules = [*policy.parse_policy(MIXED_POLICY, "p.toml"), rule(k=6, min_value=0.0)]
    root = ET.fromstring(gate_report.render_junit(gating.run_gate(con, "toy", "v1", rules)))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures")) == ("4", "2")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "safety never flaky: pass^4 value >= 1.000 on risk_tier:safety",
        "suite reliable: pass^4 CI lower bound >= 0.900 on all cases",
        "pass@4 value >= 0.800 on all cases",
        "pass^6 value >= 0.000 on all cases",
    ]
    failures = [c.find("failure") for c in cases]
    assert [f.get("type") if f is not None else None for f in failures] == [
        None,
        "FAILED",
        None,
        "UNKNOWN",
    ]
    assert failures[1] is not None and "E standard" in (failures[1].text or "")


# ---- the command -------------------------------------------------------------------------


def test_cli_exit_codes(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["gate", str(reports), "--suite", "toy"]
    mem = ["--catalog", ":memory:"]
    code, out, err = run_cli([*base, "--k", "4", "--min-value", "0.5", *mem], capsys)
    assert code == 0 and "pass^4 gate PASSED: value 0.533 >= required 0.500" in out
    code, out, _ = run_cli([*base, "--k", "4", "--min-value", "0.6", *mem], capsys)
    assert code == 1 and "gate FAILED" in out
    code, out, _ = run_cli([*base, "--k", "6", "--min-ci-low", "0", *mem], capsys)
    assert code == 1 and "UNKNOWN (fails)" in out
    code, out, _ = run_cli(
        [
            *base,
            "--release",
            "v1",
            "--k",
            "4",
            "--min-ci-low",
            "0.3",
            "--slice",
            "risk_tier:safety",
            *mem,
        ],
        capsys,
    )
    assert code == 0 and out.splitlines()[1].startswith("[risk_tier:safety] pass^4 gate PASSED")
    code, out, _ = run_cli(
        [*base, "--metric", "pass@k", "--k", "4", "--min-value", "0.8", *mem], capsys
    )
    assert code == 0 and "pass@4 gate PASSED" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--suite", "nope", "--k", "1", "--min-value", "0"], "no suite named 'nope'"),
        (["--suite", "toy", "--release", "v9", "--k", "1", "--min-value", "0"], "no release 'v9'"),
        (
            ["--suite", "toy", "--k", "1", "--min-value", "0", "--slice", "x:y"],
            "carries the tag 'x:y'",
        ),
        (["--suite", "toy", "--k", "4"], "needs --k K with --min-ci-low X, --min-value X"),
        (["--suite", "toy", "--k", "0", "--min-value", "0"], "--k must be at least 1"),
        (["--suite", "toy", "--k", "1", "--min-ci-low", "1.5"], "--min-ci-low must be in"),
        (
            ["--suite", "toy", "--k", "1", "--min-ci-low", "0.1", "--min-value", "0.1"],
            "not allowed",
        ),
        (["--suite", "toy", "--policy", "absent.toml"], "absent.toml: no such policy file"),
    ],
)
def test_cli_usage_errors_exit_2(
    reports: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = run_cli(["gate", str(reports), *extra, "--catalog", ":memory:"], capsys)
    assert code == 2 and message in err and out == ""


def test_cli_missing_directory_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(
        ["gate", str(tmp_path / "absent"), "--suite", "toy", "--k", "1", "--min-value", "0"],
        capsys,
    )
    assert code == 2 and "no such directory" in err


def test_cli_policy_with_rule_flags_is_a_usage_error(
    reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text(MIXED_POLICY, encoding="utf-8")
    code, _, err = run_cli(
        [
            "gate",
            str(reports),
            "--suite",
            "toy",
            "--policy",
            str(policy),
            "--k",
            "4",
            "--catalog",
            ":memory:",
        ],
        capsys,
    )
    assert code == 2 and "--policy holds the rules; leave out --k" in err
    policy.write_text("[[rule]]\nk = 4\nthreshold = 1\n", encoding="utf-8")
    code, _, err = run_cli(
        ["gate", str(reports), "--suite", "toy", "--policy", str(policy), "--catalog", ":memory:"],
        capsys,
    )
    assert code == 2 and f"{policy}: rule 1: unknown key 'threshold'" in err


def test_cli_policy_github_and_junit(
    reports: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text(MIXED_POLICY, encoding="utf-8")
    junit = tmp_path / "out" / "gate.xml"
    code, out, _ = run_cli(
        [
            "gate",
            str(reports),
            "--suite",
            "toy",
            "--policy",
            str(policy),
            "--format",
            "github",
            "--junit",
            str(junit),
            "--catalog",
            ":memory:",
        ],
        capsys,
    )
    assert code == 1
    assert out.startswith("## ❌ relidash gate FAILED: toy v1")
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1" and suite.get("tests") == "3"


def test_strict_fails_on_a_problem_in_the_gated_file(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a case whose run_pass_rate is outside [0, 1] is left out and listed as a problem of
    # v2's file; the remaining cases are TOY_V1's, whose pass^4 = 0.533 passes 0.5
    write_report(reports, "toy", "v2", [*TOY_V1, case("broken", 5, rate=1.5)])
    argv = [
        "gate",
        str(reports),
        "--suite",
        "toy",
        "--k",
        "4",
        "--min-value",
        "0.5",
        "--catalog",
        ":memory:",
    ]
    code, out, err = run_cli(argv, capsys)
    assert code == 0 and "gate PASSED: 1 of 1 checks passed" in out
    assert "problem [gated release]: toy/v2.json (case)" in err
    assert "--strict makes them fail the gate" in err
    code, out, err = run_cli([*argv, "--strict"], capsys)
    assert code == 1
    assert "pass^4 gate PASSED" in out
    assert "strict gate FAILED: 1 load problem in toy/v2.json" in out
    assert out.rstrip().endswith("gate FAILED: 1 of 2 checks failed")


def test_strict_ignores_problems_of_other_files(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (reports / "notes.json").write_text('{"not": "a report"}', encoding="utf-8")
    code, out, err = run_cli(
        [
            "gate",
            str(reports),
            "--suite",
            "toy",
            "--k",
            "4",
            "--min-value",
            "0.5",
            "--strict",
            "--catalog",
            ":memory:",
        ],
        capsys,
    )
    assert code == 0 and "problem: notes.json (file)" in err
    assert "gate PASSED: 2 of 2 checks passed" in out
