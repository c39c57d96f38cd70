"""Each report's metrics, lottery ranks and stored-block checks, from its evaluated
cases' trial and pass counts (no I/O), and the worker process that computes them beside a
load (dashboard/analysis/loading.py runs it).

Must not: import DuckDB, pandas or Streamlit, or hold SQL text: the worker process imports
this module alone (numpy and the stats), so it starts in a fraction of the time the load's
own imports take.
"""

from __future__ import annotations

import json
import pickle
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dashboard.analysis.estimates import METRICS, is_missing, k_max_for
from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    PassKResult,
    rank_lottery,
    suite_pass_k,
    suites_pass_k,
)

# Stored 0.16+ blocks are rounded to 4 decimals by multivon-eval.
STORED_DECIMALS = 4


@dataclass(frozen=True)
class PendingReport:
    report_id: int
    file: str
    runs_per_case: Any
    stored_pass_at_k: Any
    stored_pass_hat_k: Any


# Each `metrics` column's array type (METRIC_COLUMNS order: report_id, metric, k, value,
# ci_low, ci_high, method, n_cases, runs, unknown_reason): whole numbers, estimates (None
# -> NaN, stored as NULL), text. Typed, not object arrays where the values are numbers:
# DuckDB infers an object column's type from a sample of its rows, which can make an
# unsampled 2.5 an INTEGER 2.
METRIC_DTYPES = (np.int64, object, np.int64, np.float64, np.float64, np.float64, object,
                 np.int64, np.int64, object)  # fmt: skip


@dataclass(frozen=True)
class MetricsBatch:
    """What the metrics pass stores for a batch of reports, a column at a time: the worker
    process's answer, pickled as a few arrays and scanned by DuckDB as they are. (Row
    tuples would cost the load's main thread their unpickling and their conversion to
    columns, holding the interpreter lock.)"""

    report_ids: list[int]  # the reports computed, in input order
    metrics: tuple[np.ndarray, ...]  # METRIC_COLUMNS, typed as METRIC_DTYPES
    lottery: tuple[np.ndarray, np.ndarray, np.ndarray]  # report_id, case_idx, rank
    warnings: list[tuple[str, str]]  # (file, reason)


def metric_columns(rows: Sequence[tuple[Any, ...]]) -> tuple[np.ndarray, ...]:
    """`metrics` rows (METRIC_COLUMNS order) as one typed array per column."""
    columns = zip(*rows, strict=True) if rows else ([] for _ in METRIC_DTYPES)
    return tuple(np.array(c, dtype=t) for c, t in zip(columns, METRIC_DTYPES, strict=True))


MetricInputs = tuple[PendingReport, np.ndarray, np.ndarray, np.ndarray]  # report, n, c, case_idx


def reports_metrics(inputs: Sequence[MetricInputs]) -> MetricsBatch:
    """The reports' metric rows, lottery ranks and stored-block warnings (no I/O).

    The reports' estimates are computed together (suites_pass_k: the same numbers as one
    report at a time, with one bootstrap per number of cases instead of one per report).
    """
    estimates = suites_pass_k(
        [
            (n, c, list(range(1, k_max_for(report.runs_per_case) + 1)), metric)
            for report, n, c, _ in inputs
            for metric in METRICS
        ]
    )
    per_report = len(METRICS)
    rows: list[tuple[Any, ...]] = []
    lottery: list[tuple[int, int, int]] = []
    warnings: list[tuple[str, str]] = []
    for i, (report, n, c, case_idx) in enumerate(inputs):
        results = dict(zip(METRICS, estimates[i * per_report : (i + 1) * per_report], strict=True))
        rid = report.report_id
        rows += [_metric_row(rid, r) for per_k in results.values() for r in per_k]
        # a report whose cases recorded no run (an Inspect log none of whose epochs was
        # scored or errored) has runs_per_case 0: its lottery is ranked at k = 1
        default_k = 1 if is_missing(report.runs_per_case) else max(1, int(report.runs_per_case))
        lottery += [
            (rid, int(case_idx[idx]), rank)
            for rank, idx in enumerate(rank_lottery(n, c, default_k), start=1)
        ]
        for metric, stored in (
            (METRIC_PASS_AT_K, report.stored_pass_at_k),
            (METRIC_PASS_HAT_K, report.stored_pass_hat_k),
        ):
            problem = stored_block_problem(metric, stored, n, c, results[metric])
            if problem:
                warnings.append((report.file, problem))
    ranks = np.array(lottery, dtype=np.int64).reshape(-1, 3)
    return MetricsBatch(
        [report.report_id for report, _, _, _ in inputs],
        metric_columns(rows),
        (ranks[:, 0].copy(), ranks[:, 1].copy(), ranks[:, 2].copy()),
        warnings,
    )


def _metric_row(report_id: int, r: PassKResult) -> tuple[Any, ...]:
    """One `metrics` row, in METRIC_COLUMNS order."""
    return (
        report_id, r.metric, r.k, r.value, r.ci_low, r.ci_high, r.method, r.n_cases, r.runs,
        r.unknown_reason,
    )  # fmt: skip


def stored_block_problem(
    metric: str,
    stored: Any,
    n: np.ndarray,
    c: np.ndarray,
    known: Sequence[PassKResult] = (),
) -> str | None:
    """A reason when a 0.16+ report's stored pass@k / pass^k block disagrees with its cases."""
    if not isinstance(stored, str):  # absent (pre-0.16, or a single-run report)
        return None
    try:
        block = json.loads(stored)
        if block is None:
            return None
        k = int(block["k"])
        stored_value = block.get("value")
        stored_ci = block.get("ci_95")
    except (ValueError, TypeError, KeyError):
        return f"its stored {metric} block is malformed; relidash shows the value its cases give"
    if k < 1:
        return f"its stored {metric} block has k = {k}; relidash shows the value its cases give"
    # `known` holds this metric for k = 1..K already; recompute only beyond it
    (result,) = known[k - 1 : k] or suite_pass_k(n, c, [k], metric)
    name = metric.replace("k", str(k))
    if result.value is None or stored_value is None:
        if (result.value is None) == (stored_value is None):
            return None
        shown = "UNKNOWN" if result.value is None else f"{result.value:.4f}"
        return (
            f"its stored {name} is {stored_value if stored_value is not None else 'UNKNOWN'} "
            f"but its cases give {shown}: the file was edited or corrupted after multivon-eval "
            "wrote it; relidash shows the value its cases give"
        )
    recomputed = [round(result.value, STORED_DECIMALS)]
    stored_values = [stored_value]
    if stored_ci is not None:
        recomputed += [
            round(result.ci_low or 0.0, STORED_DECIMALS),
            round(result.ci_high or 0.0, STORED_DECIMALS),
        ]
        # a hand-edited CI may be anything; a wrong shape is a disagreement, not a crash
        stored_values += stored_ci if isinstance(stored_ci, list) else [stored_ci]
    try:
        agree = all(
            abs(float(a) - float(b)) <= 0.5 * 10**-STORED_DECIMALS + 1e-12
            for a, b in zip(recomputed, stored_values, strict=True)
        )
    except (TypeError, ValueError):
        agree = False
    if agree:
        return None
    return (
        f"its stored {name} = {stored_value} (CI {stored_ci}) disagrees with its cases, which give "
        f"{result.value:.4f} [{result.ci_low:.4f}, {result.ci_high:.4f}]: the file was edited or "
        "corrupted after multivon-eval wrote it; relidash shows the value its cases give"
    )


def send_pickled(stream: Any, value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def receive_pickled(stream: Any) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)  # noqa: S301 (our own child process, over its own pipe)


def serve_metrics() -> None:
    """The metrics process: answer each batch of inputs on stdin with its metrics on stdout,
    until stdin closes."""
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    while True:
        try:
            inputs = receive_pickled(source)
        except EOFError:
            return
        send_pickled(sink, reports_metrics(inputs))
