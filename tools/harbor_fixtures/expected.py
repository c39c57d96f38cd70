"""Print one Harbor job's expected numbers as JSON, computed by Harbor's own code.

Run with the Python of the Harbor venv that wrote the job (make_fixtures.py does)::

    /tmp/harbor026/bin/python tools/harbor_fixtures/expected.py tests/fixtures/harbor/<job>

Trials are read with Harbor's ``TrialResult`` model; a trial folder whose
``result.json`` has no ``finished_at`` (the job was killed while it ran) is
counted under ``unfinished_trials`` and left out of the numbers, as it has no
outcome yet; a trial folder with no ``result.json`` at all (Harbor writes it
when the trial ends) is listed under ``trial_folders_without_result``. Per eval (Harbor's ``agent__model__dataset`` key):

- ``pass_at_k``: ``harbor.utils.pass_at_k.compute_pass_at_k_by_evals`` (keys as
  strings, as in the job's ``result.json``);
- ``n_trials`` / ``n_errors``: ``JobStats.from_trial_results`` (Harbor's own
  counting: 0.26 counts in ``n_trials`` only trials with a valid reward);
- ``tasks``: per ``task_name``, ``[started_at, reward, exception_type]`` per trial
  in ``started_at`` order (reward: the ``reward`` key, null without one).

``job_result_pass_at_k`` repeats what Harbor wrote in the job's ``result.json``
(absent while a job is unfinished), so a test can see both agree.
"""

from __future__ import annotations

import json
import sys
from importlib.metadata import version
from pathlib import Path

from harbor.models.job.result import JobStats
from harbor.models.trial.result import TrialResult
from harbor.utils.pass_at_k import compute_pass_at_k_by_evals


def eval_key(trial: TrialResult) -> str:
    model = trial.agent_info.model_info.name if trial.agent_info.model_info else None
    return JobStats.format_agent_evals_key(trial.agent_info.name, model, trial.source or "adhoc")


def main(job_dir: Path) -> dict:
    trials: list[TrialResult] = []
    unfinished: list[str] = []
    for path in sorted(job_dir.glob("*/result.json")):
        trial = TrialResult.model_validate_json(path.read_text())
        if trial.finished_at is None:
            unfinished.append(trial.trial_name)
        else:
            trials.append(trial)
    stats = JobStats.from_trial_results(trials)
    pass_at_k = compute_pass_at_k_by_evals(trials)
    job_result = json.loads((job_dir / "result.json").read_text())
    lock = json.loads((job_dir / "lock.json").read_text())
    evals = {}
    for key, eval_stats in stats.evals.items():
        tasks: dict[str, list] = {}
        for trial in sorted((t for t in trials if eval_key(t) == key), key=lambda t: t.started_at):
            rewards = trial.verifier_result.rewards if trial.verifier_result else None
            exception = trial.exception_info.exception_type if trial.exception_info else None
            tasks.setdefault(trial.task_name, []).append(
                [
                    trial.started_at.isoformat(),
                    None if rewards is None else rewards.get("reward"),
                    exception,
                ]
            )
        evals[key] = {
            "pass_at_k": {str(k): v for k, v in pass_at_k.get(key, {}).items()},
            "n_trials": eval_stats.n_trials,
            "n_errors": eval_stats.n_errors,
            "n_trial_folders": sum(len(v) for v in tasks.values()),
            "tasks": dict(sorted(tasks.items())),
        }
        if job_result.get("finished_at"):
            evals[key]["job_result_pass_at_k"] = job_result["stats"]["evals"][key]["pass_at_k"]
    return {
        "harbor_version": version("harbor"),
        "lock_harbor_version": lock["harbor"]["version"],
        "finished": job_result.get("finished_at") is not None,
        "n_finished_trials": len(trials),
        "unfinished_trials": unfinished,
        "trial_folders_without_result": sorted(
            p.parent.name
            for p in job_dir.glob("*/config.json")
            if not (p.parent / "result.json").exists()
        ),
        "evals": evals,
    }


if __name__ == "__main__":
    print(json.dumps(main(Path(sys.argv[1])), indent=1))
