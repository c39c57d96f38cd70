"""The Harbor fixture jobs (tests/fixtures/harbor/) say what their README says.

The jobs were written by Harbor 0.25.0 / 0.26.0 (tools/harbor_fixtures/make_fixtures.py)
and expected.json by Harbor's own functions. Without Harbor installed, these tests
re-derive its pass@k from the trial files under each version's rule (0.25: a trial
without a reward fails; 0.26: only trials whose `reward_valid` is true count) with the
unbiased estimator (Chen et al. 2021), so the rule the reader is built on is pinned
by the files themselves. They also pin the shape the reader relies on: the versions
in lock.json, the unfinished job, and task folders for every trial's task.
"""

from __future__ import annotations

import json
import tomllib
from collections import defaultdict
from math import comb
from pathlib import Path
from typing import Any

import pytest

HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
EXPECTED: dict[str, Any] = json.loads((HARBOR / "expected.json").read_text(encoding="utf-8"))
TOLERANCE = 1e-12


def trials(job: str) -> list[dict[str, Any]]:
    return [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((HARBOR / job).glob("*/result.json"))
    ]


def eval_key(trial: dict[str, Any]) -> str:
    model = (trial["agent_info"].get("model_info") or {}).get("name")
    parts = [trial["agent_info"]["name"], model, trial["source"]]
    return "__".join(p for p in parts if p)


def pass_at_k(outcomes: dict[str, list[int]]) -> dict[str, float]:
    """Harbor's rule: k in powers of 2 and multiples of 5 up to the fewest trials of a task."""
    fewest = min(len(v) for v in outcomes.values())
    ks = sorted({2**i for i in range(1, 8) if 2**i <= fewest} | set(range(5, fewest + 1, 5)))

    def one(n: int, c: int, k: int) -> float:
        return 1.0 if n - c < k else 1.0 - comb(n - c, k) / comb(n, k)

    return {
        str(k): sum(one(len(v), sum(v), k) for v in outcomes.values()) / len(outcomes) for k in ks
    }


def rederived(job: str, key: str) -> dict[str, float]:
    version = EXPECTED[job]["harbor_version"]
    outcomes: dict[str, list[int]] = defaultdict(list)
    for trial in trials(job):
        if eval_key(trial) != key or trial["finished_at"] is None:
            continue
        rewards = (trial.get("verifier_result") or {}).get("rewards")
        if version.startswith("0.25"):
            assert "reward_valid" not in trial
            if rewards is None:
                outcomes[trial["task_name"]].append(0)
                continue
        elif not trial["reward_valid"]:
            continue
        if len(rewards) != 1 or next(iter(rewards.values())) not in (0, 1):
            return {}
        outcomes[trial["task_name"]].append(int(next(iter(rewards.values()))))
    return pass_at_k(outcomes) if outcomes else {}


FINISHED = sorted(job for job, e in EXPECTED.items() if e["finished"])
EVALS = [(job, key) for job in FINISHED for key in EXPECTED[job]["evals"]]


@pytest.mark.parametrize(("job", "key"), EVALS, ids=["/".join(p) for p in EVALS])
def test_pass_at_k_rederived_from_the_trials(job: str, key: str) -> None:
    expected = EXPECTED[job]["evals"][key]
    written = json.loads((HARBOR / job / "result.json").read_text())["stats"]["evals"][key]
    assert expected["pass_at_k"] == written["pass_at_k"] == expected["job_result_pass_at_k"]
    got = rederived(job, key)
    assert got.keys() == expected["pass_at_k"].keys()
    for k, value in expected["pass_at_k"].items():
        assert abs(got[k] - value) < TOLERANCE, (k, got[k], value)


def test_the_release_pairs_have_pass_at_k_and_both_kinds_of_error() -> None:
    for job in ("h025-core-v1", "h025-core-v2", "h026-core-mini", "h026-core-large"):
        (key,) = EXPECTED[job]["evals"]
        assert EXPECTED[job]["evals"][key]["pass_at_k"], job
        kinds = {t[2] for rows in EXPECTED[job]["evals"][key]["tasks"].values() for t in rows}
        assert {"AgentTimeoutError", "SimulatedAgentCrash", "ApiRateLimitError"} <= kinds, job


def test_versions_and_error_semantics_differ_as_documented() -> None:
    for job, entry in EXPECTED.items():
        lock = json.loads((HARBOR / job / "lock.json").read_text())
        assert lock["harbor"]["version"] == entry["harbor_version"] == entry["lock_harbor_version"]
    for job in ("h025-core-v1", "h026-core-mini"):
        by_type = {}
        for trial in trials(job):
            info = trial.get("exception_info") or {}
            by_type[info.get("exception_type")] = trial
        crash, timeout = by_type["ApiRateLimitError"], by_type["AgentTimeoutError"]
        assert timeout["verifier_result"]["rewards"]["reward"] in (0, 1)
        if job.startswith("h025"):
            assert crash["verifier_result"] is None and "policy" not in crash["exception_info"]
        else:
            assert crash["reward_valid"] is False and timeout["reward_valid"] is True
            assert crash["exception_info"]["policy"]["has_valid_reward"] is False
            assert crash["verifier_result"]["rewards"] == {"reward": 0.0}


def test_multi_key_job_has_no_pass_at_k() -> None:
    entry = EXPECTED["h026-partial-multikey"]
    assert len(entry["evals"]) == 2  # coin-flip and the oracle
    for key, stats in entry["evals"].items():
        assert stats["pass_at_k"] == {}, key
    keys = {tuple(sorted(t["verifier_result"]["rewards"])) for t in trials("h026-partial-multikey")}
    assert keys == {("partial", "reward")}


def test_interrupted_job_has_no_finished_at_and_trials_still_running() -> None:
    entry = EXPECTED["h025-core-interrupted"]
    result = json.loads((HARBOR / "h025-core-interrupted" / "result.json").read_text())
    assert result["finished_at"] is None and not entry["finished"]
    assert result["stats"]["n_completed_trials"] == entry["n_finished_trials"] > 0
    assert entry["trial_folders_without_result"]
    for name in entry["trial_folders_without_result"]:
        assert (HARBOR / "h025-core-interrupted" / name / "config.json").is_file()


def test_every_trial_task_has_a_task_folder_with_slices() -> None:
    for job in EXPECTED:
        for trial in trials(job):
            recorded = Path(trial["task_id"]["path"])
            assert not recorded.exists(), f"{recorded}: fixtures must not depend on it"
            config = tomllib.loads((HARBOR / "tasks" / recorded.name / "task.toml").read_text())
            assert config["task"]["name"] == trial["task_name"]
            assert {"difficulty", "category", "tags"} <= set(config["metadata"])
            assert config["task"]["keywords"]
