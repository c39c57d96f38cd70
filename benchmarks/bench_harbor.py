"""Harbor job benchmark: relidash's load of a folder of Harbor jobs.

Synthesizes JOBS jobs x TASKS tasks x ATTEMPTS attempts (10 x 200 x 5: 10,000 trial
folders) into a temporary directory, each trial folder a copy of a fixture trial's files
(tests/fixtures/harbor/h026-core-mini: result.json, config.json, lock.json,
artifacts/manifest.json, agent/ and verifier/ files) with its task, trial name, start
time and reward rewritten, and each job's config.json, lock.json and result.json from the
same fixture job. Then `relidash summary DIR --json --catalog PATH` as a subprocess:

- cold: no catalog (trial folders per second: the target is >= 2,000);
- warm: the same directory, the catalog in place (target < 1 s);
- one new job: one more job of the same size added, the catalog in place (target < 1 s).

Usage: python benchmarks/bench_harbor.py [--jobs 10] [--tasks 200] [--attempts 5]
Prints its figures; nothing is written inside the repository. Not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_load import fresh_bytecode, run_timed  # noqa: E402
from figures import keep  # noqa: E402

SOURCE_JOB = REPO / "tests" / "fixtures" / "harbor" / "h026-core-mini"
TARGET_TRIALS_PER_S = 2000.0
TARGET_WARM_S = 1.0
TARGET_NEW_JOB_S = 1.0


def _template() -> tuple[Path, dict[str, Any]]:
    """A fixture trial folder with a trajectory and no exception, and its result.json."""
    for folder in sorted(SOURCE_JOB.iterdir()):
        result = folder / "result.json"
        if result.is_file() and (folder / "agent" / "trajectory.json").is_file():
            data = json.loads(result.read_text())
            if data["exception_info"] is None:
                return folder, data
    raise SystemExit("bench_harbor: no clean trial in the fixture job")


def write_job(root: Path, index: int, tasks: int, attempts: int) -> int:
    """One job folder of tasks x attempts trial folders; returns the trial count."""
    template, result = _template()
    job = root / f"job-{index:03d}"
    job.mkdir()
    for name in ("config.json", "lock.json"):
        data = json.loads((SOURCE_JOB / name).read_text())
        if name == "config.json":
            data["job_name"] = job.name
        (job / name).write_text(json.dumps(data, indent=4))
    started = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(hours=index)
    job_result = json.loads((SOURCE_JOB / "result.json").read_text())
    job_result["started_at"] = started.replace(tzinfo=None).isoformat()
    job_result["stats"]["evals"] = {}
    (job / "result.json").write_text(json.dumps(job_result, indent=4))
    count = 0
    for task in range(tasks):
        for attempt in range(attempts):
            name = f"task-{task:04d}__{index:03d}{attempt:04d}"
            folder = job / name
            shutil.copytree(template, folder)
            data = dict(result)
            data["task_name"] = f"bench/task-{task:04d}"
            data["trial_name"] = name
            data["task_id"] = {"path": f"/nonexistent/bench/task-{task:04d}"}
            at = started + timedelta(seconds=attempt * 60 + task)
            data["started_at"] = at.isoformat().replace("+00:00", "Z")
            data["finished_at"] = (at + timedelta(seconds=5)).isoformat().replace("+00:00", "Z")
            reward = float((task * 7 + attempt * 3 + index) % 5 < 2)
            data["verifier_result"] = {"rewards": {"reward": reward}}
            (folder / "result.json").write_text(json.dumps(data, indent=4))
            count += 1
    return count


def summary(directory: Path, catalog: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(catalog.parent))
    command = [
        sys.executable, "-m", "dashboard.cli", "summary", str(directory), "--json",
        "--catalog", str(catalog),
    ]  # fmt: skip
    timed = run_timed(command, keep_stdout=True, env=env)
    document = json.loads(timed.stdout)
    assert document["reports"], "no report loaded"
    return timed.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--attempts", type=int, default=5)
    args = parser.parse_args()
    fresh_bytecode()
    with tempfile.TemporaryDirectory(prefix="bench-harbor-") as scratch:
        root = Path(scratch) / "jobs"
        root.mkdir()
        trials = sum(write_job(root, i, args.tasks, args.attempts) for i in range(args.jobs))
        files = sum(1 for _ in root.rglob("*.json"))
        catalog = Path(scratch) / "cache" / "catalog.duckdb"
        catalog.parent.mkdir()
        cold = summary(root, catalog)
        warm = min(summary(root, catalog) for _ in range(3))
        added = write_job(root, args.jobs, args.tasks, args.attempts)
        new_job = summary(root, catalog)
        rate = trials / cold
        print(f"corpus: {args.jobs} jobs x {args.tasks} tasks x {args.attempts} attempts = "
              f"{trials} trial folders ({files} JSON files)")  # fmt: skip
        print(f"cold:    {cold:6.2f} s  {rate:7.0f} trial folders/s  "
              f"(target >= {TARGET_TRIALS_PER_S:.0f}/s: {'met' if rate >= TARGET_TRIALS_PER_S else 'MISSED'})")  # fmt: skip
        print(f"warm:    {warm:6.2f} s  (target < {TARGET_WARM_S:g} s: "
              f"{'met' if warm < TARGET_WARM_S else 'MISSED'})")  # fmt: skip
        print(f"new job: {new_job:6.2f} s  ({added} trial folders; target < "
              f"{TARGET_NEW_JOB_S:g} s: {'met' if new_job < TARGET_NEW_JOB_S else 'MISSED'})")  # fmt: skip
    keep(
        "bench_harbor",
        "python benchmarks/bench_harbor.py",
        [
            (
                "Harbor jobs cold",
                f"{cold:.2f} s, {rate:,.0f} trial folders/s",
                f">= {TARGET_TRIALS_PER_S:,.0f}/s",
                _verdict(rate >= TARGET_TRIALS_PER_S),
            ),
            (
                "Harbor jobs warm",
                f"{warm:.2f} s",
                f"< {TARGET_WARM_S:g} s",
                _verdict(warm < TARGET_WARM_S),
            ),
            (
                "Harbor: one new job",
                f"{new_job:.2f} s ({added:,} trial folders)",
                f"< {TARGET_NEW_JOB_S:g} s",
                _verdict(new_job < TARGET_NEW_JOB_S),
            ),
        ],  # fmt: skip
        setting=f"{args.jobs} jobs x {args.tasks} tasks x {args.attempts} attempts "
        f"({trials:,} trial folders, {files:,} JSON files)",
    )


def _verdict(met: bool) -> str:
    return "met" if met else "missed"


if __name__ == "__main__":
    main()
