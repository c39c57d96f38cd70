"""Several processes on one catalog: DuckDB lets one process hold the file, so a second
`relidash` command waits for it (saying so on stderr, for at most --catalog-wait
seconds) instead of failing, and a server's snapshot waits for a writer to let go.

Real `relidash` processes run side by side; where the order matters, the test process
itself holds the catalog (DuckDB's lock is per process), and lets go once the command
has said it is waiting.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dashboard.data.catalog import open_catalog
from dashboard.data.load.snapshot import ServedCatalog
from dashboard.data.records.signoffs import read_signoffs

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports" / "code-agent"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
WAITING = "is in use by another relidash process; waiting for it"


def relidash(*argv: str) -> list[str]:
    return [sys.executable, "-m", "dashboard.cli", *argv]


def start(*argv: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        relidash(*argv),
        cwd=REPO,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    shutil.copytree(SAMPLES, root / "code-agent")
    return root


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "relidash.duckdb"


def expected_summary(reports: Path, tmp_path: Path) -> str:
    done = subprocess.run(
        relidash("summary", str(reports), "--catalog", str(tmp_path / "alone.duckdb")),
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_summaries_at_once_on_one_catalog_both_succeed_alike(
    reports: Path, catalog: Path, tmp_path: Path
) -> None:
    expected = expected_summary(reports, tmp_path)
    runs = [start("summary", str(reports), "--catalog", str(catalog)) for _ in range(2)]
    results = [(run.communicate(timeout=300), run.returncode) for run in runs]
    for (out, err), code in results:
        assert code == 0, err
        assert "Traceback" not in err
        assert out == expected


def test_a_summary_waits_for_a_catalog_another_process_holds(
    reports: Path, catalog: Path, tmp_path: Path
) -> None:
    expected = expected_summary(reports, tmp_path)
    holder = open_catalog(str(catalog))  # this process holds the file
    try:
        run = start("summary", str(reports), "--catalog", str(catalog))
        assert run.stderr is not None
        first = run.stderr.readline()  # the command's first word: it is waiting
        assert WAITING in first, first
        assert run.poll() is None
    finally:
        holder.close()
    out, err = run.communicate(timeout=300)
    assert run.returncode == 0, first + err
    assert out == expected


def test_the_wait_is_bounded(reports: Path, catalog: Path) -> None:
    holder = open_catalog(str(catalog))
    try:
        started = time.monotonic()
        done = subprocess.run(
            relidash("summary", str(reports), "--catalog", str(catalog), "--catalog-wait", "1"),
            cwd=REPO,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=300,
        )
        waited = time.monotonic() - started
    finally:
        holder.close()
    assert done.returncode == 2
    assert WAITING in done.stderr
    assert "still in use by another relidash process after 1 s of waiting" in done.stderr
    assert "Traceback" not in done.stderr
    assert waited >= 1


def test_concurrent_signoffs_on_one_catalog_all_land(
    reports: Path, catalog: Path, tmp_path: Path
) -> None:
    reviews = tmp_path / "reviews"
    count = 5
    runs = [
        start(
            "signoff", str(reports), "--suite", "code-agent", "--decision", "approved",
            "--by", f"reviewer {i}", "--reviews", str(reviews), "--catalog", str(catalog),
        )
        for i in range(count)
    ]  # fmt: skip
    for run in runs:
        _, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
    stored, problems = read_signoffs(reviews)
    assert problems == []
    assert sorted(s.record["by"] for s in stored) == [f"reviewer {i}" for i in range(count)]


def test_a_snapshot_waits_for_a_writer_to_let_go(reports: Path, catalog: Path) -> None:
    """A server copies the catalog under a read-only attach, which fails while another
    process writes it: the attach is tried again until the writer lets go."""
    open_catalog(str(catalog)).close()
    holder = subprocess.Popen(
        [
            sys.executable, "-c",
            "import sys, time, duckdb\n"
            "con = duckdb.connect(sys.argv[1])\n"
            "print('held', flush=True)\n"
            "time.sleep(1.5)\n"
            "con.close()\n",
            str(catalog),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "held"
        snapshot = ServedCatalog(reports, str(catalog))._take_snapshot()
        assert snapshot.execute("SELECT count(*) FROM meta").fetchall()[0][0] > 0
    finally:
        holder.wait(timeout=60)
