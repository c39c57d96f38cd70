"""The load-and-estimate path: bring the catalog up to date with a reports directory and
compute, once per report, the metrics, lottery ranks and stored-block checks that every
page and CLI command then reads.

Must not: import Streamlit or Altair, hold SQL text, or print; progress goes through the
callback the caller passes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np

from dashboard.analysis.report_metrics import (
    MetricInputs,
    MetricsBatch,
    PendingReport,
    receive_pickled,
    reports_metrics,
    send_pickled,
)
from dashboard.data.catalog.queries import fetch_rows, load_query
from dashboard.data.load.ingest import (
    DEFAULT_MAX_BYTES,
    IngestResult,
    ProgressFn,
    ingest_directory,
)
from dashboard.data.load.results import (
    mark_metrics_complete,
    metrics_complete,
    store_report_results,
)
from dashboard.data.sources.reports import ReportSource


def refresh_catalog(
    con: duckdb.DuckDBPyConnection,
    reports_dir: Path | ReportSource,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: ProgressFn | None = None,
) -> IngestResult:
    """Bring the catalog up to date with the directory (or another source: a prefix in
    object storage) and compute metrics for new reports.

    Each parsed batch's metrics are computed beside the load while DuckDB parses the next
    batch (pure numpy; the worker never touches the connection): in a thread, or for a
    load of at least PROCESS_MIN_FILES files in a worker process, since numpy's many small
    operations hold the GIL and a thread would only take turns with the load. Finished
    results are stored between batches, so memory holds a batch or two of them.
    """
    stored = 0
    # every report loaded before this load has its metrics: those missing afterwards are
    # this load's, all computed below, and the search for them can be skipped
    complete_before = metrics_complete(con)
    with _MetricsWorker() as worker:
        ahead: list[Future[MetricsBatch]] = []

        def store_finished(every: bool = False) -> None:
            """Store the results finished (`every`: all of them, waiting for the rest)."""
            nonlocal stored
            done = list(ahead) if every else [future for future in ahead if future.done()]
            for future in done:
                computed = worker.result(future)
                store_metrics(con, computed)
                stored += len(computed.report_ids)
            ahead[:] = [future for future in ahead if future not in done]

        def compute_ahead(report_ids: list[int]) -> None:
            # this batch's inputs go first, so that the worker starts on them at once (the
            # last batch's metrics are what the end of the load waits for); then, between
            # batches, the results finished meanwhile are stored
            pool_inputs = _metric_inputs(con, report_ids)
            if pool_inputs:
                ahead.append(worker.submit(pool_inputs))
            store_finished()

        def progress_seen(looked: int, total: int) -> None:
            worker.expect(total)
            if progress:
                progress(looked, total)

        result = ingest_directory(
            con, reports_dir, max_bytes=max_bytes, progress=progress_seen, on_batch=compute_ahead
        )
        store_finished(every=True)  # the last batches', before any report is looked for
    # the anti-join that finds reports without metrics reads every report: skipped when
    # the catalog was marked complete before this load
    if complete_before:
        if not metrics_complete(con):  # a load with files to look at cleared the mark
            mark_metrics_complete(con)
        pending = 0
    else:
        pending = compute_pending_metrics(con)
    if pending or stored:
        # The metrics pass may add report warnings (stored blocks that disagree).
        problems = fetch_rows(con, "catalog/problem_count")
        result = replace(result, problems=int(problems[0]["n"]))
    return result


# A load of at least this many files computes its metrics in a worker process: starting
# one (a fresh interpreter importing numpy) costs the other core more than a smaller
# load's metrics.
PROCESS_MIN_FILES = 2000


class _MetricsWorker:
    """Where a load's metrics are computed: a thread until the load turns out large
    (`expect`), then a worker process (_MetricsProcess). Should the process fail, the
    batches it held are computed again in the thread: the numbers never depend on which
    one ran."""

    def __init__(self) -> None:
        self.thread = ThreadPoolExecutor(max_workers=1)
        self.process: _MetricsProcess | None = None
        self.inputs: dict[Future[MetricsBatch], list[MetricInputs]] = {}

    def expect(self, files: int) -> None:
        if files >= PROCESS_MIN_FILES and self.process is None:
            try:
                self.process = _MetricsProcess()
            except OSError:
                self.process = None

    def submit(self, inputs: list[MetricInputs]) -> Future[MetricsBatch]:
        if self.process is not None:
            future = self.process.submit(inputs)
            self.inputs[future] = inputs
            return future
        return self.thread.submit(reports_metrics, inputs)

    def result(self, future: Future[MetricsBatch]) -> MetricsBatch:
        inputs = self.inputs.pop(future, None)
        try:
            return future.result()
        except _WorkerGone:
            assert inputs is not None
            return reports_metrics(inputs)

    def __enter__(self) -> _MetricsWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.shutdown()
        if self.process is not None:
            self.process.close()


class _WorkerGone(Exception):
    """The metrics process ended before answering."""


class _MetricsProcess:
    """A Python process running serve_metrics: batches of metric inputs go down its stdin,
    their results come back on its stdout in the same order (length-prefixed pickles
    between two processes of this interpreter). A plain subprocess, not multiprocessing:
    spawn would import the caller's main script again in the child."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "from dashboard.analysis.report_metrics import serve_metrics; serve_metrics()",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": path},
            # its own session: Ctrl-C at the terminal stops the load, which closes the pipe
            # and so ends the worker; reached by the signal too, it printed a traceback
            start_new_session=True,
        )
        self.pending: deque[Future[MetricsBatch]] = deque()
        self.lock = threading.Lock()
        threading.Thread(target=self._read_results, daemon=True).start()

    def submit(self, inputs: list[MetricInputs]) -> Future[MetricsBatch]:
        future: Future[MetricsBatch] = Future()
        with self.lock:
            self.pending.append(future)
        try:
            send_pickled(self.proc.stdin, inputs)
        except OSError:
            future.set_exception(_WorkerGone())
        return future

    def _read_results(self) -> None:
        while True:
            try:
                results = receive_pickled(self.proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError):
                results = None
            with self.lock:
                if results is None:
                    while self.pending:
                        future = self.pending.popleft()
                        if not future.done():
                            future.set_exception(_WorkerGone())
                    return
                future = self.pending.popleft()
            future.set_result(results)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def compute_pending_metrics(con: duckdb.DuckDBPyConnection) -> int:
    """Metrics, lottery ranks and stored-block checks for reports that lack them."""
    if not fetch_rows(con, "read/any_report_without_metrics"):
        mark_metrics_complete(con)
        return 0
    pending = [
        int(r["report_id"])
        for r in fetch_rows(con, "read/reports_without_metrics", report_ids=None)
    ]
    store_metrics(con, reports_metrics(_metric_inputs(con, pending)))
    mark_metrics_complete(con)
    return len(pending)


def store_metrics(con: duckdb.DuckDBPyConnection, computed: MetricsBatch) -> None:
    store_report_results(con, computed.metrics, computed.lottery, computed.warnings)


def _metric_inputs(con: duckdb.DuckDBPyConnection, report_ids: list[int]) -> list[MetricInputs]:
    """Each listed report still lacking metrics, with its evaluated cases' n, c and index."""
    pending = fetch_rows(con, "read/reports_without_metrics", report_ids=report_ids)
    if not pending:
        return []
    counts = con.execute(
        load_query("read/evaluated_case_counts"),
        {"report_ids": [int(row["report_id"]) for row in pending]},
    ).fetchnumpy()
    report_col = np.asarray(counts["report_id"], dtype=np.int64)
    # rows arrive grouped by report: slice each report's cases out by its bounds
    ids, first = np.unique(report_col, return_index=True)
    starts = first.tolist()
    # none at all when no listed report has an evaluated case (each errored or was empty)
    ends = [*starts[1:], len(report_col)] if starts else []
    bounds = dict(zip(ids.tolist(), zip(starts, ends, strict=True), strict=True))
    all_n = np.asarray(counts["n"], dtype=np.int64)
    all_c = np.asarray(counts["c"], dtype=np.int64)
    all_idx = np.asarray(counts["case_idx"], dtype=np.int64)
    inputs = []
    for row in pending:
        report = PendingReport(**row)
        lo, hi = bounds.get(report.report_id, (0, 0))
        inputs.append((report, all_n[lo:hi], all_c[lo:hi], all_idx[lo:hi]))
    return inputs
