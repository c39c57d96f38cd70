"""A trial plan (analysis/planning.py) as text: the designs tried and the recommendation,
for the terminal and the Calculator page.

Formatting only: must not simulate, decide, print, or import Streamlit.
"""

from __future__ import annotations

import pandas as pd

from dashboard.analysis.planning import POWER, TrialPlan
from dashboard.render.formatting import one_line


def goal_text(plan: TrialPlan) -> str:
    if plan.goal == "half-width":
        return (
            f"a {plan.metric.replace('k', str(plan.k))} 95% interval no wider than "
            f"±{plan.target:.3f} in {POWER:.0%} of runs"
        )
    return (
        f"{POWER:.0%} power to show a drop of {plan.target:.3f} in "
        f"{plan.metric.replace('k', str(plan.k))} (paired 95% interval below zero)"
    )


def recommendation(plan: TrialPlan) -> str:
    """The answer in one sentence."""
    best = plan.recommended
    now = f"{plan.cases_now} cases × {plan.trials_now} trials"
    if best is None:
        largest = plan.designs[-1] if plan.designs else None
        reach = (
            f"; the largest, {largest.cases} cases × {largest.trials} trials, reaches "
            f"{_achieved(plan, largest.achieved)}"
            if largest is not None
            else ""
        )
        return f"No design tried reaches {goal_text(plan)}{reach}. Now: {now}."
    return (
        f"{best.cases} cases × {best.trials} trials per case ({best.total} trials in all) "
        f"reaches {goal_text(plan)} ({_achieved(plan, best.achieved)}). Now: {now}."
    )


def _achieved(plan: TrialPlan, value: float) -> str:
    return f"±{value:.3f}" if plan.goal == "half-width" else f"power {value:.0%}"


def plan_text(plan: TrialPlan) -> str:
    """The plan for a terminal: the goal, each design tried, the recommendation."""
    head = f"relidash plan: suite {one_line(plan.suite)}, release {one_line(plan.release)}"
    lines = [head, f"goal: {goal_text(plan)}", "", "cases  trials  in all  reached"]
    for d in plan.designs:
        mark = "yes" if d.reached else "no"
        lines.append(
            f"{d.cases:>5}  {d.trials:>6}  {d.total:>6}  {_achieved(plan, d.achieved)} {mark}"
        )
    lines += ["", recommendation(plan)]
    return "\n".join(lines) + "\n"


def plan_table(plan: TrialPlan) -> pd.DataFrame:
    """The designs tried, cheapest first, as the Calculator page shows them."""
    return pd.DataFrame(
        [
            {
                "cases": d.cases,
                "trials per case": d.trials,
                "trials in all": d.total,
                "reached": _achieved(plan, d.achieved),
                "goal met": "yes" if d.reached else "no",
            }
            for d in plan.designs
        ],
        columns=["cases", "trials per case", "trials in all", "reached", "goal met"],
    )
