"""The one code path from a reports directory to the numbers relidash shows.

The CLI and the Streamlit pages both call these functions: load (data layer), estimate
(stats layer), and shape the results into frames and JSON-ready dicts. No Streamlit,
no Altair, no SQL text here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import numpy as np

from dashboard.data.ingest import (
    DEFAULT_MAX_BYTES,
    IngestResult,
    ProgressFn,
    catalog_version,
    ingest_directory,
)
from dashboard.data.queries import fetch_rows, load_query, run_query
from dashboard.data.results import (
    cached_summary,
    store_records,
    store_report_results,
    store_summary,
    stored_records,
)

if TYPE_CHECKING:
    import pandas as pd

from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    PassKResult,
    rank_lottery,
    suite_pass_k,
)

METRICS = (METRIC_PASS_AT_K, METRIC_PASS_HAT_K)
MIN_K_MAX = 8
# Stored 0.16+ blocks are rounded to 4 decimals by multivon-eval.
STORED_DECIMALS = 4


def k_max_for(runs_max: Any) -> int:
    """Largest k reported: at least 8, and every k up to the largest run count."""
    if is_missing(runs_max):
        return MIN_K_MAX
    return max(MIN_K_MAX, int(runs_max))


def refresh_catalog(
    con: duckdb.DuckDBPyConnection,
    reports_dir: Path,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: ProgressFn | None = None,
) -> IngestResult:
    """Bring the catalog up to date with the directory and compute metrics for new reports.

    Each parsed batch's metrics are computed in a worker thread while DuckDB parses the
    next batch (pure numpy; the worker never touches the connection), then stored at once.
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        ahead: dict[int, Future[ReportMetrics]] = {}

        def compute_ahead(report_ids: list[int]) -> None:
            for report, n, c, case_idx in _metric_inputs(con, report_ids):
                ahead[report.report_id] = pool.submit(report_metrics, report, n, c, case_idx)

        result = ingest_directory(
            con, reports_dir, max_bytes=max_bytes, progress=progress, on_batch=compute_ahead
        )
        ready = {report_id: future.result() for report_id, future in ahead.items()}
    if compute_pending_metrics(con, ready):
        # The metrics pass may add report warnings (stored blocks that disagree).
        problems = con.execute("SELECT count(*) FROM problems").fetchall()
        result = replace(result, problems=int(problems[0][0]))
    return result


def pass_k_results(n: np.ndarray, c: np.ndarray, k_max: int) -> dict[str, list[PassKResult]]:
    """pass@k and pass^k for k = 1..k_max over the given evaluated cases (in case order)."""
    ks = range(1, k_max + 1)
    return {metric: suite_pass_k(n, c, ks, metric) for metric in METRICS}


def evaluated_arrays(outcomes: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(n, c) of the cases that count, in the frame's order."""
    counted = outcomes[outcomes["n"].notna()]
    return counted["n"].to_numpy(dtype=np.int64), counted["c"].to_numpy(dtype=np.int64)


@dataclass(frozen=True)
class PendingReport:
    report_id: int
    file: str
    runs_per_case: Any
    stored_pass_at_k: Any
    stored_pass_hat_k: Any


@dataclass(frozen=True)
class ReportMetrics:
    """What the metrics pass stores for one report."""

    metric_rows: list[tuple[Any, ...]]  # METRIC_COLUMNS order
    lottery_rows: list[tuple[int, int, int]]  # (report_id, case_idx, rank)
    warnings: list[tuple[str, str]]  # (file, reason)


def compute_pending_metrics(
    con: duckdb.DuckDBPyConnection, ready: Mapping[int, ReportMetrics] | None = None
) -> int:
    """Metrics, lottery ranks and stored-block checks for reports that lack them.

    `ready` holds results already computed (by `refresh_catalog`'s worker); they are
    stored as they are, and every other pending report is computed here.
    """
    ready = ready or {}
    if not con.execute(
        "SELECT 1 FROM reports WHERE report_id NOT IN (SELECT report_id FROM metrics) LIMIT 1"
    ).fetchall():
        return 0
    pending = fetch_rows(con, "reports_without_metrics", report_ids=None)
    rest = [int(r["report_id"]) for r in pending if int(r["report_id"]) not in ready]
    computed = [ready[int(r["report_id"])] for r in pending if int(r["report_id"]) in ready]
    if rest:
        computed += [report_metrics(*inputs) for inputs in _metric_inputs(con, rest)]
    store_report_results(
        con,
        [row for m in computed for row in m.metric_rows],
        [row for m in computed for row in m.lottery_rows],
        [row for m in computed for row in m.warnings],
    )
    return len(pending)


def _metric_inputs(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> list[tuple[PendingReport, np.ndarray, np.ndarray, np.ndarray]]:
    """Each listed report still lacking metrics, with its evaluated cases' n, c and index."""
    pending = fetch_rows(con, "reports_without_metrics", report_ids=report_ids)
    if not pending:
        return []
    counts = con.execute(
        load_query("evaluated_case_counts"), {"report_ids": report_ids}
    ).fetchnumpy()
    report_col = np.asarray(counts["report_id"], dtype=np.int64)
    # rows arrive grouped by report: slice each report's cases out by its bounds
    ids, starts = np.unique(report_col, return_index=True)
    bounds = dict(
        zip(
            ids.tolist(),
            zip(starts.tolist(), [*starts[1:].tolist(), len(report_col)], strict=True),
            strict=True,
        )
    )
    all_n = np.asarray(counts["n"], dtype=np.int64)
    all_c = np.asarray(counts["c"], dtype=np.int64)
    all_idx = np.asarray(counts["case_idx"], dtype=np.int64)
    inputs = []
    for row in pending:
        report = PendingReport(**row)
        lo, hi = bounds.get(report.report_id, (0, 0))
        inputs.append((report, all_n[lo:hi], all_c[lo:hi], all_idx[lo:hi]))
    return inputs


def report_metrics(
    report: PendingReport, n: np.ndarray, c: np.ndarray, case_idx: np.ndarray
) -> ReportMetrics:
    """One report's metric rows, lottery ranks and stored-block warnings (no I/O)."""
    rid = report.report_id
    results = pass_k_results(n, c, k_max_for(report.runs_per_case))
    metric_rows = [_metric_row(rid, r) for per_k in results.values() for r in per_k]
    default_k = 1 if is_missing(report.runs_per_case) else int(report.runs_per_case)
    lottery_rows = [
        (rid, int(case_idx[idx]), rank)
        for rank, idx in enumerate(rank_lottery(n, c, default_k), start=1)
    ]
    warnings = []
    for metric, stored in (
        (METRIC_PASS_AT_K, report.stored_pass_at_k),
        (METRIC_PASS_HAT_K, report.stored_pass_hat_k),
    ):
        problem = stored_block_problem(metric, stored, n, c, results[metric])
        if problem:
            warnings.append((report.file, problem))
    return ReportMetrics(metric_rows, lottery_rows, warnings)


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


# ---- shaping for the CLI and pages -------------------------------------------------------


def report_overview(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return run_query(con, "report_overview")


def load_problems(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    return run_query(con, "load_problems")


def _metric_cell(value: Any, low: Any, high: Any, reason: str | None) -> dict[str, Any]:
    return {
        "value": _num(value),
        "ci_low": _num(low),
        "ci_high": _num(high),
        "unknown_reason": reason or None,
    }


def is_missing(x: Any) -> bool:
    """None, NaN, NaT or pandas' NA (without importing pandas)."""
    if x is None:
        return True
    try:
        return bool(x != x)
    except TypeError:  # pandas.NA refuses to be a bool
        return True


def _text(x: Any) -> str | None:
    return x if isinstance(x, str) else None


def _num(x: Any) -> float | None:
    return None if is_missing(x) else float(x)


def _count(x: Any) -> int | None:
    return None if is_missing(x) else int(x)


def stored_pass_k(
    con: duckdb.DuckDBPyConnection, report_ids: list[int]
) -> dict[tuple[int, str, int], PassKResult]:
    """The default-policy results the load stored, by (report_id, metric, k).

    Equal to suite_pass_k over the reports' evaluated cases (the load computed them so),
    so pages under the default policy read them instead of estimating again.
    """
    return {
        (rid, metric, k): PassKResult(k, metric, value, low, high, n_cases, runs, method, reason)
        for rid, metric, k, value, low, high, method, n_cases, runs, reason in con.execute(
            load_query("report_metrics"), {"report_ids": report_ids}
        ).fetchall()
    }


def report_records(
    con: duckdb.DuckDBPyConnection, overview: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The `reports` entries of `relidash summary --json`, one per overview row.

    Built from plain rows: at thousands of reports, DataFrame grouping costs seconds.
    """
    # all reports in one scan; a few (after a load that changed a few files) by id
    wanted = None if len(overview) > 64 else [row["report_id"] for row in overview]
    metrics: dict[tuple[int, str], dict[str, dict[str, Any]]] = {}
    for rid, metric, k, value, low, high, _, _, _, reason in con.execute(
        load_query("report_metrics"), {"report_ids": wanted}
    ).fetchall():
        metrics.setdefault((rid, metric), {})[str(k)] = _metric_cell(value, low, high, reason)
    lottery: dict[int, list[dict[str, Any]]] = {}
    for rid, _, _, case_id, text, passes, runs in con.execute(
        load_query("lottery_cases"), {"report_ids": wanted}
    ).fetchall():
        lottery.setdefault(rid, []).append(
            {"case_id": _text(case_id), "input": text, "passes": passes, "runs": runs}
        )
    records = []
    for row in overview:
        rid, k_max = row["report_id"], k_max_for(row["runs_max"])
        cells = {
            key: {k: v for k, v in metrics.get((rid, metric), {}).items() if int(k) <= k_max}
            for key, metric in (("pass_at_k", METRIC_PASS_AT_K), ("pass_hat_k", METRIC_PASS_HAT_K))
        }
        records.append(
            {
                "file": row["file"],
                "suite": row["suite"],
                "release": row["release"],
                "format": row["format"],
                "upgraded": bool(row["upgraded"]),
                "cases": {
                    "total": int(row["cases_total"]),
                    "evaluated": int(row["cases_evaluated"]),
                    "errored": int(row["cases_errored"]),
                    "skipped": int(row["cases_skipped"]),
                    "excluded": int(row["cases_excluded"]),
                },
                "runs": {"min": _count(row["runs_min"]), "max": _count(row["runs_max"])},
                **cells,
                "lottery": lottery.get(rid, []),
            }
        )
    return records


def latest_rows(overview: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One report per (suite, release): the last in report_overview's order, i.e. the most
    recent (its own time, else file mtime)."""
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for row in overview:
        latest[(row["suite"], row["release"])] = row
    return list(latest.values())


def latest_per_release(overview: pd.DataFrame) -> pd.DataFrame:
    """latest_rows for a DataFrame of report_overview rows (the pages' form)."""
    return overview.groupby(["suite", "release"], sort=False).tail(1).reset_index(drop=True)


def summary_text(con: duckdb.DuckDBPyConnection, by: str = "file") -> str:
    """summary_json as compact JSON text.

    By file it is joined from each report's stored entry (0.1 s for 2,000 reports), so
    the whole document is not stored again: writing it after a load that changed one
    file cost more than joining it. By release it is kept whole for the catalog version
    it describes.
    """
    if by == "file":
        return _file_summary_text(con)
    version = catalog_version(con)
    text = cached_summary(con, by, version)
    if text is None:
        text = json.dumps(summary_json(con, by), ensure_ascii=False)
        store_summary(con, by, version, text)
    return text


def _file_summary_text(con: duckdb.DuckDBPyConnection) -> str:
    """json.dumps(summary_json(con)), assembled from each report's stored entry: after a
    load that changed one file, one entry is rebuilt rather than thousands."""
    overview = fetch_rows(con, "report_overview")
    entries = stored_records(con)
    missing = [row for row in overview if row["report_id"] not in entries]
    fresh = [
        (row["report_id"], json.dumps(record, ensure_ascii=False))
        for row, record in zip(missing, report_records(con, missing), strict=True)
    ]
    store_records(con, fresh)
    entries.update(fresh)
    problems = json.dumps(_problem_entries(con), ensure_ascii=False)
    reports = ", ".join(entries[row["report_id"]] for row in overview)
    return f'{{"reports": [{reports}], "problems": {problems}}}'


def _problem_entries(con: duckdb.DuckDBPyConnection) -> list[dict[str, str]]:
    return [
        {"file": file, "reason": reason, "scope": scope}
        for file, scope, reason in con.execute(load_query("load_problems")).fetchall()
    ]


def summary_json(con: duckdb.DuckDBPyConnection, by: str = "file") -> dict[str, Any]:
    """The document `relidash summary --json` prints."""
    overview = fetch_rows(con, "report_overview")
    problems = _problem_entries(con)
    if by == "release":
        files: dict[tuple[str, str], list[str]] = {}
        for row in overview:
            files.setdefault((row["suite"], row["release"]), []).append(row["file"])
        latest = latest_rows(overview)
        records = report_records(con, latest)
        for record, row in zip(records, latest, strict=True):
            record["release_rank"] = int(row["release_rank"])
            record["files"] = files[(row["suite"], row["release"])]
        return {"releases": records, "problems": problems}
    return {"reports": report_records(con, overview), "problems": problems}
