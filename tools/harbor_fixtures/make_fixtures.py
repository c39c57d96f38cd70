"""Write relidash's Harbor test fixtures by running Harbor itself, without docker.

Run from the repository root (needs root, ``unshare`` and network access to PyPI
the first time, to create the venvs)::

    python3 tools/harbor_fixtures/make_fixtures.py            # every job, then expected.json
    python3 tools/harbor_fixtures/make_fixtures.py --only h025-core-v1
    python3 tools/harbor_fixtures/make_fixtures.py --expected-only

It creates throwaway venvs with ``harbor==0.25.0`` and ``harbor==0.26.0``
(``/tmp/harbor025`` and ``/tmp/harbor026``, or ``$HARBOR025_VENV`` /
``$HARBOR026_VENV``) when they are missing, and runs ``harbor run -c <job config>``
with ``local_env:LocalEnvironment`` (each command a local process in a per-trial
chroot) and ``agents:CoinFlipAgent`` (seeded random pass/fail, crashes, stalls)
or the built-in ``oracle``. Tasks, these two modules and the jobs are staged
under a fixed directory (``/tmp/relidash-harbor-fixtures``, removed afterwards)
so the paths Harbor records are the same on every machine and name no folder
that exists; the finished job folders are then copied unchanged into
``tests/fixtures/harbor/``, with the task folders beside them in ``tasks/``.
``expected.json`` is computed by ``expected.py`` inside each job's own Harbor
venv, with Harbor's own functions.

What Harbor leaves to chance (ids, trial-name suffixes, timestamps, and which
attempt of a task started first) differs between runs; the outcomes per task
do not, since the agent's draw depends only on (seed, task, attempt number).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = REPO / "tests" / "fixtures" / "harbor"
STAGE = Path("/tmp/relidash-harbor-fixtures")
BASE_PYTHON = os.environ.get("HARBOR_BASE_PYTHON", "/root/.pyenv/versions/3.12.1/bin/python")
VENVS = {
    "0.25.0": Path(os.environ.get("HARBOR025_VENV", "/tmp/harbor025")),
    "0.26.0": Path(os.environ.get("HARBOR026_VENV", "/tmp/harbor026")),
}


def coin_flip(model: str, version: str, seed: int, profile: str = "base", **extra) -> dict:
    """An agents[] entry; the profile (chance of a right answer per task) is in agents.py."""
    kwargs = {"seed": seed, "agent_version": version, "profile": profile, "stall_sec": 6}
    return {
        "import_path": "agents:CoinFlipAgent",
        "model_name": model,
        "kwargs": {**kwargs, **extra},
    }


@dataclass
class Job:
    name: str
    harbor: str
    dataset: str
    agents: list[dict]
    n_attempts: int
    what: str
    # Kill the run (SIGKILL) once this many trials have finished; None runs it out.
    kill_after: int | None = None
    n_concurrent: int = 4
    extra: dict = field(default_factory=dict)


JOBS = [
    Job(
        "h025-core-v1",
        "0.25.0",
        "relidash-core",
        [coin_flip("openai/gpt-4o-mini", "1.0.0", 101)],
        4,
        "release 1 of the 0.25 pair: coin-flip 1.0.0",
    ),
    Job(
        "h025-core-v2",
        "0.25.0",
        "relidash-core",
        [coin_flip("openai/gpt-4o-mini", "1.1.0", 102, "improved")],
        4,
        "release 2 of the 0.25 pair: same model, coin-flip 1.1.0 (better on three tasks)",
    ),
    Job(
        "h026-core-mini",
        "0.26.0",
        "relidash-core",
        [coin_flip("anthropic/claude-haiku-4-5", "2.0.0", 201)],
        4,
        "release 1 of the 0.26 pair: coin-flip 2.0.0 on the smaller model",
    ),
    Job(
        "h026-core-large",
        "0.26.0",
        "relidash-core",
        [coin_flip("anthropic/claude-sonnet-4-5", "2.0.0", 202, "improved")],
        4,
        "release 2 of the 0.26 pair: same agent version on the larger model",
    ),
    Job(
        "h025-core-interrupted",
        "0.25.0",
        "relidash-core",
        [coin_flip("openai/gpt-4o-mini", "1.2.0", 103, "improved", delay_sec=1.0)],
        4,
        "killed with SIGKILL mid-run after 7 finished trials: no finished_at",
        kill_after=7,
        n_concurrent=2,
    ),
    Job(
        "h026-partial-multikey",
        "0.26.0",
        "relidash-partial",
        [coin_flip("anthropic/claude-haiku-4-5", "2.0.0", 301), {"name": "oracle"}],
        4,
        "reward.json with keys reward and partial (Harbor's pass_at_k is {}); two agents: coin-flip and the built-in oracle",
    ),
]


def ensure_venv(version: str) -> Path:
    venv = VENVS[version]
    harbor = venv / "bin" / "harbor"
    if not harbor.exists():
        subprocess.run([BASE_PYTHON, "-m", "venv", str(venv)], check=True)
        subprocess.run([venv / "bin" / "pip", "install", "-q", f"harbor=={version}"], check=True)
    got = subprocess.run(
        [
            venv / "bin" / "python",
            "-c",
            "import importlib.metadata as m; print(m.version('harbor'))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    if got != version:
        raise SystemExit(f"{venv} holds harbor {got}, not {version}")
    return venv


def harbor_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYTHONPATH=str(STAGE / "lib"),
        HARBOR_LOCAL_ENV_SCRATCH=str(STAGE / "scratch"),
        PYTHONHASHSEED="0",
    )
    return env


def stage() -> None:
    """Tasks and the two modules Harbor imports, at fixed paths (tracebacks record them)."""
    (STAGE / "lib").mkdir(parents=True, exist_ok=True)
    for module in ("local_env.py", "agents.py"):
        shutil.copy2(HERE / module, STAGE / "lib" / module)
    for dataset in sorted((HERE / "tasks").iterdir()):
        target = STAGE / dataset.name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(dataset, target)


def job_config(job: Job) -> dict:
    return {
        "job_name": job.name,
        "jobs_dir": str(STAGE / "jobs"),
        "n_attempts": job.n_attempts,
        "n_concurrent_trials": job.n_concurrent,
        "quiet": True,
        "environment": {"import_path": "local_env:LocalEnvironment", "delete": True},
        "agents": job.agents,
        "datasets": [{"path": str(STAGE / job.dataset)}],
        **job.extra,
    }


def finished_trials(job_dir: Path) -> int:
    n = 0
    for result in job_dir.glob("*/result.json"):
        with contextlib.suppress(OSError, ValueError):
            n += json.loads(result.read_text()).get("finished_at") is not None
    return n


def run_job(job: Job) -> Path:
    venv = ensure_venv(job.harbor)
    job_dir = STAGE / "jobs" / job.name
    shutil.rmtree(job_dir, ignore_errors=True)  # a reused job name would resume
    config = STAGE / "configs" / f"{job.name}.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(job_config(job), indent=2))
    command = [str(venv / "bin" / "harbor"), "run", "-c", str(config), "-y"]
    log = (STAGE / "configs" / f"{job.name}.log").open("w")
    process = subprocess.Popen(
        command,
        cwd=STAGE,
        env=harbor_env(),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    if job.kill_after is None:
        if process.wait() != 0:
            raise SystemExit(f"harbor run failed for {job.name}; see {log.name}")
    else:
        while process.poll() is None and finished_trials(job_dir) < job.kill_after:
            time.sleep(0.2)
        if process.poll() is not None:
            raise SystemExit(f"{job.name} ended before it could be interrupted")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    return job_dir


def check_job(job: Job, job_dir: Path) -> None:
    """The fixture must show what it is for; a seed that does not is a bad seed."""
    result = json.loads((job_dir / "result.json").read_text())
    if job.kill_after is not None:
        assert result.get("finished_at") is None, f"{job.name} finished"
        return
    assert result["finished_at"], f"{job.name} did not finish"
    types = []
    for trial in job_dir.glob("*/result.json"):
        info = json.loads(trial.read_text()).get("exception_info") or {}
        types.append(info.get("exception_type"))
    if job.dataset == "relidash-core":
        for needed in ("SimulatedAgentCrash", "ApiRateLimitError", "AgentTimeoutError"):
            assert needed in types, f"{job.name}: no {needed}; pick another seed"
        for key, evals in result["stats"]["evals"].items():
            assert evals["pass_at_k"], f"{job.name} {key}: Harbor wrote no pass_at_k"


def publish(job_dir: Path) -> None:
    target = OUT / job_dir.name
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(job_dir, target)


def publish_tasks() -> None:
    """Task folders by name, for the reader's `tasks` setting (the recorded path is /tmp)."""
    target = OUT / "tasks"
    shutil.rmtree(target, ignore_errors=True)
    for task in sorted((HERE / "tasks").glob("*/*/task.toml")):
        shutil.copytree(task.parent, target / task.parent.name)


def write_expected() -> None:
    expected = {}
    for job in JOBS:
        job_dir = OUT / job.name
        if not job_dir.exists():
            continue
        venv = ensure_venv(job.harbor)
        out = subprocess.run(
            [str(venv / "bin" / "python"), str(HERE / "expected.py"), str(job_dir)],
            env=harbor_env(),
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        expected[job.name] = {"what": job.what, **json.loads(out)}
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="job name (repeatable)")
    parser.add_argument("--expected-only", action="store_true")
    args = parser.parse_args()
    if not args.expected_only:
        STAGE.mkdir(parents=True, exist_ok=True)
        stage()
        OUT.mkdir(parents=True, exist_ok=True)
        for job in JOBS:
            if args.only and job.name not in args.only:
                continue
            print(f"{job.name}: harbor {job.harbor} ...", file=sys.stderr, flush=True)
            job_dir = run_job(job)
            check_job(job, job_dir)
            publish(job_dir)
        publish_tasks()
        shutil.rmtree(STAGE, ignore_errors=True)
    write_expected()


if __name__ == "__main__":
    main()
