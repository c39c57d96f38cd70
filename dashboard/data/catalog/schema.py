"""The subset of a multivon-eval report that relidash reads, as DuckDB column types.

Every version 0.4 → 0.20 fits these types: a field a version does not write reads as
NULL. Heavy fields (trial execution and provider evidence, suite locks) are left out so
the JSON reader skips them instead of materialising them. Numbers that must be whole
(runs, pass_count) are read as DOUBLE so that a fractional value is reported, not rounded.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

EVALUATOR = "STRUCT(name VARCHAR, score DOUBLE, passed BOOLEAN, reason VARCHAR, metadata JSON)"
TRIAL = (
    "STRUCT(run_index DOUBLE, attempt DOUBLE, recorded_at VARCHAR, output VARCHAR,"
    " status VARCHAR, model_error VARCHAR, judge_error VARCHAR, evaluator_error VARCHAR,"
    f" latency_ms DOUBLE, evaluators {EVALUATOR}[])"
)
# What a load reads of a trial: its status (the case's trial counts) and time (the report's
# earliest), and its position, whose number type a report must keep (multivon-eval refuses
# a trial without a whole run_index and attempt). The rest of a trial, transcript and
# errors, is read back from the file for the one case shown (dashboard/data/load/transcripts.py).
TRIAL_OUTCOME = "STRUCT(run_index DOUBLE, attempt DOUBLE, status VARCHAR, recorded_at VARCHAR)"
# What a load reads of a case's grader: its verdict and metadata, for the upstream status
# rule (a case whose every grader skipped is skipped) and the format's version, and its
# score, whose number type a report must keep (multivon-eval's schema wants a number).
GRADER_VERDICT = "STRUCT(score DOUBLE, passed BOOLEAN, metadata JSON)"
# A case's output and graders' verdicts are text the pages show for one case at a time:
# read back from the file (CASE_TEXT_COLUMNS), not kept.
CASE = (
    "STRUCT(input VARCHAR, case_id VARCHAR, status VARCHAR,"
    " model_error VARCHAR, judge_error VARCHAR, evaluator_error VARCHAR, skipped BOOLEAN,"
    " passed BOOLEAN, score DOUBLE, run_pass_rate DOUBLE, runs DOUBLE, pass_count DOUBLE,"
    f" tags VARCHAR[], evaluators {GRADER_VERDICT}[], trials {TRIAL_OUTCOME}[])"
)
REPORT_COLUMNS: dict[str, str] = {
    "schema": "VARCHAR",
    "suite": "VARCHAR",
    "model": "VARCHAR",
    "summary": "JSON",
    "execution": "JSON",
    "provider_evidence": "JSON",
    "cases": f"{CASE}[]",
}


def json_structure(columns: dict[str, str]) -> str:
    """`read_json` column types as `json_transform_strict`'s structure argument.

    Derived from the one definition above, so both readers always take the same fields
    with the same types.
    """
    return json.dumps({name: _structure_of(kind) for name, kind in columns.items()})


def _structure_of(kind: str) -> Any:
    kind = kind.strip()
    if kind.endswith("[]"):
        return [_structure_of(kind[:-2])]
    if kind.startswith("STRUCT(") and kind.endswith(")"):
        return {name: _structure_of(inner) for name, inner in _fields(kind[7:-1])}
    return kind


def _fields(body: str) -> Iterator[tuple[str, str]]:
    """`name TYPE, name TYPE` at the top nesting level of a STRUCT(...) body."""
    depth, start = 0, 0
    for i, char in enumerate(body + ","):
        if char in "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            name, _, kind = body[start:i].strip().partition(" ")
            yield name.strip('"'), kind
            start = i + 1


REPORT_STRUCTURE = json_structure(REPORT_COLUMNS)

# Only the trials, for reading one case's transcripts back from its file.
TRIALS_ONLY_COLUMNS: dict[str, str] = {"cases": f"STRUCT(trials {TRIAL}[])[]"}
# Only the last run's output and the graders, for one case of a report without trials.
CASE_TEXT_COLUMNS: dict[str, str] = {"cases": f"STRUCT(output VARCHAR, evaluators {EVALUATOR}[])[]"}

# Tables holding rows keyed by report_id, cleared when a report file changes or goes.
REPORT_TABLES = (
    "report_records", "lottery", "metrics", "trials", "case_tags", "cases", "reports",
)  # fmt: skip
