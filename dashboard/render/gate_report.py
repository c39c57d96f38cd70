"""A gate's verdicts as text: the sentence per rule, plain lines for a terminal,
GitHub-flavoured Markdown for `$GITHUB_STEP_SUMMARY`, JUnit XML (one test case per
rule, and one per case for a per-case rule, so a CI system names the case that failed),
and the Gates page's table.

Formatting only: every verdict comes from dashboard/analysis/gating.py. Must not:
decide a verdict, import Streamlit, print, or write files.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from typing import Final

import pandas as pd

from dashboard.analysis.estimates import METHOD_WIDENED, policy_note
from dashboard.analysis.gating import (
    FAILED,
    PASSED,
    UNDECIDED,
    UNKNOWN,
    GateReport,
    GateVerdict,
    HoldingCase,
    RuleResult,
    verdict_of_row,
)
from dashboard.analysis.planning import DecidePlan
from dashboard.analysis.policy import (
    PER_CASE,
    USES_CASE_RATE,
    USES_CI_LOW,
    USES_MAX_DROP,
    GateRule,
)
from dashboard.render.formatting import one_line
from dashboard.render.visible import visible

HOLDING_SHOWN: Final = 10
GATE_TABLE_COLUMNS: Final = (
    "release", "slice", "threshold", "verdict", "pass_hat_k", "ci_low", "ci_high", "n_cases",
    "detail",
)  # fmt: skip


def verdict_line(v: GateVerdict) -> str:
    """The verdict in one sentence, with the numbers behind it."""
    name = v.metric.replace("k", str(v.k))
    if v.verdict == UNKNOWN:
        return f"{name} gate UNKNOWN (fails): {v.reason}"
    assert v.value is not None
    if v.uses == USES_MAX_DROP:
        return _drop_line(name, v)
    if v.uses in PER_CASE:
        return _per_case_line(v)
    assert v.ci_low is not None and v.ci_high is not None
    bound = "CI lower bound" if v.uses == USES_CI_LOW else "value"
    observed = v.ci_low if v.uses == USES_CI_LOW else v.value
    op = {PASSED: ">=", FAILED: "<"}.get(v.verdict, "<")
    # each sentence compares one number with the threshold: print both with the decimals
    # that comparison needs to read true (a CI's top of 0.49952 is not "0.500 < 0.500")
    whole_ci_below = v.verdict == FAILED and v.uses == USES_CI_LOW and v.ci_high < v.threshold
    compared = v.ci_high if whole_ci_below else observed
    digits = _digits_to_show(compared, v.threshold)
    # where the reported interval is too narrow a verdict reads a widened one
    # (estimates.verdict_interval)
    ci = "widened CI" if v.method == METHOD_WIDENED else "CI"
    interval = f"{ci} [{v.ci_low:.{digits}f}, {v.ci_high:.{digits}f}]"
    numbers = f"({name} = {v.value:.3f}, {interval}, {v.n_cases} cases)"
    required = f"required {v.threshold:.{digits}f}"
    if v.verdict == UNDECIDED:
        return (
            f"{name} gate UNDECIDED (fails): the {interval} straddles the {required}; the "
            f"evidence neither meets nor rules it out {numbers}"
        )
    if whole_ci_below:
        return f"{name} gate FAILED: the whole CI is below the {required} {numbers}"
    if v.verdict == FAILED and v.uses == USES_CI_LOW:
        # a claim of perfection, refuted by a failed trial whatever the interval's top
        digits = _digits_to_show(v.value, v.threshold)
        return (
            f"{name} gate FAILED: a failed trial rules out {name} >= {v.threshold:.{digits}f} "
            f"({name} = {v.value:.{digits}f} < {v.threshold:.{digits}f}, {interval}, "
            f"{v.n_cases} cases)"
        )
    return f"{name} gate {v.verdict}: {bound} {observed:.{digits}f} {op} {required} {numbers}"


def _drop_line(name: str, v: GateVerdict) -> str:
    assert v.ci_low is not None and v.ci_high is not None and v.value is not None
    paired = "widened paired CI" if v.method == METHOD_WIDENED else "paired CI"
    change = (
        f"Δ{name} {v.value:+.3f} against {v.base}, {paired} [{v.ci_low:+.3f}, "
        f"{v.ci_high:+.3f}] over {v.n_cases} matched cases"
    )
    allowed = f"-{v.threshold:.3f}"
    if v.verdict == PASSED:
        return f"{name} regression gate PASSED: no drop beyond {allowed} ({change})"
    if v.verdict == FAILED:
        return f"{name} regression gate FAILED: it dropped beyond {allowed} ({change})"
    return (
        f"{name} regression gate UNDECIDED (fails): the CI straddles {allowed}; a drop "
        f"that large is neither shown nor ruled out ({change})"
    )


def _per_case_line(v: GateVerdict) -> str:
    assert v.value is not None
    what = (
        f"pass rate >= {v.threshold:.0%}"
        if v.uses == USES_CASE_RATE
        else f"pass^{v.k} >= {v.threshold:.3f}"
    )
    if v.verdict == PASSED:
        return f"per-case gate PASSED: all {v.n_cases} cases reach {what} (weakest {v.value:.3f})"
    return f"per-case gate FAILED: {v.reason} {what} (weakest {v.value:.3f})"


def _digits_to_show(observed: float, threshold: float) -> int:
    """3 decimals, or as many more as it takes for the printed comparison to read true."""
    for digits in range(3, 10):
        if observed == threshold or f"{observed:.{digits}f}" != f"{threshold:.{digits}f}":
            return digits
    return 10


def plan_line(plan: DecidePlan) -> str:
    """What more trials would do for an UNDECIDED rule, in one sentence."""
    who = (
        f"each of the {plan.cases} lottery case{'s' if plan.cases != 1 else ''}"
        if plan.lottery
        else f"each of the {plan.cases} cases"
    )
    if plan.extra is None:
        return (
            f"more trials alone would not decide it: with up to {plan.tried} more on {who}, "
            f"{plan.decided:.0%} of simulated runs decide; the interval's width comes from "
            "the number of cases (relidash plan sizes a design with more cases)"
        )
    return (
        f"about {plan.extra} more trials on {who} ({plan.extra * plan.cases} in all) "
        f"would decide it in {plan.decided:.0%} of simulated runs"
    )


def rule_line(result: RuleResult) -> str:
    """verdict_line, prefixed by the rule's name and slice when it has them."""
    prefix = " ".join(
        part
        for part in (result.rule.name, f"[{result.rule.slice}]" if result.rule.slice else "")
        if part
    )
    line = verdict_line(result.verdict)
    return f"{prefix} {line}" if prefix else line


def rule_detail(result: RuleResult) -> str:
    """rule_line, and for an UNDECIDED rule what more trials would do."""
    line = rule_line(result)
    return f"{line}. {plan_line(result.plan).capitalize()}." if result.plan else line


def strict_line(report: GateReport) -> str:
    count = len(report.problems)
    return f"strict gate FAILED: {count} load problem{'s' if count != 1 else ''} in {report.file}"


def gate_table_shown(table: pd.DataFrame) -> pd.DataFrame:
    """The Gates page's table (analysis.gating.gate_table) with each verdict's sentence."""
    if table.empty:
        return pd.DataFrame(columns=list(GATE_TABLE_COLUMNS))
    detail = [verdict_line(verdict_of_row(row)) for row in table.to_dict("records")]
    return table.assign(detail=detail)[list(GATE_TABLE_COLUMNS)]


def _holding_heading(result: RuleResult) -> str:
    if result.rule.per_case:
        return "cases below it (lowest first, passes/runs):"
    if not result.holding:
        return (
            f"no case is below 1.000 on {result.rule.metric_name}: the bound is held down by "
            f"the number of cases ({result.verdict.n_cases}) alone"
        )
    return f"cases holding it down (lowest per-case {result.rule.metric_name} first, passes/runs):"


def _case_text(case: HoldingCase) -> str:
    return one_line(case.input) or visible(case.case_id or f"case {case.case_idx}")


def render_text(report: GateReport, limit: int = HOLDING_SHOWN) -> str:
    """One line per rule; under each failure, the cases that hold its metric down."""
    out = [
        f"relidash gate: suite {visible(report.suite)}, release {visible(report.release)} "
        f"({visible(report.file)}; "
        f"{policy_note(report.count_agent_errors)})"
    ]
    for result in report.results:
        out.append(visible(rule_line(result)))  # a rule's name and slice come from files
        if result.plan is not None:
            out.append(f"  {plan_line(result.plan)}")
        if result.verdict.verdict not in (FAILED, UNDECIDED) or result.rule.uses == USES_MAX_DROP:
            continue
        out.append(f"  {_holding_heading(result)}")
        for case in result.holding[:limit]:
            out.append(
                f"    {case.passes}/{case.runs}  {_measure(result.rule)} {case.value:.3f}  "
                f"{_case_text(case)}"
            )
        if len(result.holding) > limit:
            out.append(f"    … and {len(result.holding) - limit} more")
    if report.strict_failed:
        out.append(visible(strict_line(report)))
        out.extend(f"  {visible(scope)}: {visible(reason)}" for scope, reason in report.problems)
    total = len(report.results) + int(report.strict)
    if report.passed:
        out.append(f"gate PASSED: {total} of {total} checks passed")
    else:
        out.append(f"gate FAILED: {report.failures} of {total} checks failed")
    return "\n".join(out) + "\n"


_MD_SPECIAL: Final = re.compile(r"([\\`*_\[\]|~])")


def _md(text: str, width: int = 120) -> str:
    """Text made inert in Markdown (also in a table cell): HTML and Markdown syntax escaped."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(one_line(text, width), quote=False))


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


_ICON: Final = {PASSED: "✅", FAILED: "❌", UNDECIDED: "❔", UNKNOWN: "⚠️"}


def render_markdown(report: GateReport, limit: int = HOLDING_SHOWN) -> str:
    """A GitHub-flavoured Markdown summary for `$GITHUB_STEP_SUMMARY`."""
    status = "PASSED" if report.passed else "FAILED"
    out = [
        f"## {'✅' if report.passed else '❌'} relidash gate {status}: "
        f"{_md(report.suite)} {_md(report.release)}",
        "",
        f"Report {_md(report.file)}; {policy_note(report.count_agent_errors)}. "
        "95% CIs: cluster bootstrap over cases (Wilson when every case has one value).",
        "",
        "| Verdict | Rule | Slice | Observed | Required | Estimate | 95% CI | Cases |",
        "|---|---|---|---:|---:|---:|---|---:|",
    ]
    for r in report.results:
        v = r.verdict
        observed, required = _observed_required(r)
        ci = "—" if v.ci_low is None else f"[{v.ci_low:.3f}, {v.ci_high:.3f}]"
        name = f"{_md(r.rule.name)}: " if r.rule.name else ""
        out.append(
            f"| {_ICON[v.verdict]} {v.verdict} | {name}{_md(_rule_cell(r))} "
            f"| {_md(r.rule.scope)} | {observed} | {required} "
            f"| {_fmt(v.value)} | {ci} | {v.n_cases} |"
        )
    if report.strict:
        verdict = FAILED if report.strict_failed else PASSED
        out.append(
            f"| {_ICON[verdict]} {verdict} | strict: no load problems | {_md(report.file)} "
            f"| {len(report.problems)} problems | 0 | | | |"
        )
    details = [r for r in report.results if not r.passed]
    if details or report.strict_failed:
        out += ["", "### Failures", ""]
    for r in details:
        out += [f"{_ICON[r.verdict.verdict]} **{_md(rule_line(r), 1000)}**", ""]
        if r.plan is not None:
            out += [_md(plan_line(r.plan), 1000), ""]
        if r.verdict.verdict not in (FAILED, UNDECIDED) or r.rule.uses == USES_MAX_DROP:
            continue
        if not r.holding:
            out += [_md(_holding_heading(r), 1000), ""]
            continue
        out += [
            f"<details><summary>{len(r.holding)} "
            f"{'case holds' if len(r.holding) == 1 else 'cases hold'} "
            f"{_measure(r.rule)} down (lowest first)</summary>",
            "",
            f"| Passes/runs | {_measure(r.rule)} | Case |",
            "|---:|---:|---|",
        ]
        out += [
            f"| {case.passes}/{case.runs} | {case.value:.3f} | {_md(_case_text(case))} |"
            for case in r.holding[:limit]
        ]
        if len(r.holding) > limit:
            out.append(f"| | | … and {len(r.holding) - limit} more |")
        out += ["", "</details>", ""]
    if report.strict_failed:
        out += [f"{_ICON[FAILED]} **{_md(strict_line(report), 1000)}**", ""]
        out += [f"- {_md(scope)}: {_md(reason, 1000)}" for scope, reason in report.problems]
    return "\n".join(out) + "\n"


def _measure(rule: GateRule) -> str:
    """What a rule's per-case values are: a pass rate, or the case's own metric at k."""
    return "pass rate" if rule.uses == USES_CASE_RATE else rule.metric_name


def _rule_cell(r: RuleResult) -> str:
    """What the Markdown table's Rule column says a rule measures."""
    if r.rule.uses == USES_MAX_DROP:
        return f"Δ{r.rule.metric_name} against {r.verdict.base or 'the release before'}"
    if r.rule.uses == USES_CASE_RATE:
        return "each case's pass rate"
    if r.rule.per_case:
        return f"each case's {r.rule.metric_name}"
    return f"{r.rule.metric_name} {'CI low' if r.rule.uses == USES_CI_LOW else 'value'}"


def _observed_required(r: RuleResult) -> tuple[str, str]:
    """The Markdown table's Observed and Required cells for one rule."""
    v = r.verdict
    if r.rule.uses == USES_MAX_DROP:
        return _fmt(v.ci_low), f"≥ -{r.rule.threshold:.3f}"
    if r.rule.per_case:
        return _fmt(v.value), f"≥ {r.rule.threshold:.3f} each"
    observed = v.ci_low if r.rule.uses == USES_CI_LOW else v.value
    return _fmt(observed), f"≥ {r.rule.threshold:.3f}"


def _case_testcases(r: RuleResult, classname: str, rule_name: str) -> list[ET.Element]:
    """A per-case rule as one test case per evaluated case, failing exactly those below."""
    elements = []
    what = _measure(r.rule)
    for check in r.cases:
        case = check.case
        label = f"{rule_name} / {case.case_id or _case_text(case)}"
        element = ET.Element("testcase", {"classname": classname, "name": label, "time": "0"})
        line = (
            f"{case.passes}/{case.runs}  {what} {case.value:.3f} "
            f"{'>=' if check.passed else '<'} {r.rule.threshold:.3f}  {_case_text(case)}"
        )
        if check.passed:
            ET.SubElement(element, "system-out").text = line
        else:
            ET.SubElement(element, "failure", {"message": line, "type": FAILED}).text = line
        elements.append(element)
    return elements


def render_junit(report: GateReport) -> str:
    """JUnit XML: one test suite, one test case per rule (plus one for --strict)."""
    cases: list[ET.Element] = []
    failures = 0
    seen: dict[str, int] = {}
    classname = f"relidash.gate.{report.suite}"
    for r in report.results:
        label = r.rule.label()
        seen[label] = seen.get(label, 0) + 1
        name = label if seen[label] == 1 else f"{label} #{seen[label]}"
        if r.cases:
            per_case = _case_testcases(r, classname, name)
            failures += sum(e.find("failure") is not None for e in per_case)
            cases.extend(per_case)
            continue
        case = ET.Element("testcase", {"classname": classname, "name": name, "time": "0"})
        if not r.passed:
            failures += 1
            failure = ET.SubElement(
                case, "failure", {"message": rule_line(r), "type": r.verdict.verdict}
            )
            body = [rule_line(r)]
            if r.plan is not None:
                body.append(plan_line(r.plan))
            if r.verdict.verdict in (FAILED, UNDECIDED) and r.rule.uses != USES_MAX_DROP:
                body.append(_holding_heading(r))
                body += [
                    f"{h.passes}/{h.runs}  {_measure(r.rule)} {h.value:.3f}  {_case_text(h)}"
                    for h in r.holding
                ]
            failure.text = "\n".join(body)
        else:
            ET.SubElement(case, "system-out").text = rule_line(r)
        cases.append(case)
    if report.strict:
        case = ET.Element(
            "testcase", {"classname": classname, "name": "strict: no load problems", "time": "0"}
        )
        if report.strict_failed:
            failures += 1
            failure = ET.SubElement(
                case, "failure", {"message": strict_line(report), "type": "STRICT"}
            )
            failure.text = "\n".join(f"{scope}: {reason}" for scope, reason in report.problems)
        cases.append(case)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": "0"}
    root = ET.Element("testsuites", {"name": "relidash gate", **counts})
    suite = ET.SubElement(
        root,
        "testsuite",
        {"name": f"relidash gate {report.suite} {report.release}", **counts, "skipped": "0"},
    )
    properties = ET.SubElement(suite, "properties")
    for key, value in (
        ("suite", report.suite),
        ("release", report.release),
        ("file", report.file),
        ("policy", policy_note(report.count_agent_errors)),
    ):
        ET.SubElement(properties, "property", {"name": key, "value": value})
    suite.extend(cases)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
