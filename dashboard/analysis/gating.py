"""Release gates for CI: rules, policy files, verdicts and their renderings.

A gate is a list of rules ("pass^4 on risk_tier:safety must be 1.0", "pass^4 overall
must keep its CI lower bound above 0.5"), each judged on one release of one suite by
`views.gate_verdict`, the function behind the dashboard's Gates page, so a verdict in
CI is the verdict on the page. UNKNOWN (k beyond the recorded runs, a slice with no
evaluated cases) fails: an ungateable claim is never a pass. With `strict`, any load
problem of the gated release's report file fails the gate too.

Renders the result three ways: plain lines for a terminal, GitHub-flavoured Markdown
for `$GITHUB_STEP_SUMMARY`, and JUnit XML (one test case per rule).

Must not: import Streamlit, hold SQL text, print, or exit; the CLI does the I/O.
"""

from __future__ import annotations

import dataclasses
import html
import re
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import duckdb
import numpy as np
import pandas as pd

from dashboard import service, views
from dashboard.data.queries import run_query
from dashboard.stats import METRIC_PASS_HAT_K, METRICS, pass_at_k, pass_hat_k
from dashboard.terminal import one_line

PASSED: Final = "PASSED"
FAILED: Final = "FAILED"
UNKNOWN: Final = "UNKNOWN"
USES_CI_LOW: Final = "ci_low"
USES_VALUE: Final = "value"
LATEST: Final = "latest"
HOLDING_SHOWN: Final = 10
RULE_KEYS: Final = ("name", "metric", "k", "min_ci_low", "min_value", "slice")


class PolicyError(ValueError):
    """A policy file or rule that cannot be used; the message names the file and the key."""


class UnknownName(LookupError):
    """A suite, release or slice that the catalog does not hold."""


# ---- rules -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateRule:
    """One claim about one release: metric at k reaches a threshold, on a slice or all cases."""

    metric: str  # "pass^k" | "pass@k"
    k: int
    threshold: float
    uses: str  # "ci_low" (the CI lower bound, as assert_pass_hat_k) | "value" (point estimate)
    slice: str | None = None  # a case tag, `dim:value` or plain; None for every case
    name: str = ""

    @property
    def metric_name(self) -> str:
        return self.metric.replace("k", str(self.k))

    @property
    def scope(self) -> str:
        return self.slice or "all cases"

    def label(self) -> str:
        """A short, stable description: the JUnit test name and the Markdown row."""
        bound = "CI lower bound" if self.uses == USES_CI_LOW else "value"
        text = f"{self.metric_name} {bound} >= {self.threshold:.3f} on {self.scope}"
        return f"{self.name}: {text}" if self.name else text


def make_rule(
    *,
    metric: object = METRIC_PASS_HAT_K,
    k: object,
    min_ci_low: object = None,
    min_value: object = None,
    slice: object = None,
    name: object = "",
) -> GateRule:
    """A validated rule; ValueError names the offending field (the CLI's flags, a policy's keys)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    if (min_ci_low is None) == (min_value is None):
        raise ValueError("give exactly one threshold: min_ci_low (CI lower bound) or min_value")
    key, threshold = (
        ("min_ci_low", min_ci_low) if min_ci_low is not None else ("min_value", min_value)
    )
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValueError(f"{key} must be a number in [0, 1], got {threshold!r}")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"{key} must be in [0, 1], got {threshold!r}")
    if slice is not None and (not isinstance(slice, str) or not slice.strip()):
        raise ValueError(f"slice must be a case tag such as 'risk_tier:safety', got {slice!r}")
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    return GateRule(
        metric=str(metric),
        k=k,
        threshold=float(threshold),
        uses=USES_CI_LOW if key == "min_ci_low" else USES_VALUE,
        slice=slice,
        name=name,
    )


def parse_policy(text: str, source: str) -> list[GateRule]:
    """The rules of a policy document; `source` names the file in every error.

    The format is an array of `[[rule]]` tables with the keys of RULE_KEYS:

        [[rule]]
        name = "safety tier"          # optional
        slice = "risk_tier:safety"    # optional; every case when absent
        metric = "pass^k"             # optional; pass^k (default) or pass@k
        k = 4
        min_value = 1.0               # or min_ci_low = 0.95, exactly one of the two
    """
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{source}: not valid TOML: {exc}") from exc
    extra = sorted(set(document) - {"rule"})
    if extra:
        raise PolicyError(
            f"{source}: unknown top-level key {extra[0]!r}; a policy holds [[rule]] tables only"
        )
    tables = document.get("rule")
    if not isinstance(tables, list) or not tables:
        raise PolicyError(f"{source}: defines no rules; add at least one [[rule]] table")
    rules = []
    for number, table in enumerate(tables, start=1):
        where = f"{source}: rule {number}"
        if not isinstance(table, dict):
            raise PolicyError(f"{where}: must be a [[rule]] table")
        if isinstance(table.get("name"), str) and table["name"]:
            where += f" ({table['name']})"
        unknown = sorted(set(table) - set(RULE_KEYS))
        if unknown:
            raise PolicyError(
                f"{where}: unknown key {unknown[0]!r}; a rule's keys are {', '.join(RULE_KEYS)}"
            )
        if "k" not in table:
            raise PolicyError(f"{where}: missing key 'k'")
        try:
            rules.append(make_rule(**table))
        except ValueError as exc:
            raise PolicyError(f"{where}: {exc}") from exc
    return rules


def read_policy(path: Path) -> list[GateRule]:
    """The rules of a policy file; PolicyError when it is missing, unreadable or invalid."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PolicyError(f"{path}: no such policy file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: cannot be read ({exc})") from exc
    return parse_policy(text, str(path))


# ---- evaluation --------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldingCase:
    """A case below 1.0 on the rule's per-case metric: what keeps the suite's value down."""

    case_idx: int
    case_id: str | None
    input: str
    passes: int
    runs: int
    value: float  # the case's own pass^k (or pass@k) at the rule's k


@dataclass(frozen=True)
class RuleResult:
    rule: GateRule
    verdict: views.GateVerdict
    holding: tuple[HoldingCase, ...] = ()

    @property
    def passed(self) -> bool:
        return self.verdict.verdict == PASSED

    def line(self) -> str:
        """views.GateVerdict.line(), prefixed by the rule's name and slice when it has them."""
        prefix = " ".join(
            part
            for part in (self.rule.name, f"[{self.rule.slice}]" if self.rule.slice else "")
            if part
        )
        return f"{prefix} {self.verdict.line()}" if prefix else self.verdict.line()


@dataclass(frozen=True)
class GateReport:
    suite: str
    release: str
    file: str
    count_agent_errors: bool
    strict: bool
    results: tuple[RuleResult, ...]
    problems: tuple[tuple[str, str], ...] = ()  # (scope, reason) of the gated file

    @property
    def strict_failed(self) -> bool:
        return self.strict and bool(self.problems)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.results) and not self.strict_failed

    @property
    def failures(self) -> int:
        return sum(not r.passed for r in self.results) + int(self.strict_failed)

    def strict_line(self) -> str:
        count = len(self.problems)
        return f"strict gate FAILED: {count} load problem{'s' if count != 1 else ''} in {self.file}"


def find_suite_releases(overview: pd.DataFrame, suite: str) -> pd.DataFrame:
    """The releases of a suite (views.suite_releases); UnknownName when it has none."""
    releases = views.suite_releases(overview, suite)
    if releases.empty:
        known = ", ".join(views.suite_names(overview)) if not overview.empty else "none loaded"
        raise UnknownName(f"no suite named {suite!r} (suites: {known})")
    return releases


def find_release(releases: pd.DataFrame, wanted: str) -> pd.Series:
    """The report row shown for a release: by exact name, or the newest for 'latest'."""
    exact = releases[releases["release"] == wanted]
    if not exact.empty:
        return exact.iloc[-1]
    if wanted == LATEST:
        return releases.iloc[-1]
    names = ", ".join(repr(str(r)) for r in releases["release"])
    suite = releases["suite"].iloc[0]
    raise UnknownName(f"suite {suite!r} has no release {wanted!r} (releases: {names}, or latest)")


def suite_tags(cases: pd.DataFrame) -> set[str]:
    return {str(t) for tags in cases["tags"] for t in (tags if tags is not None else [])}


def check_slices(cases: pd.DataFrame, suite: str, slices: Iterable[str | None]) -> None:
    """UnknownName for a slice tag that no case of the suite carries in any release (a typo)."""
    known = suite_tags(cases)
    for tag in slices:
        if tag and tag not in known:
            shown = ", ".join(sorted(known)) or "none"
            raise UnknownName(f"no case of suite {suite!r} carries the tag {tag!r} (tags: {shown})")


def holding_cases(cases: pd.DataFrame, metric: str, k: int) -> tuple[HoldingCase, ...]:
    """Evaluated cases whose own metric at k is below 1, lowest first.

    Ties go to the lower pass rate, then file order. Every case must have k <= n
    (the caller only asks when the suite-level value is known).
    """
    counted = cases[cases["n"].notna()]
    if counted.empty:
        return ()
    n = counted["n"].to_numpy(dtype=np.int64)
    c = counted["c"].to_numpy(dtype=np.int64)
    estimator = pass_hat_k if metric == METRIC_PASS_HAT_K else pass_at_k
    values = np.atleast_1d(estimator(n, c, k))
    below = np.flatnonzero(values < 1.0)
    order = below[np.lexsort((below, c[below] / n[below], values[below]))]
    rows = counted.iloc[order]
    return tuple(
        HoldingCase(
            case_idx=int(row.case_idx),
            case_id=row.case_id if isinstance(row.case_id, str) and row.case_id else None,
            input=row.input if isinstance(row.input, str) else "",
            passes=int(row.c),
            runs=int(row.n),
            value=float(value),
        )
        for row, value in zip(rows.itertuples(index=False), values[order], strict=True)
    )


def _no_cases_reason(cases: pd.DataFrame, rule: GateRule, release: str) -> str:
    """Why a slice has nothing to estimate from, in the words a CI log reader needs."""
    if not rule.slice:
        return f"UNKNOWN — release {release} has no evaluated cases to estimate from."
    members = cases[views.in_slice(cases, rule.slice)]
    if members.empty:
        return f"UNKNOWN — no case of release {release} carries the tag {rule.slice}."
    statuses = ", ".join(
        f"{count} {status}" for status, count in members["status"].value_counts().items()
    )
    return (
        f"UNKNOWN — slice {rule.slice} has no evaluated cases in release {release} "
        f"(its {len(members)} cases: {statuses})."
    )


def evaluate_rule(cases: pd.DataFrame, rule: GateRule, release: str = "") -> RuleResult:
    """One rule on one report's cases (suite_cases rows, in file order)."""
    members = cases[views.in_slice(cases, rule.slice)]
    n, c = service.evaluated_arrays(members)
    verdict = views.gate_verdict(n, c, rule.k, rule.threshold, rule.metric, rule.uses)
    if verdict.verdict == UNKNOWN:
        if verdict.n_cases == 0:
            verdict = dataclasses.replace(verdict, reason=_no_cases_reason(cases, rule, release))
        return RuleResult(rule, verdict)
    holding = holding_cases(members, rule.metric, rule.k) if verdict.verdict == FAILED else ()
    return RuleResult(rule, verdict, holding)


def evaluate_rules(
    cases: pd.DataFrame, rules: Sequence[GateRule], release: str = ""
) -> tuple[RuleResult, ...]:
    return tuple(evaluate_rule(cases, rule, release) for rule in rules)


def run_gate(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    release: str,
    rules: Sequence[GateRule],
    *,
    count_agent_errors: bool = False,
    strict: bool = False,
) -> GateReport:
    """Judge `rules` on one release of a suite; UnknownName for a bad suite, release or slice."""
    releases = find_suite_releases(service.report_overview(con), suite)
    row = find_release(releases, release)
    cases = run_query(con, "suite_cases", suite=suite, count_agent_errors=count_agent_errors)
    check_slices(cases, suite, (rule.slice for rule in rules))
    this = cases[cases["report_id"] == row["report_id"]]
    problems = service.load_problems(con)
    own = problems[problems["file"] == row["file"]]
    return GateReport(
        suite=suite,
        release=str(row["release"]),
        file=str(row["file"]),
        count_agent_errors=count_agent_errors,
        strict=strict,
        results=evaluate_rules(this, rules, str(row["release"])),
        problems=tuple((str(p.scope), str(p.reason)) for p in own.itertuples(index=False)),
    )


# ---- rendering ---------------------------------------------------------------------------


def _policy_note(count_agent_errors: bool) -> str:
    return "agent errors count as failures" if count_agent_errors else "agent errors excluded"


def _holding_heading(result: RuleResult) -> str:
    if not result.holding:
        return (
            f"no case is below 1.000 on {result.rule.metric_name}: the bound is held down by "
            f"the number of cases ({result.verdict.n_cases}) alone"
        )
    return f"cases holding it down (lowest per-case {result.rule.metric_name} first, passes/runs):"


def _case_text(case: HoldingCase) -> str:
    return one_line(case.input) or case.case_id or f"case {case.case_idx}"


def render_text(report: GateReport, limit: int = HOLDING_SHOWN) -> str:
    """One line per rule; under each failure, the cases that hold its metric down."""
    out = [
        f"relidash gate: suite {report.suite}, release {report.release} ({report.file}; "
        f"{_policy_note(report.count_agent_errors)})"
    ]
    for result in report.results:
        out.append(result.line())
        if result.verdict.verdict != FAILED:
            continue
        out.append(f"  {_holding_heading(result)}")
        for case in result.holding[:limit]:
            out.append(
                f"    {case.passes}/{case.runs}  {result.rule.metric_name} {case.value:.3f}  "
                f"{_case_text(case)}"
            )
        if len(result.holding) > limit:
            out.append(f"    … and {len(result.holding) - limit} more")
    if report.strict_failed:
        out.append(report.strict_line())
        out.extend(f"  {scope}: {reason}" for scope, reason in report.problems)
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


_ICON: Final = {PASSED: "✅", FAILED: "❌", UNKNOWN: "⚠️"}


def render_markdown(report: GateReport, limit: int = HOLDING_SHOWN) -> str:
    """A GitHub-flavoured Markdown summary for `$GITHUB_STEP_SUMMARY`."""
    status = "PASSED" if report.passed else "FAILED"
    out = [
        f"## {'✅' if report.passed else '❌'} relidash gate {status}: "
        f"{_md(report.suite)} {_md(report.release)}",
        "",
        f"Report {_md(report.file)}; {_policy_note(report.count_agent_errors)}. "
        "95% CIs: cluster bootstrap over cases (Wilson when every case has one value).",
        "",
        "| Verdict | Rule | Slice | Observed | Required | Estimate | 95% CI | Cases |",
        "|---|---|---|---:|---:|---:|---|---:|",
    ]
    for r in report.results:
        v = r.verdict
        observed = v.ci_low if r.rule.uses == USES_CI_LOW else v.value
        bound = "CI low" if r.rule.uses == USES_CI_LOW else "value"
        ci = "—" if v.ci_low is None else f"[{v.ci_low:.3f}, {v.ci_high:.3f}]"
        name = f"{_md(r.rule.name)}: " if r.rule.name else ""
        out.append(
            f"| {_ICON[v.verdict]} {v.verdict} | {name}{r.rule.metric_name} {bound} "
            f"| {_md(r.rule.scope)} | {_fmt(observed)} | ≥ {r.rule.threshold:.3f} "
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
        out += [f"{_ICON[r.verdict.verdict]} **{_md(r.line(), 1000)}**", ""]
        if r.verdict.verdict != FAILED:
            continue
        if not r.holding:
            out += [_md(_holding_heading(r), 1000), ""]
            continue
        out += [
            f"<details><summary>{len(r.holding)} "
            f"{'case holds' if len(r.holding) == 1 else 'cases hold'} "
            f"{r.rule.metric_name} down (lowest first)</summary>",
            "",
            f"| Passes/runs | {r.rule.metric_name} | Case |",
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
        out += [f"{_ICON[FAILED]} **{_md(report.strict_line(), 1000)}**", ""]
        out += [f"- {_md(scope)}: {_md(reason, 1000)}" for scope, reason in report.problems]
    return "\n".join(out) + "\n"


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
        case = ET.Element("testcase", {"classname": classname, "name": name, "time": "0"})
        if not r.passed:
            failures += 1
            failure = ET.SubElement(
                case, "failure", {"message": r.line(), "type": r.verdict.verdict}
            )
            body = [r.line()]
            if r.verdict.verdict == FAILED:
                body.append(_holding_heading(r))
                body += [
                    f"{h.passes}/{h.runs}  {r.rule.metric_name} {h.value:.3f}  {_case_text(h)}"
                    for h in r.holding
                ]
            failure.text = "\n".join(body)
        else:
            ET.SubElement(case, "system-out").text = r.line()
        cases.append(case)
    if report.strict:
        case = ET.Element(
            "testcase", {"classname": classname, "name": "strict: no load problems", "time": "0"}
        )
        if report.strict_failed:
            failures += 1
            failure = ET.SubElement(
                case, "failure", {"message": report.strict_line(), "type": "STRICT"}
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
        ("policy", _policy_note(report.count_agent_errors)),
    ):
        ET.SubElement(properties, "property", {"name": key, "value": value})
    suite.extend(cases)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
