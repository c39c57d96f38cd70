"""One simulated case as multivon-eval writes it: canonical JSON and content digests, the
0.20 trial records with their execution and provider evidence, and the 0.15 case shape.

Must not: write files, import DuckDB or Streamlit, or depend on multivon-eval.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from dashboard.simulate.agent import EVALUATORS, Grade, Run, Task, Texture


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def sealed(record: dict[str, Any]) -> dict[str, Any]:
    """`record` plus its digest, keys in sorted order (how a canonical record reads back)."""
    return dict(sorted({**record, "digest": content_digest(record)}.items()))


# --- one report ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    task: Task
    runs: list[Run]
    first_trial_at: datetime

    @property
    def multi(self) -> bool:
        return len(self.runs) > 1

    @property
    def model_error(self) -> str | None:
        return next((r.model_error for r in self.runs if r.model_error), None)

    @property
    def pass_count(self) -> int:
        return sum(r.passed for r in self.runs) if self.multi else -1

    @property
    def status(self) -> str:
        if self.model_error is not None:
            return "model_error"
        if self.multi:
            return "passed" if self.pass_count == len(self.runs) else "failed_quality"
        return "passed" if self.runs[0].passed else "failed_quality"

    def all_scores(self, fmt: str) -> list[float]:
        return [r.score(fmt) for r in self.runs] if self.multi else []

    def score(self, fmt: str) -> float:
        scores = self.all_scores(fmt)
        return sum(scores) / len(scores) if scores else self.runs[0].score(fmt)

    def score_std(self, fmt: str) -> float:
        scores = self.all_scores(fmt)
        if len(scores) < 2:
            return 0.0
        mean = self.score(fmt)
        return math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))

    @property
    def run_pass_rate(self) -> float:
        if not self.multi:
            return 1.0 if self.status == "passed" else 0.0
        return self.pass_count / len(self.runs)

    @property
    def is_flaky(self) -> bool:
        return self.multi and 0 < self.pass_count < len(self.runs)

    @property
    def latency_ms(self) -> float:
        return sum(r.latency_ms for r in self.runs) / len(self.runs)

    def evaluators(self, fmt: str) -> list[Grade]:
        """Per-grader rows: the single run's, or multivon-eval's multi-run aggregate."""
        if not self.multi:
            return self.runs[0].grades
        n = len(self.runs)
        rows = []
        for i, name in enumerate(EVALUATORS):
            results = [r.grades[i] for r in self.runs]
            if fmt == "0.20":
                measured = [g for g in results if not g.skipped]
                if not measured:
                    rows.append(results[0])
                    continue
                results = measured
            votes = sum(g.passed for g in results)
            rows.append(
                Grade(
                    name,
                    sum(g.score for g in results) / len(results),
                    votes > len(results) / 2,
                    f"avg over {n} runs (passed {votes}/{len(results)})",
                )
            )
        return rows


def _evaluator_json(g: Grade, fmt: str, *, trial: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if g.skipped and fmt == "0.20":
        metadata = (
            {"error_kind": g.error_kind, "skipped": True} if g.error_kind else {"skipped": True}
        )
    score = g.score if trial else round(g.score, 4)
    if trial:  # trial records are canonical: sorted keys
        return {
            "metadata": metadata,
            "name": g.name,
            "passed": g.passed,
            "reason": g.reason,
            "score": score,
        }
    row: dict[str, Any] = {"name": g.name, "score": score, "passed": g.passed, "reason": g.reason}
    if fmt == "0.20":
        row["metadata"] = metadata
    return row


@dataclass(frozen=True)
class ReportSpec:
    suite: str
    suite_index: int
    release: str
    release_index: int
    bot: str
    fmt: str
    started: datetime


def _iso(t: datetime) -> str:
    return t.isoformat()


def target_block(spec: ReportSpec) -> dict[str, Any]:
    return sealed(
        {
            "callable": "__main__.SimulatedAgent",
            "client": None,
            "configuration": None,
            "declaration": {
                "configuration": {
                    "types": [],
                    "value": {
                        "model": "simulated-agent",
                        "system_prompt_rev": spec.release,
                        "temperature": 0.7,
                    },
                },
                "dependencies": {
                    "prompt": f"prompts/{spec.suite}@{spec.release}",
                    "tools": "toolbox@2026.02",
                },
                "files": {},
                "version": spec.release,
            },
            "issues": [],
            "limits": "Recorded settings and caller declarations; aliases and hidden runtime "
            "state are not immutable weights",
            "origin": "executed",
            "schema": "multivon.execution/v1",
        }
    )


def _as_written(target: dict[str, Any]) -> dict[str, Any]:
    """A target snapshot in the key order multivon-eval builds it (report-level records
    are written as built; trial records are canonical, with sorted keys)."""
    declaration = target["declaration"]
    order = (
        "schema",
        "callable",
        "configuration",
        "declaration",
        "client",
        "issues",
        "limits",
        "origin",
        "digest",
    )
    out = {key: target[key] for key in order}
    out["declaration"] = {
        "version": declaration["version"],
        "dependencies": declaration["dependencies"],
        "files": declaration["files"],
        "configuration": {"value": declaration["configuration"]["value"], "types": []},
    }
    return out


def run_execution(spec: ReportSpec, target: dict[str, Any], runs: int) -> dict[str, Any]:
    target = _as_written(target)
    record: dict[str, Any] = {
        "schema": "multivon.execution/v1",
        "method": "run",
        "policy": {
            "value": {
                "runs": runs,
                "workers": 1,
                "early_stop": False,
                "fail_threshold": None,
                "max_error_rate": None,
                "judge_retry": None,
                "effective_workers": 1,
                "effective_early_stop": False,
                "tracer": None,
            },
            "types": [],
        },
        "target_before": target,
        "target_after": target,
        "changed_during_execution": False,
    }
    return {**record, "digest": content_digest(record)}


EVIDENCE_COVERAGE = "Observed instrumented calls only; uninstrumented transports may exist"
EVIDENCE_GAP = (
    "Provider events cover observed instrumented calls; other calls and billing may be unknown"
)


def evidence_event(
    capture_id: str,
    kind: str,
    capture_kind: str,
    execution: dict[str, Any],
    labels: dict[str, Any],
    at: datetime,
    texture: Texture,
    **extra: Any,
) -> dict[str, Any]:
    return sealed(
        {
            "capture_id": capture_id,
            "capture_kind": capture_kind,
            "event_id": texture.hex_id(),
            "execution": execution,
            "kind": kind,
            "labels": labels,
            "recorded_at": _iso(at),
            "schema": "multivon.provider-evidence/v1",
            **extra,
        }
    )


def trial_record(
    spec: ReportSpec,
    cr: CaseResult,
    j: int,
    run: Run,
    case_json: dict[str, Any],
    case_digest: str,
    trial_exec: dict[str, Any],
    run_id: str,
    started: datetime,
    texture: Texture,
) -> dict[str, Any]:
    capture_id = texture.hex_id()
    finished = started + timedelta(milliseconds=run.latency_ms)
    labels = {
        "attempt": 1,
        "case_digest": case_digest,
        "case_id": cr.task.case_id,
        "run_id": run_id,
        "run_index": j,
    }
    evidence = {
        "capture_id": capture_id,
        "coverage": EVIDENCE_COVERAGE,
        "coverage_gaps": [],
        "events": [
            evidence_event(
                capture_id, "capture_started", "trial", trial_exec, labels, started, texture
            ),
            evidence_event(
                capture_id,
                "capture_finished",
                "trial",
                trial_exec,
                labels,
                finished + timedelta(microseconds=1000),
                texture,
                error=None,
            ),
        ],
        "kind": "trial",
        "requests_without_complete_response": [],
        "schema": "multivon.provider-evidence/v1",
        "state": "closed",
    }
    record = {
        "agent_trace": None,
        "attempt": 1,
        "case": case_json,
        "case_digest": case_digest,
        "case_id": cr.task.case_id,
        "evaluation_case": case_json,
        "evaluator_error": None,
        "evaluators": [_evaluator_json(g, "0.20", trial=True) for g in run.grades],
        "evidence_gaps": [EVIDENCE_GAP],
        "execution": trial_exec,
        "judge_error": None,
        "latency_ms": run.latency_ms,
        "model_error": run.model_error,
        "origin": "execution",
        "output": run.output,
        "provider_evidence": evidence,
        "provider_requests": None,
        "recorded_at": _iso(finished),
        "run_index": j,
        "schema": "multivon.trial/v1",
        "status": "model_error"
        if run.model_error
        else ("passed" if run.passed else "failed_quality"),
    }
    return sealed(record)


def case_snapshot(task: Task) -> tuple[dict[str, Any], str]:
    snapshot = {
        "agent_trace": None,
        "case_id": task.case_id,
        "context": None,
        "conversation": None,
        "expected_output": None,
        "expected_tool_calls": None,
        "input": task.input,
        "metadata": task.metadata(),
        "revision": None,
        "source_id": None,
        "tags": list(task.tags),
    }
    without_id = {k: v for k, v in snapshot.items() if k != "case_id"}
    return snapshot, content_digest(without_id)


def case_document(
    cr: CaseResult, fmt: str, trials: list[dict[str, Any]] | None, case_digest: str | None
) -> dict[str, Any]:
    status = cr.status
    head: dict[str, Any] = {"input": cr.task.input}
    if fmt == "0.20":
        head.update(
            case_id=cr.task.case_id,
            case_digest=case_digest,
            agent_trace=None,
            trials=trials or [],
            evidence_error=None,
        )
    body: dict[str, Any] = {
        "output": cr.runs[-1].output,
        "status": status,
        "model_error": cr.model_error,
        "judge_error": None,
        "evaluator_error": None,
        "skipped": False,
        "passed": status == "passed",
        "score": round(cr.score(fmt), 4),
        "score_std": round(cr.score_std(fmt), 4),
        "all_scores": cr.all_scores(fmt),
        "run_pass_rate": round(cr.run_pass_rate, 4),
        "is_flaky": cr.is_flaky,
        "runs": len(cr.runs),
    }
    if fmt == "0.20":
        body["pass_count"] = cr.pass_count
    body.update(
        retry_attempts=0,
        retry_errors=[],
        latency_ms=round(cr.latency_ms, 1),
        tags=list(cr.task.tags),
        evaluators=[_evaluator_json(g, fmt) for g in cr.evaluators(fmt)],
    )
    return {**head, **body}


# --- the summary block, from the cases, as EvalReport.to_json computes it --------------------
