"""One Harbor job as catalog rows: one report per eval of the job (Harbor's
`<agent>__<model>__<dataset>` key; a job runs one unless it names several agents, models
or datasets), as Harbor's own pass@k in result.json is per eval.

suite = the dataset (the trials' `source`; the job config's dataset when they have none);
release (`target_version`) = `<agent>@<agent version> (<provider>/<model>)`; case = the
task (`task_name`), its attempts (the trials with a result.json) ordered by `started_at`
then trial name, as Harbor writes no attempt index. Per case: n = the counted attempts,
c = those that passed (outcome.py); an attempt left out is an agent error
(`agent_errors_left_out`), counted as a failure when agent errors count.

Must not: touch DuckDB, import Streamlit or Altair, or estimate a suite-level number.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

from dashboard.data.formats import HARBOR
from dashboard.data.formats.harbor.causes import CAUSE_ORDER
from dashboard.data.formats.harbor.job import HarborSettings, Job, job_started_utc
from dashboard.data.formats.harbor.outcome import (
    Outcome,
    harbor_pass_at_k,
    latency_ms,
    trial_outcome,
)
from dashboard.data.formats.harbor.tasks import TaskFolders, TaskInfo
from dashboard.data.formats.protocol import FormatProblem, ReportRows

TOLERANCE = 1e-9
COMPLETE_STATUS = "success"  # Inspect's words: an incomplete log is "started"
RUNNING_STATUS = "started"


def eval_key(trial: dict[str, Any]) -> str:
    """Harbor's JobStats.format_agent_evals_key of a trial."""
    info = trial.get("agent_info") or {}
    model = (info.get("model_info") or {}).get("name")
    dataset = trial.get("source") or "adhoc"
    return f"{info.get('name')}__{model}__{dataset}" if model else f"{info.get('name')}__{dataset}"


def trial_order(trial: dict[str, Any]) -> tuple[str, str]:
    return (str(trial.get("started_at") or ""), str(trial.get("trial_name") or ""))


def job_rows(job: Job, settings: HarborSettings) -> list[ReportRows]:
    """The reports of one job (FormatProblem when no trial has finished)."""
    if not job.trials:
        waiting = f" ({len(job.unfinished)} trial folders have no result.json yet)"
        raise FormatProblem(
            "is a Harbor job with no finished trial yet"
            + (waiting if job.unfinished else "")
            + "; reload when one has finished"
        )
    evals: dict[str, list[dict[str, Any]]] = {}
    for trial in sorted(job.trials, key=trial_order):
        evals.setdefault(eval_key(trial), []).append(trial)
    folders = TaskFolders(settings.tasks)
    lock_names = _lock_task_names(job.lock)
    return [
        eval_rows(job, key, trials, settings, folders, lock_names) for key, trials in evals.items()
    ]


def _lock_task_names(lock: dict[str, Any]) -> dict[str, str]:
    names = {}
    for entry in lock.get("trials") or []:
        task = entry.get("task") if isinstance(entry, dict) else None
        if isinstance(task, dict) and isinstance(task.get("path"), str) and task.get("name"):
            names[task["path"]] = str(task["name"])
    return names


def eval_rows(
    job: Job,
    key: str,
    trials: list[dict[str, Any]],
    settings: HarborSettings,
    folders: TaskFolders,
    lock_names: dict[str, str],
) -> ReportRows:
    rows = ReportRows(report={})
    by_task: dict[str, list[dict[str, Any]]] = {}
    for trial in trials:
        by_task.setdefault(str(trial["task_name"]), []).append(trial)
    outcomes: list[Outcome] = []
    task_problems: set[str] = set()
    for case_idx, task in enumerate(sorted(by_task), start=1):
        attempts = by_task[task]
        info = folders.for_trial(attempts[0], lock_names)
        if info.problem:
            task_problems.add(info.problem)
        mine = [
            trial_outcome(t, job.valid_rule, settings.reward_key, settings.pass_threshold)
            for t in attempts
        ]
        outcomes += mine
        for trial_idx, (trial, outcome) in enumerate(zip(attempts, mine, strict=True), 1):
            rows.trials.append(
                (
                    case_idx, trial_idx, trial_idx, 1, outcome.status, trial.get("started_at"),
                    outcome.error_text, latency_ms(trial),
                )
            )  # fmt: skip
        rows.cases.append(_case_row(case_idx, task, info, mine))
        rows.tags += [(case_idx, tag) for tag in info.tags]
    rows.report = _report_row(job, key, trials, rows, outcomes, settings)
    rows.warnings += job.warnings + _warnings(job, key, trials, outcomes, settings)
    rows.warnings += sorted(task_problems)
    return rows


def _case_row(case_idx: int, task: str, info: TaskInfo, mine: list[Outcome]) -> tuple[Any, ...]:
    counted = [o for o in mine if o.counted]
    left_out = len(mine) - len(counted)
    passes = sum(o.passed for o in counted)
    n = len(counted)
    status = ("passed" if passes == n else "failed_quality") if n else "model_error"
    first_error = next((o.error_text for o in mine if not o.counted and o.error_text), None)
    score = sum(o.value or 0.0 for o in counted) / n if n else None
    text = info.instruction or info.description or task
    return (
        case_idx, task, text, status, n + left_out, passes, n or None, passes if n else None,
        left_out, passes, 0, score, None if n else first_error or "no attempt has a valid reward",
        list(info.tags), len(mine), left_out if n else 0,
    )  # fmt: skip


def _identity(trials: list[dict[str, Any]]) -> tuple[str, str, str]:
    """(agent name, agent version, model as provider/name) of an eval's first trial."""
    info = trials[0].get("agent_info") or {}
    model_info = info.get("model_info") or {}
    name, provider = model_info.get("name"), model_info.get("provider")
    model = f"{provider}/{name}" if name and provider else str(name or "")
    return str(info.get("name") or ""), str(info.get("version") or ""), model


def _dataset(job: Job, trials: list[dict[str, Any]]) -> str:
    source = trials[0].get("source")
    if isinstance(source, str) and source:
        return source
    for dataset in job.config.get("datasets") or []:
        if isinstance(dataset, dict):
            named = dataset.get("name") or dataset.get("path")
            if isinstance(named, str) and named:
                return os.path.basename(named.rstrip("/")) or named
    return "adhoc"  # Harbor's own name for trials of no dataset


def _report_row(
    job: Job,
    key: str,
    trials: list[dict[str, Any]],
    rows: ReportRows,
    outcomes: list[Outcome],
    settings: HarborSettings,
) -> dict[str, Any]:
    agent, version, model = _identity(trials)
    release = f"{agent}@{version}" if version else agent
    cases = rows.cases
    runs = [c[4] for c in cases]
    stored = _stored_eval(job, key)
    schema = trials[0].get("schema_version")
    return {
        "suite": _dataset(job, trials),
        "model": model,
        "target_version": f"{release} ({model})" if model else release,
        "format": f"harbor {job.version_label} (job)",
        "schema": f"harbor/job/result-v{schema or 1}",
        "recorded_at": job_started_utc(job),
        "runs_per_case": max(runs) if runs else None,
        "cases_total": len(cases),
        "cases_evaluated": sum(1 for c in cases if c[6] is not None),
        "cases_errored": sum(1 for c in cases if c[3] == "model_error"),
        "cases_skipped": 0,
        "runs_min": min(runs) if runs else None,
        "cases_with_trials": sum(1 for c in cases if c[14] > 0),
        "harness": HARBOR,
        "log_status": COMPLETE_STATUS if job.finished else RUNNING_STATUS,
        "metadata": json.dumps(
            {
                "job_name": job.name,
                "job_id": (job.result or {}).get("id"),
                "agent": agent,
                "agent_version": version or None,
                "model": model or None,
                "harbor_version": job.version,
                "dataset": _dataset(job, trials),
                "eval": key,
            },
            ensure_ascii=False,
        ),
        "harness_facts": json.dumps(
            _facts(job, key, trials, outcomes, settings, stored), ensure_ascii=False
        ),
    }


def _stored_eval(job: Job, key: str) -> dict[str, Any]:
    stats = (job.result or {}).get("stats")
    evals = stats.get("evals") if isinstance(stats, dict) else None
    entry = evals.get(key) if isinstance(evals, dict) else None
    return entry if isinstance(entry, dict) else {}


def _facts(
    job: Job,
    key: str,
    trials: list[dict[str, Any]],
    outcomes: list[Outcome],
    settings: HarborSettings,
    stored: dict[str, Any],
) -> dict[str, Any]:
    types: Counter[str] = Counter()
    causes: Counter[str] = Counter()
    for outcome in outcomes:
        for kind in dict.fromkeys(f.type for f in outcome.failures):
            types[kind] += 1
        for cause in dict.fromkeys(f.cause for f in outcome.failures):
            causes[cause] += 1
    return {
        "reward_key": settings.reward_key,
        "pass_threshold": settings.pass_threshold,
        "harbor_version": job.version,
        "counts": "reward_valid" if job.valid_rule else "every finished trial",
        "complete": job.finished,
        "job_name": job.name,
        "eval": key,
        "attempts": len(outcomes),
        "attempts_counted": sum(o.counted for o in outcomes),
        "attempts_errored": sum(bool(o.failures) for o in outcomes),
        "errors_by_type": dict(sorted(types.items())),
        "errors_by_cause": {c: causes[c] for c in CAUSE_ORDER if causes[c]},
        "reward_keys": sorted({k for o in outcomes for k in o.rewards}),
        "harbor_pass_at_k": stored.get("pass_at_k"),
        "harbor_n_trials": stored.get("n_trials"),
        "trial_folders_without_result": sorted(job.unfinished),
    }


def _warnings(
    job: Job,
    key: str,
    trials: list[dict[str, Any]],
    outcomes: list[Outcome],
    settings: HarborSettings,
) -> list[str]:
    warnings = []
    errored = [o for o in outcomes if o.failures]
    # named when errors change what counts: attempts left out, or failures without a
    # reward (each error's type and cause is in harness_facts and in its transcript)
    if any(not o.counted or not o.rewards for o in errored):
        warnings.append(_error_summary(job, errored, len(outcomes)))
    keyless = [o for o in outcomes if o.counted and o.rewards and o.value is None]
    if keyless:
        seen = sorted({k for o in keyless for k in o.rewards})
        warnings.append(
            f"{len(keyless)} counted attempts have no reward {settings.reward_key!r} (their "
            f"rewards: {', '.join(seen)}) and count as failures; name another with [harbor] "
            "reward_key in relidash.toml"
        )
    stored = _stored_eval(job, key).get("pass_at_k")
    if isinstance(stored, dict) and stored:
        mine = harbor_pass_at_k(trials, job.valid_rule)
        wrong = [
            f"k={k}: stored {float(v):.4f}, trials give "
            + (f"{mine[k]:.4f}" if k in mine else "none")
            for k, v in stored.items()
            if isinstance(v, int | float) and (k not in mine or abs(mine[k] - v) > TOLERANCE)
        ]
        if wrong and job.finished:
            warnings.append(
                f"its result.json pass_at_k for {key} disagrees with its trial folders "
                f"({'; '.join(wrong[:3])}): a trial was added, removed or edited after Harbor "
                "wrote it; relidash shows what the trials give"
            )
    return warnings


def _error_summary(job: Job, errored: list[Outcome], total: int) -> str:
    by_cause: dict[str, Counter[str]] = {}
    for outcome in errored:
        for failure in outcome.failures:
            by_cause.setdefault(failure.cause, Counter())[failure.type] += 1
    parts = [
        f"{cause} {sum(by_cause[cause].values())} ("
        + ", ".join(f"{kind} {n}" for kind, n in sorted(by_cause[cause].items()))
        + ")"
        for cause in CAUSE_ORDER
        if cause in by_cause
    ]
    left_out = sum(not o.counted for o in errored)
    if job.valid_rule:
        rule = (
            f"{left_out} of {total} attempts have no valid reward and are left out, as Harbor "
            f"{job.version_label}'s pass@k leaves them out (count agent errors as failures to "
            "count them)"
        )
    else:
        rewardless = sum(not o.rewards for o in errored)
        rule = (
            f"{rewardless} of {total} attempts have no reward and count as failures, as Harbor "
            f"{job.version_label}'s pass@k counts them"
        )
    return f"{rule}. {len(errored)} raised an exception, by cause: " + "; ".join(parts)
