"""One promptfoo eval as the rows of the catalog: one report per (prompt, provider) pair.

suite = the eval's description, the prompt's label and the provider's label (an eval of
one pair: the description alone; no description: the file's stem); release = the eval's
`release` tag (or the tag `[promptfoo] release` names), else its timestamp. A test is a
case; its repeats for the pair are its trials, in `testIdx` order. A row with
`failureReason` 2 is an errored trial (status `model_error`) that n leaves out
(`agent_errors_left_out`, a failed trial when agent errors count), as relidash does for
an Inspect sample's errored epochs; so per suite and release, the passed, failed and
errored trials are promptfoo's own testPassCount, testFailCount and testErrorCount.

Must not: touch DuckDB, import Streamlit or Altair, or estimate a suite-level number.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from typing import Any

from dashboard.data.formats import PROMPTFOO
from dashboard.data.formats.promptfoo.eval import (
    Pair,
    PromptfooEval,
    PromptfooSettings,
    tests_of,
)
from dashboard.data.formats.protocol import ReportRows

ERROR_REASON = 2  # promptfoo's ResultFailureReason.ERROR
SEPARATOR = " · "
MAX_ERROR_TEXT = 500
MAX_TAG_TEXT = 120
KEY_METADATA = ("case_id", "id")  # the case's key, not a slice
_FRACTION = re.compile(r"\.\d+(?=Z|[+-]\d\d:?\d\d$|$)")


def eval_rows(found: PromptfooEval, path: str, settings: PromptfooSettings) -> list[ReportRows]:
    """The catalog rows of every pair of one eval, in results.prompts order."""
    stem = posixpath.splitext(posixpath.basename(path))[0]
    release, release_from = release_of(found, settings)
    reports = []
    for pair in found.pairs:
        rows = pair_rows(found, pair, stem)
        rows.report |= {
            "target_version": release,
            "harness_facts": json.dumps(
                {
                    "promptIdx": pair.index,
                    "prompt": pair.prompt,
                    "provider": pair.provider,
                    "repeats": found.repeats,
                    "release_from": release_from,
                },
                ensure_ascii=False,
            ),
        }
        rows.warnings = found.warnings + rows.warnings
        reports.append(rows)
    return reports


def release_of(found: PromptfooEval, settings: PromptfooSettings) -> tuple[str | None, str]:
    """(release label, where it came from): the chosen tag, else the eval's timestamp
    (to the second)."""
    if settings.release_tag is not None:
        value = found.tags.get(settings.release_tag)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
            return str(value).strip(), f"tag:{settings.release_tag}"
    if found.timestamp:
        return _FRACTION.sub("", found.timestamp), "timestamp"
    return None, "file_stem"


def suite_of(found: PromptfooEval, pair: Pair, stem: str) -> str:
    if len(found.pairs) == 1 and found.description:
        return found.description
    return SEPARATOR.join([found.description or stem, pair.prompt, pair.provider])


def pair_rows(found: PromptfooEval, pair: Pair, stem: str) -> ReportRows:
    """One pair's report, cases and trials (the release is the caller's)."""
    suite = suite_of(found, pair, stem)
    tests, shared = tests_of(found.rows[pair.index], found.repeats)
    rows = ReportRows(report={})
    counts = {"passed": 0, "failed_quality": 0, "model_error": 0}
    cached = 0
    for case_idx, (key, repeats) in enumerate(tests.items(), start=1):
        scored = passes = errored = 0
        total = 0.0
        first_error = None
        for trial_idx, row in enumerate(repeats, start=1):
            status = trial_status(row)
            counts[status] += 1
            response = row.get("response")
            cached += isinstance(response, dict) and response.get("cached") is True
            error = error_text(row) if status == "model_error" else None
            if status == "model_error":
                errored += 1
                first_error = first_error or error
            else:
                scored += 1
                passes += status == "passed"
                score = _number(row.get("score"), None)
                total += (1.0 if status == "passed" else 0.0) if score is None else score
            rows.trials.append(
                (case_idx, trial_idx, trial_idx, 1, status, None, error,
                 _number(row.get("latencyMs"), None))
            )  # fmt: skip
        status = ("passed" if passes == scored else "failed_quality") if scored else "model_error"
        test_case = _dict(repeats[0].get("testCase"))
        tags = metadata_tags(test_case.get("metadata"))
        rows.cases.append(
            (
                case_idx, key, input_text(test_case), status, scored + errored, passes,
                scored or None, passes if scored else None, errored, passes, 0,
                total / scored if scored else None, None if scored else first_error, tags,
                len(repeats), errored if scored else 0,
            )
        )  # fmt: skip
        rows.tags += [(case_idx, tag) for tag in tags]
    rows.report = _report_row(found, pair, suite, rows)
    rows.warnings += _pair_warnings(suite, pair, counts, cached, shared)
    return rows


def trial_status(row: dict[str, Any]) -> str:
    """`model_error` for promptfoo's error rows, else passed or failed by `success`."""
    if row.get("failureReason") == ERROR_REASON:
        return "model_error"
    return "passed" if row.get("success") is True else "failed_quality"


def error_text(row: dict[str, Any]) -> str:
    """An errored row's message: a thrown error's first line (the rest is its stack), or
    the `{error}` the provider returned."""
    error = row.get("error")
    if not error:
        response = _dict(row.get("response"))
        error = response.get("error") or "error (promptfoo recorded no message)"
    text = str(error).strip()
    first = text.splitlines()[0] if text else text
    return first if len(first) <= MAX_ERROR_TEXT else first[:MAX_ERROR_TEXT] + "…"


def metadata_tags(metadata: Any) -> list[str]:
    """`key:value` for each short scalar of a test's metadata but its key (case_id, id)."""
    if not isinstance(metadata, dict):
        return []
    tags = []
    for key, value in metadata.items():
        if key in KEY_METADATA or key.startswith("_"):
            continue
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int | float):
            if isinstance(value, float) and not math.isfinite(value):
                continue
            text = json.dumps(value)
        elif isinstance(value, str):
            if not value or len(value) > MAX_TAG_TEXT or "\n" in value:
                continue
            text = value
        else:
            continue
        tags.append(f"{key}:{text}")
    return tags


def _report_row(found: PromptfooEval, pair: Pair, suite: str, rows: ReportRows) -> dict[str, Any]:
    cases = rows.cases
    runs = [c[4] for c in cases]
    return {
        "suite": suite,
        "model": pair.provider,
        "target_version": None,
        "format": f"promptfoo {found.promptfoo_version or '(version not recorded)'} "
        f"(results v{found.version})",
        "schema": f"promptfoo/results-v{found.version}",
        "recorded_at": found.timestamp,
        "runs_per_case": max(runs) if runs else None,
        "cases_total": len(cases),
        "cases_evaluated": sum(1 for c in cases if c[6] is not None),
        "cases_errored": sum(1 for c in cases if c[3] == "model_error"),
        "cases_skipped": 0,
        "runs_min": min(runs) if runs else None,
        "cases_with_trials": sum(1 for c in cases if c[14] > 0),
        "harness": PROMPTFOO,
        "log_status": None,
        "metadata": json.dumps(
            {
                "evalId": found.eval_id,
                "description": found.description,
                "tags": found.tags,
                "promptfooVersion": found.promptfoo_version,
                "prompt": pair.prompt,
                "provider": pair.provider,
            },
            ensure_ascii=False,
            default=str,
        ),
        "harness_facts": None,
    }


def _pair_warnings(
    suite: str, pair: Pair, counts: dict[str, int], cached: int, shared: list[str]
) -> list[str]:
    warnings = []
    total = sum(counts.values())
    if cached:
        warnings.append(
            f"{cached} of {total} rows of suite {suite!r} are replays from promptfoo's cache "
            "(response.cached), not independent trials: its pass^k overstates how consistent "
            "the model is; run with --no-cache for repeats that count"
        )
    own = [pair.metrics.get(k) for k in ("testPassCount", "testFailCount", "testErrorCount")]
    mine = [counts["passed"], counts["failed_quality"], counts["model_error"]]
    if all(isinstance(v, int) for v in own) and own != mine:
        warnings.append(
            f"its suite {suite!r} has {mine[0]} passing, {mine[1]} failing and {mine[2]} "
            f"errored rows, where promptfoo's own counts for the pair say {own[0]}, {own[1]} "
            f"and {own[2]}: the file was edited or cut short after promptfoo wrote it"
        )
    if shared:
        shown = ", ".join(repr(k) for k in shared[:3]) + (" and more" if len(shared) > 3 else "")
        warnings.append(
            f"its suite {suite!r} has different tests with one key ({shown}); relidash keeps "
            "them apart as KEY #POSITION, which another eval may number differently: give "
            "each test its own metadata case_id"
        )
    return warnings


def input_text(test_case: dict[str, Any]) -> str:
    """A test as a line of text: its description, else its vars (the rendered prompt is in
    each repeat's transcript; its template would open every test's line alike)."""
    description = test_case.get("description")
    if isinstance(description, str) and description.strip():
        return description.strip()
    variables = _dict(test_case.get("vars"))
    return "; ".join(
        f"{k}: {v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)}"
        for k, v in variables.items()
    )


def _number(value: Any, default: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value) if math.isfinite(value) else default


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
