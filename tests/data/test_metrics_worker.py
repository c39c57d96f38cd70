"""A large load computes its metrics in a worker process (dashboard/analysis/loading.py
_MetricsProcess): the rows it stores equal those of the in-thread path, and a worker that
dies mid-load costs time, not numbers."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from report_files import is_report

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.load.ingest import ingest_directory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    reports = tmp_path_factory.mktemp("worker") / "reports"
    reports.mkdir()
    for source in sorted(p for p in FIXTURES.glob("*.json") if is_report(p)):
        shutil.copyfile(source, reports / source.name)
    return reports


def metric_tables(root: Path) -> list[Any]:
    con = open_catalog(MEMORY)
    try:
        loading.refresh_catalog(con, root)
        return [
            con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
            for table in ("metrics", "lottery", "problems")
        ]
    finally:
        con.close()


def test_the_worker_process_gives_the_threads_numbers(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Any] = []
    real = loading._MetricsProcess

    def recorded() -> Any:
        process = real()
        started.append(process)
        return process

    in_thread = metric_tables(root)
    monkeypatch.setattr(loading, "PROCESS_MIN_FILES", 1)
    monkeypatch.setattr(loading, "_MetricsProcess", recorded)
    in_process = metric_tables(root)
    assert len(started) == 1, "the load did not start a worker process"
    assert started[0].proc.returncode == 0, "the worker did not end cleanly"
    assert len(in_thread[0]) > 100
    assert in_process == in_thread


def test_a_worker_that_dies_costs_no_numbers(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    in_thread = metric_tables(root)
    real = loading._MetricsProcess

    def killed_at_once() -> Any:
        process = real()
        os.kill(process.proc.pid, signal.SIGKILL)
        process.proc.wait()
        return process

    monkeypatch.setattr(loading, "PROCESS_MIN_FILES", 1)
    monkeypatch.setattr(loading, "_MetricsProcess", killed_at_once)
    assert metric_tables(root) == in_thread


def test_the_worker_is_out_of_reach_of_ctrl_c_and_ends_with_the_pipe(root: Path) -> None:
    """Ctrl-C reaches the terminal's foreground process group: the worker runs in its own
    session, keeps answering, and ends when the parent closes its pipe."""
    con = open_catalog(MEMORY)
    try:
        ingest_directory(con, root)  # reports without their metrics yet
        ids = [r[0] for r in con.execute("SELECT report_id FROM reports ORDER BY 1").fetchall()]
        inputs = loading._metric_inputs(con, ids)
    finally:
        con.close()
    process = loading._MetricsProcess()
    try:
        assert os.getsid(process.proc.pid) != os.getsid(0)
        assert os.getpgid(process.proc.pid) != os.getpgid(0)
        answered = process.submit(inputs).result(timeout=60)
        assert answered.report_ids == ids
        assert sorted(set(answered.metrics[0].tolist())) == ids  # report_id, a row per k
    finally:
        process.close()
    assert process.proc.returncode == 0, "the worker did not end when its pipe closed"


def test_the_worker_process_imports_neither_duckdb_nor_pandas() -> None:
    """The worker starts beside the load on the other core: what it imports is time the
    load waits for its first results (DuckDB and the load's own modules are slow imports)."""
    probe = (
        "import sys; from dashboard.analysis.report_metrics import serve_metrics; "
        "print(sorted(m for m in ('duckdb', 'pandas', 'streamlit') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.stdout.strip() == "[]"


def test_stored_results_keep_every_value_and_every_unknown() -> None:
    """The rows reach the catalog as they were computed: UNKNOWN stays NULL, and an estimate
    of 0.5 after thousands of UNKNOWN rows and a whole-number 1 stays 0.5 (a column type
    inferred from a sample of the rows made it 0)."""
    from dashboard.analysis.report_metrics import metric_columns
    from dashboard.data.load.results import METRIC_COLUMNS, store_report_results

    unknown = (None, None, None, "", 3, 3, "UNKNOWN — k exceeds the trials recorded")
    rows = [(i, "pass^k", 4, *unknown) for i in range(3000)]
    rows.append((3000, "pass@k", 1, 1, 1, 1, "wilson", 40, 8, ""))
    rows.append((3001, "pass@k", 1, 0.5, 0.125, 0.875, "cluster-bootstrap", 40, 8, ""))
    con = open_catalog(MEMORY)
    try:
        ranks = [np.array(column, dtype=np.int64) for column in ((3000, 3000), (7, 2), (1, 2))]
        store_report_results(con, metric_columns(rows), ranks, [])
        stored = con.execute(f"SELECT {', '.join(METRIC_COLUMNS)} FROM metrics").fetchall()
        lottery = con.execute("SELECT * FROM lottery ORDER BY rank").fetchall()
    finally:
        con.close()
    assert sorted(stored) == sorted(rows)
    assert lottery == [(3000, 7, 1), (3000, 2, 2)]
