"""The graders of a case's trials as rows, one per grader per trial, each with its
verdict: passed, failed, or skipped.

multivon-eval marks a grader that did not judge (nothing declared for it to check, or a
model error before it ran) with `metadata.skipped`, and writes `passed: false` beside
it; older formats say so only in the reason (`[skipped ...]`). Such a grader is
skipped, not failed: it is left out of the case's verdict.

Must not: import Streamlit, read files, or format numbers for display.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pandas as pd

COLUMNS = ["run", "attempt", "grader", "score", "verdict", "reason"]


def grader_verdict(grader: Mapping[str, Any]) -> str:
    """`skipped`, `passed` or `failed` (or `—` when the grader says neither)."""
    metadata = grader.get("metadata") or {}
    reason = str(grader.get("reason") or "")
    if (isinstance(metadata, Mapping) and metadata.get("skipped")) or reason.startswith("[skipped"):
        return "skipped"
    passed = grader.get("passed")
    return "—" if passed is None else ("passed" if passed else "failed")


def _row(grader: Mapping[str, Any]) -> dict[str, Any]:
    verdict = grader_verdict(grader)
    return {
        "grader": grader.get("name"),
        # a skipped grader's 0 is a placeholder, not a score
        "score": None if verdict == "skipped" else grader.get("score"),
        "verdict": verdict,
        "reason": grader.get("reason"),
    }


def case_graders(evaluators: str | None) -> pd.DataFrame:
    """A case's graders as one report keeps them (its `evaluators` JSON, no trials)."""
    rows = [_row(e) for e in json.loads(evaluators or "[]") or []]
    return pd.DataFrame(rows, columns=COLUMNS[2:])


def grader_rows(trials: pd.DataFrame) -> pd.DataFrame:
    """Every grader of every trial (`trials`: run_index, attempt, evaluators as JSON)."""
    rows = []
    for t in trials.itertuples(index=False):
        for e in json.loads(t.evaluators or "[]") or []:
            rows.append({"run": t.run_index, "attempt": t.attempt, **_row(e)})
    return pd.DataFrame(rows, columns=COLUMNS)
