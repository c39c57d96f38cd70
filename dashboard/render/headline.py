"""The first page's headline as text: the verdict's sentence, the big numbers with their
intervals and changes, and the line saying which release the change is against.

Formatting only: the verdict and every number come from analysis/headline.py. Must not:
decide a verdict, import Streamlit, print, or choose a base.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from dashboard.analysis.deltas import MetricDelta
from dashboard.analysis.gating import FAILED, PASSED, UNDECIDED
from dashboard.analysis.headline import Headline
from dashboard.analysis.suite_k import SuiteK, policy_source
from dashboard.render.formatting import pct, pct_ci, points
from dashboard.render.gate_report import rule_line

NO_CHANGE: Final = 0.0005  # under 0.05 points, the change shows without an arrow
UP: Final = "up"
DOWN: Final = "down"
FLAT: Final = "flat"


@dataclass(frozen=True)
class Number:
    """One big number: st.metric's label, value, change and the line under it."""

    label: str
    value: str
    change: str | None  # "+5.4 pts" (its sign gives the arrow), None without a base
    direction: str | None  # UP | DOWN | FLAT, None without a base
    significant: bool  # the change's 95% interval excludes zero
    detail: str


def verdict_kind(headline: Headline) -> str:
    """How loud the verdict is: success (PASSED), error (FAILED), info (UNDECIDED: the
    evidence does not decide either way), warning otherwise (UNKNOWN, no verdict)."""
    kinds = {PASSED: "success", FAILED: "error", UNDECIDED: "info"}
    return kinds.get(headline.verdict or "", "warning")


def verdict_text(headline: Headline) -> str:
    """`FAILED · v1.11.0, the latest of 7 releases` (Markdown: the caller escapes names)."""
    verdict = headline.verdict or "NO VERDICT"
    return f"{verdict} · {headline.release}, the latest of {headline.releases} releases"


def verdict_reasons(headline: Headline) -> list[str]:
    """The rules' sentences under the verdict, or why there is no verdict."""
    if headline.gate is None:
        return [f"The suite's policy cannot be used: {headline.policy_error}"]
    lines = [rule_line(result) for result in headline.gate.results]
    where = policy_source(headline.policy)
    return [f"Policy: {where}", *lines]


def _change(delta: MetricDelta | None) -> tuple[str | None, str | None, bool]:
    if delta is None or delta.delta is None:
        return None, None, False
    d = delta.delta
    direction = FLAT if abs(d.delta) < NO_CHANGE else (UP if d.delta > 0 else DOWN)
    return f"{points(d.delta)} pts", direction, d.ci_low > 0 or d.ci_high < 0


def _interval(delta: MetricDelta | None) -> str:
    if delta is None or delta.delta is None:
        return ""
    d = delta.delta
    mark = " ◆" if d.ci_low > 0 or d.ci_high < 0 else ""
    return f" · Δ [{points(d.ci_low)}, {points(d.ci_high)}]{mark} over {d.n_pairs} cases"


def numbers(headline: Headline) -> list[Number]:
    """pass^k and pass@1 of the latest release with their changes against the base."""
    row, k = headline.row, headline.k
    out = []
    for label, column, delta in (
        (f"pass^{k}", "pass_hat_k", headline.pass_hat_k),
        ("pass@1", "pass_at_1", headline.pass_at_1),
    ):
        change, direction, significant = _change(delta)
        value = row[column]
        ci = pct_ci(value, row[f"{column}_ci_low"], row[f"{column}_ci_high"])
        detail = (
            f"95% CI {ci.split(' ', 1)[1]}" if " " in ci else str(row[f"{column}_unknown"] or ci)
        )
        out.append(
            Number(label, pct(value), change, direction, significant, detail + _interval(delta))
        )
    return out


def base_line(headline: Headline, chosen: SuiteK) -> str:
    """Which release the changes are against, and why k is what it is."""
    k = headline.k
    why_k = (
        f"k = {k}: {chosen.reason}"
        if k == chosen.k
        else f"k = {k} as chosen (the suite's k is {chosen.k}: {chosen.reason})"
    )
    if headline.base is None:
        against = (
            "the suite's first release: nothing to compare with"
            if not headline.passed_over
            else f"no earlier release has Δpass^{k} computable at k = {k}"
        )
    else:
        skipped = (
            f"; {', '.join(headline.passed_over)} passed over (Δ not computable at k = {k})"
            if headline.passed_over
            else ""
        )
        against = (
            f"Δ against {headline.base}, the latest earlier release with Δ computable at "
            f"k = {k}{skipped}; paired over the cases both evaluated, the arrow coloured "
            "and ◆ when the interval excludes zero"
        )
    return f"{why_k} · {against}"
