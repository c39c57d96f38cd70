"""One Inspect log as the rows a multivon-eval report gives the catalog.

A sample is a case, in the dataset's order; its epochs are its trials. Per case: n = the
scored epochs, c = those whose chosen scorer's value reaches the threshold; an errored
epoch (an error and no score) is a trial with status `model_error` that n leaves out
(`agent_errors_left_out`, counted as a failed trial when agent errors count); an epoch
neither scored nor errored (Inspect's NaN "unscored") is a `skipped` trial. A sample
with no scored epoch is an errored case (or skipped, when nothing errored).

Must not: touch DuckDB, import Streamlit or Altair, or estimate a suite-level number.
"""

from __future__ import annotations

import json
from math import comb
from typing import Any

from dashboard.data.formats import INSPECT
from dashboard.data.formats.inspect.log import (
    COMPLETE_STATUS,
    InspectLog,
    InspectSettings,
    case_key,
    chosen_scorer,
    error_message,
    input_text,
    metadata_tags,
    pass_reductions,
    value_to_float,
)
from dashboard.data.formats.protocol import ReportRows

REDUCTION_TOLERANCE = 1e-9
MAX_ERROR_TEXT = 500


def log_rows(log: InspectLog, settings: InspectSettings) -> ReportRows:
    """The catalog rows of one log (LogProblem when it cannot be mapped)."""
    scorer = chosen_scorer(log, settings)
    threshold = settings.pass_threshold
    by_sample = _epochs_by_sample(log)
    rows = ReportRows(report={})
    counts: dict[str, tuple[int, int]] = {}  # str(id) -> (n, c), for the reduction check
    non_scalar = 0
    for case_idx, (sample_id, epochs) in enumerate(by_sample.items(), start=1):
        scored = errored = passes = 0
        total = 0.0
        first_error = None
        for trial_idx, summary in enumerate(epochs, start=1):
            score = (summary.get("scores") or {}).get(scorer)
            value = score.get("value") if isinstance(score, dict) else None
            number = value_to_float(value) if isinstance(score, dict) else None
            non_scalar += isinstance(value, dict | list)
            error = error_message(summary.get("error"))  # a summary's text, a sample's object
            if number is not None:
                scored += 1
                total += number
                status = "passed" if number >= threshold else "failed_quality"
                passes += status == "passed"
            elif error:
                errored += 1
                status = "model_error"
                first_error = first_error or _short(error)
            else:
                status = "skipped"
            rows.trials.append(
                (
                    case_idx, trial_idx, _int(summary.get("epoch"), trial_idx),
                    1 + (_int(summary.get("retries"), 0)), status,
                    summary.get("completed_at") or summary.get("started_at"),
                    _short(error) if error and number is None else None,
                    _latency(summary.get("total_time")),
                )
            )  # fmt: skip
        if scored:
            status = "passed" if passes == scored else "failed_quality"
        else:
            status = "model_error" if errored else "skipped"
        first = epochs[0]
        tags = metadata_tags(first.get("metadata"))
        rows.cases.append(
            (
                case_idx, case_key(sample_id), input_text(first.get("input")), status,
                scored + errored, passes, scored or None, passes if scored else None, errored,
                passes, 0, total / scored if scored else None,
                None if scored else first_error, tags, len(epochs), errored if scored else 0,
            )
        )  # fmt: skip
        rows.tags += [(case_idx, tag) for tag in tags]
        if scored:
            counts[str(sample_id)] = (scored, passes)
    rows.report = _report_row(log, rows, scorer, threshold)
    if non_scalar:
        rows.warnings.append(
            f"its scorer {scorer!r} gives {non_scalar} dict or list values, which Inspect's "
            "value_to_float maps to 0 (a failed trial); name a scalar scorer with "
            "[inspect] scorer in relidash.toml"
        )
    unscored = sum(1 for t in rows.trials if t[4] == "skipped")
    if unscored and not counts:
        # Inspect leaves NaN scores out of its metrics, which are NaN when nothing is left
        errored = sum(1 for t in rows.trials if t[4] == "model_error")
        rows.warnings.append(
            f"its scorer {scorer!r} scored no sample: {unscored} of {len(rows.trials)} epochs "
            "are NaN (Inspect's sentinel for a sample it did not score)"
            + (f" and {errored} errored" if errored else "")
            + "; no sample is evaluated, so its pass@k and pass^k are UNKNOWN, as Inspect's "
            "own metrics for this scorer are NaN"
        )
    if threshold == 1.0:
        rows.warnings += _reduction_warnings(log, scorer, counts)
    return rows


def _epochs_by_sample(log: InspectLog) -> dict[Any, list[dict[str, Any]]]:
    """Each sample's summaries in epoch order, samples in the dataset's order (ids the
    dataset lists first, then the rest as they appear)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    ids: dict[str, Any] = {}
    for summary in log.summaries:
        key = str(summary["id"])
        ids.setdefault(key, summary["id"])
        grouped.setdefault(key, []).append(summary)
    spec_dataset = log.eval.get("dataset")
    dataset = spec_dataset.get("sample_ids") or [] if isinstance(spec_dataset, dict) else []
    order = dict.fromkeys(str(i) for i in dataset if str(i) in grouped)
    order.update(dict.fromkeys(grouped))
    return {ids[key]: sorted(grouped[key], key=lambda s: _int(s.get("epoch"), 0)) for key in order}


def _report_row(log: InspectLog, rows: ReportRows, scorer: str, threshold: float) -> dict[str, Any]:
    spec = log.eval
    metadata: dict[str, Any] = spec["metadata"] if isinstance(spec.get("metadata"), dict) else {}
    release = metadata.get("release")
    packages = spec.get("packages")
    package = packages.get("inspect_ai") if isinstance(packages, dict) else None
    cases = rows.cases
    runs = [c[4] for c in cases]
    config = spec.get("config")
    epochs = config.get("epochs") if isinstance(config, dict) else None
    return {
        "suite": spec["task"],
        "model": str(spec.get("model") or ""),
        "target_version": str(release) if isinstance(release, str | int | float) else None,
        "format": f"inspect-ai {package or '(version not recorded)'} (log v{log.version})",
        "schema": f"inspect-ai/log-v{log.version}/{log.container}",
        "recorded_at": spec.get("created"),
        "runs_per_case": max(runs) if runs else None,
        "cases_total": len(cases),
        "cases_evaluated": sum(1 for c in cases if c[6] is not None),
        "cases_errored": sum(1 for c in cases if c[3] == "model_error"),
        "cases_skipped": sum(1 for c in cases if c[3] == "skipped"),
        "runs_min": min(runs) if runs else None,
        "cases_with_trials": sum(1 for c in cases if c[14] > 0),
        "harness": INSPECT,
        "log_status": log.status,
        "metadata": json.dumps(metadata, ensure_ascii=False, default=str),
        "harness_facts": json.dumps(
            {
                "scorer": scorer,
                "pass_threshold": threshold,
                "epochs": epochs if isinstance(epochs, int) else None,
                "complete": log.status == COMPLETE_STATUS,
                "container": log.container,
                "error": log.error,
            },
            ensure_ascii=False,
        ),
    }


def _reduction_warnings(
    log: InspectLog, scorer: str, counts: dict[str, tuple[int, int]]
) -> list[str]:
    """Where the log stores pass_at_<k> / pass_k_<k> for the chosen scorer, the value each
    sample's epochs give must be the stored one."""
    warnings = []
    for (reducer, k), stored in sorted(pass_reductions(log, scorer).items()):
        wrong = []
        for sample, value in stored.items():
            if sample not in counts or value != value:  # NaN: fewer than k epochs
                continue
            n, c = counts[sample]
            if n < k:
                continue
            mine = _pass_at(n, c, k) if reducer == "pass_at" else comb(c, k) / comb(n, k)
            if abs(mine - value) > REDUCTION_TOLERANCE:
                wrong.append(f"sample {sample}: stored {value:.4f}, epochs give {mine:.4f}")
        if wrong:
            warnings.append(
                f"its stored {reducer}_{k} reduction of {scorer!r} disagrees with its epochs "
                f"for {len(wrong)} sample{'s' if len(wrong) > 1 else ''} ({'; '.join(wrong[:3])}): "
                "the log was edited after "
                "Inspect wrote it; relidash shows the value its epochs give"
            )
    return warnings


def _pass_at(n: int, c: int, k: int) -> float:
    return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _latency(seconds: Any) -> float | None:
    if isinstance(seconds, int | float) and not isinstance(seconds, bool):
        return float(seconds) * 1000.0
    return None


def _short(error: Any) -> str:
    text = str(error).strip()
    return text if len(text) <= MAX_ERROR_TEXT else text[:MAX_ERROR_TEXT] + "…"
