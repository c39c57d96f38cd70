"""One simulated report: the summary block computed from its cases the way
multivon-eval's `EvalReport.to_json` does (pass@k / pass^k blocks, bootstrap intervals,
percentiles), the suite lock, and the whole document.

Must not: write files, import DuckDB or Streamlit, or depend on multivon-eval.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from dashboard.simulate.agent import (
    EVALUATORS,
    MODEL_ERRORS,
    Task,
    Texture,
    derive_seed,
    mulberry32,
    simulate_run,
)
from dashboard.simulate.records import (
    EVIDENCE_COVERAGE,
    CaseResult,
    ReportSpec,
    canonical_json,
    case_document,
    case_snapshot,
    content_digest,
    evidence_event,
    run_execution,
    sealed,
    target_block,
    trial_record,
)
from dashboard.simulate.settings import MODEL_ERROR_RATE
from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    cpython_choice_indices,
    norm_ppf,
    suite_pass_k,
    wilson_interval,
)


def _bootstrap_interval(scores: list[float]) -> list[float]:
    """multivon-eval's `experiments.bootstrap_interval` (seed 42, 2000 resamples)."""
    if not scores:
        return [0.0, 1.0]
    if len(scores) == 1:
        return [scores[0], scores[0]]
    values = np.asarray(scores, dtype=np.float64)
    total = np.zeros(2000)
    for column in cpython_choice_indices(len(scores), 2000, 42).T:
        total += values[column]  # left to right, as sum() adds
    means = np.sort(total / len(scores))
    return [
        round(float(means[int(0.025 * 2000)]), 4),
        round(float(means[int(0.975 * 2000) - 1]), 4),
    ]


def _percentiles(scores: list[float]) -> dict[str, float]:
    ordered = sorted(scores)
    if not ordered:
        return {}
    n = len(ordered)
    out = {}
    for p in (10, 50, 90):
        idx = (p / 100) * (n - 1)
        lo, hi = int(idx), min(int(idx) + 1, n - 1)
        frac = idx - lo
        out[f"p{p}"] = round(ordered[lo] * (1 - frac) + ordered[hi] * frac, 4)
    return out


def _min_detectable_effect(n: int, baseline: float) -> float:
    z_alpha, z_beta = norm_ppf(1 - 0.05 / 2), norm_ppf(0.80)
    var = baseline * (1 - baseline) * 2
    return round(min(math.sqrt((z_alpha + z_beta) ** 2 * var / n), 1.0), 4)


def _pass_k_block(n: list[int], c: list[int], k: int, metric: str) -> dict[str, Any]:
    (res,) = suite_pass_k(np.array(n, dtype=np.int64), np.array(c, dtype=np.int64), [k], metric)
    block: dict[str, Any] = {
        "k": k,
        "value": round(res.value, 4) if res.value is not None else None,
        "ci_95": [round(res.ci_low, 4), round(res.ci_high, 4)]
        if res.value is not None and res.ci_low is not None and res.ci_high is not None
        else None,
        "estimator": "combinatorial-unbiased"
        if metric == METRIC_PASS_AT_K
        else "hypergeometric-exact",
        "runs": res.runs,
    }
    if res.value is None:
        block["unknown_reason"] = res.unknown_reason
    return block


def summary_block(results: list[CaseResult], fmt: str) -> dict[str, Any]:
    statuses = [cr.status for cr in results]
    evaluated = [
        cr for cr, s in zip(results, statuses, strict=True) if s in ("passed", "failed_quality")
    ]
    passed = statuses.count("passed")
    errors: dict[str, int] = {}
    for s in statuses:
        if s == "model_error":
            errors[s] = errors.get(s, 0) + 1
    pass_rate = passed / len(evaluated) if evaluated else 0.0
    scores = [cr.score(fmt) for cr in evaluated]
    by_evaluator: dict[str, list[float]] = {}
    for cr in results if fmt == "0.15" else evaluated:
        for g in cr.evaluators(fmt):
            if not (fmt == "0.20" and g.skipped):
                by_evaluator.setdefault(g.name, []).append(g.score)
    flaky = sum(cr.is_flaky for cr in results)
    runs_per_case = (
        (max(len(cr.runs) for cr in results) if fmt == "0.20" else len(results[0].runs))
        if results
        else 1
    )
    summary: dict[str, Any] = {
        "total": len(results),
        "evaluated": len(evaluated),
        "passed": passed,
        "failed": statuses.count("failed_quality"),
        "errors": sum(errors.values()),
        "errors_by_kind": errors,
        "skipped": 0,
        "pass_rate": round(pass_rate, 4),
        "pass_rate_ci_95": list(wilson_interval(passed, len(evaluated)))
        if evaluated
        else [0.0, 1.0],
        "avg_score": round(sum(scores) / len(scores), 4) if scores else 0.0,
        "avg_score_ci_95": _bootstrap_interval(scores),
        # 0.15 took percentiles over every case, errors included; 0.17+ over evaluated ones
        "score_percentiles": _percentiles(
            scores if fmt == "0.20" else [cr.score(fmt) for cr in results]
        ),
        "runs_per_case": runs_per_case,
        "flaky_count": flaky,
        "stability_score": round((len(results) - flaky) / len(results), 4) if results else 1.0,
        "judge_reliability": None,
    }
    if fmt == "0.15":
        summary["by_evaluator"] = {k: round(sum(v) / len(v), 4) for k, v in by_evaluator.items()}
        summary["costs"] = {
            "total_input_tokens": 0,
            "total_output_tokens": 0,
            "total_tokens": 0,
            "total_calls": 0,
            "total_cost_usd": 0,
            "by_model": [],
        }
        return summary
    summary["purpose"] = ""
    summary["saturated"] = bool(evaluated) and passed == len(evaluated)
    summary["min_detectable_regression"] = (
        _min_detectable_effect(len(evaluated), max(0.5, min(pass_rate, 0.95))) if evaluated else 1.0
    )
    summary["by_evaluator"] = {k: round(sum(v) / len(v), 4) for k, v in by_evaluator.items()}
    summary["costs"] = {
        "total_input_tokens": 0,
        "total_output_tokens": 0,
        "total_tokens": 0,
        "total_calls": 0,
        "total_cost_usd": None,
        "recorded_cost_usd": 0.0,
        "scope": "recorded_judge_responses",
        "coverage_declaration": None,
        "complete": False,
        "evidence_gaps": [],
        "evidence": {},
        "by_model": [],
    }
    if runs_per_case > 1:
        n = [len(cr.runs) if cr.multi else 1 for cr in evaluated]
        c = [cr.pass_count if cr.multi else int(cr.status == "passed") for cr in evaluated]
        summary["pass_at_k"] = _pass_k_block(n, c, runs_per_case, METRIC_PASS_AT_K)
        summary["pass_hat_k"] = _pass_k_block(n, c, runs_per_case, METRIC_PASS_HAT_K)
    return summary


def _suite_lock(spec: ReportSpec, case_digests: list[str]) -> dict[str, Any]:
    def grader(name: str, cls: str) -> dict[str, Any]:
        return {
            "name": name,
            "class_path": f"__main__.{cls}",
            "threshold": 1.0,
            "prompt_hash": None,
            "judge": None,
            "calibration": None,
            "version": "3",
            "extra": {
                "config": {},
                "config_types": [],
                "dependencies": {
                    "schema": "multivon.dependencies/v1",
                    "declaration": None,
                    "opaque_fields": [],
                    "issues": ["Custom grader requires a declared dependency contract"],
                    "limits": "Caller declarations cover hidden code/data; remote model aliases "
                    "are not immutable weights",
                },
            },
        }

    return {
        "library_version": "0.20.0",
        "suite_name": spec.suite,
        "suite_hash": content_digest([spec.suite, list(EVALUATORS)]),
        "evaluators": [
            grader("required_facts", "RequiredFacts"),
            grader("policy_guard", "PolicyGuard"),
        ],
        "case_count": len(case_digests),
        "cases_hash": content_digest(case_digests),
        "run_config": None,
        "calibration_version": "v2",
        "extra": {
            "engine": {
                "schema": "multivon.dependencies/v1",
                "source_digest": content_digest(["multivon-eval", "0.20.0"]),
                "python": "3.11.7",
                "implementation": "CPython",
                "system": "Linux",
                "release": "6.1.0-simulated",
                "machine": "x86_64",
                "packages": [["multivon-eval", "0.20.0"]],
            },
            "issues": [],
        },
    }


def build_report(
    spec: ReportSpec, tasks: Sequence[Task], runs: int, reliability: Sequence[float], seed: int
) -> tuple[dict[str, Any], datetime]:
    """The report dict for one (suite, release), and the time its run ended."""
    base = spec.suite_index == 0 and spec.release_index == 0
    outcomes = mulberry32(seed if base else derive_seed(seed, spec.suite, spec.release, "outcomes"))
    texture = Texture(derive_seed(seed, spec.suite, spec.release, "texture"))
    errors_allowed = spec.release_index > 0
    clock = spec.started
    results: list[CaseResult] = []
    for task, p_case in zip(tasks, reliability, strict=True):
        draws = [outcomes() for _ in range(runs)]  # one per trial, in task order
        error_run = -1
        if errors_allowed and texture.uniform() < MODEL_ERROR_RATE:
            error_run = texture.below(runs)
        error = texture.choice(MODEL_ERRORS)
        case_runs = [
            simulate_run(task, draw < p_case, error if j == error_run else None, texture)
            for j, draw in enumerate(draws)
        ]
        results.append(CaseResult(task, case_runs, clock))
        clock += timedelta(milliseconds=sum(r.latency_ms + 40.0 for r in case_runs))
    finished = clock

    if spec.fmt == "0.15":
        report: dict[str, Any] = {
            "suite": spec.suite,
            "model": f"{spec.bot} {spec.release}",
            "summary": summary_block(results, "0.15"),
            "cases": [case_document(cr, "0.15", None, None) for cr in results],
        }
        return report, finished

    target = target_block(spec)
    run_exec = run_execution(spec, target, runs)
    trial_exec = sealed(
        {
            "changed_during_execution": False,
            "schema": "multivon.execution/v1",
            "target_after": target,
            "target_before": target,
        }
    )
    run_id = texture.hex_id()
    cases_json = []
    digests = []
    for cr in results:
        snapshot, case_digest = case_snapshot(cr.task)
        digests.append(case_digest)
        at = cr.first_trial_at
        trials = []
        for j, run in enumerate(cr.runs, start=1):
            trials.append(
                trial_record(
                    spec, cr, j, run, snapshot, case_digest, trial_exec, run_id, at, texture
                )
            )
            at += timedelta(milliseconds=run.latency_ms + 40.0)
        cases_json.append(case_document(cr, "0.20", trials, case_digest))
    evidence = {
        "capture_id": run_id,
        "coverage": EVIDENCE_COVERAGE,
        "coverage_gaps": [],
        "events": [
            evidence_event(
                run_id,
                "capture_started",
                "run",
                json.loads(canonical_json(run_exec)),
                {"run_id": run_id},
                spec.started - timedelta(milliseconds=5),
                texture,
            )
        ],
        "kind": "run",
        "requests_without_complete_response": [],
        "schema": "multivon.provider-evidence/v1",
        "state": "open",
    }
    report = {
        "schema": "multivon.report/v2",
        "evidence_issues": [],
        "provider_evidence": evidence,
        "execution": run_exec,
        "suite": spec.suite,
        "model": spec.bot,
        "suite_lock": _suite_lock(spec, digests),
        "summary": summary_block(results, "0.20"),
        "cases": cases_json,
    }
    return report, finished
