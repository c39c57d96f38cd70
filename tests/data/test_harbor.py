"""Harbor jobs read by relidash, held to Harbor's own numbers.

tests/fixtures/harbor/ holds real jobs written by Harbor 0.25.0 and 0.26.0 and
expected.json, computed by Harbor's own functions (tools/harbor_fixtures/expected.py).
Loaded through the real load path (a copy of the folder in tmp_path): relidash's pass@k
of every job's eval equals Harbor's `pass_at_k` in the job's result.json and in
expected.json at every k Harbor lists; pass^k equals the unbiased estimator over the same
trials (expected.json's trial lists, with Harbor's `reward_valid` from the trial files);
errors follow each version's rule; the interrupted job loads incomplete; `[harbor]`
settings change the numbers; task.toml gives slices; a trial added to a job changes the
job on the next load; and a task's attempts read back with transcripts.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from math import comb
from pathlib import Path
from typing import Any

import duckdb
import pytest
import summaries

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.formats.harbor import job_directories
from dashboard.data.load.transcripts import TRIAL_COLUMNS, read_case_trials
from dashboard.data.sources.digests import file_digests

HARBOR = Path(__file__).resolve().parents[1] / "fixtures" / "harbor"
EXPECTED: dict[str, Any] = json.loads((HARBOR / "expected.json").read_text(encoding="utf-8"))
JOBS = sorted(EXPECTED)
TOLERANCE = 1e-9


def copy_fixtures(root: Path, toml: str | None = None) -> Path:
    target = root / "reports"
    shutil.copytree(HARBOR, target)
    if toml is not None:
        (target / "relidash.toml").write_text(toml, encoding="utf-8")
    return target


def load(root: Path) -> duckdb.DuckDBPyConnection:
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    return con


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = copy_fixtures(tmp_path_factory.mktemp("harbor"))
    con = load(root)
    yield {"root": root, "con": con, "document": summaries.summary_json(con)}
    con.close()


def trial_files(job: str) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted((HARBOR / job).glob("*/result.json"))]


def eval_of(trial: dict[str, Any]) -> str:
    model = (trial["agent_info"].get("model_info") or {}).get("name")
    parts = [trial["agent_info"]["name"], model, trial.get("source") or "adhoc"]
    return "__".join(p for p in parts if p)


def record_of(document: dict[str, Any], job: str, key: str) -> dict[str, Any]:
    agent = key.split("__")[0]
    found: list[dict[str, Any]] = [
        r
        for r in document["reports"]
        if r["file"] == f"{job}/" and r["release"].startswith(f"{agent}@")
    ]
    assert len(found) == 1, (job, key, [r["release"] for r in document["reports"]])
    return found[0]


def counted_outcomes(job: str, key: str) -> dict[str, list[int]]:
    """Per task, the outcomes Harbor's pass@k counts: expected.json's trial lists (in
    started_at order) with Harbor's own reward_valid from the trial files (0.26)."""
    valid = {
        t["started_at"].replace("Z", "+00:00"): t.get("reward_valid", True)
        for t in trial_files(job)
        if eval_of(t) == key
    }
    out: dict[str, list[int]] = defaultdict(list)
    for task, trials in EXPECTED[job]["evals"][key]["tasks"].items():
        for started, reward, _ in trials:
            if EXPECTED[job]["harbor_version"].startswith("0.25") or valid[started]:
                out[task].append(1 if reward == 1 else 0)
    return {task: v for task, v in out.items() if v}


def evals() -> list[tuple[str, str]]:
    return [(job, key) for job in JOBS for key in EXPECTED[job]["evals"]]


# ---- Harbor's own numbers --------------------------------------------------------------------


@pytest.mark.parametrize(("job", "key"), evals())
def test_pass_at_k_equals_harbors_own(loaded: Any, job: str, key: str) -> None:
    want = EXPECTED[job]["evals"][key]
    stored = json.loads((HARBOR / job / "result.json").read_text())["stats"]["evals"][key]
    assert stored["pass_at_k"] == want.get("job_result_pass_at_k", stored["pass_at_k"])
    got = record_of(loaded["document"], job, key)
    for source in (want["pass_at_k"], stored["pass_at_k"]):
        for k, value in source.items():
            assert got["pass_at_k"][k]["value"] == pytest.approx(value, abs=TOLERANCE, rel=0)


def test_every_listed_k_is_compared() -> None:
    listed = [k for job, key in evals() for k in EXPECTED[job]["evals"][key]["pass_at_k"]]
    assert len(listed) >= 5 and "4" in listed
    assert {EXPECTED[j]["harbor_version"] for j in JOBS} == {"0.25.0", "0.26.0"}


@pytest.mark.parametrize(("job", "key"), evals())
def test_pass_hat_k_uses_the_same_trials(loaded: Any, job: str, key: str) -> None:
    outcomes = counted_outcomes(job, key)
    got = record_of(loaded["document"], job, key)
    fewest = min(len(v) for v in outcomes.values())
    for k in range(1, fewest + 1):
        hat = sum(comb(sum(v), k) / comb(len(v), k) for v in outcomes.values()) / len(outcomes)
        at = sum(
            1.0 if len(v) - sum(v) < k else 1 - comb(len(v) - sum(v), k) / comb(len(v), k)
            for v in outcomes.values()
        ) / len(outcomes)
        assert got["pass_hat_k"][str(k)]["value"] == pytest.approx(hat, abs=TOLERANCE, rel=0)
        assert got["pass_at_k"][str(k)]["value"] == pytest.approx(at, abs=TOLERANCE, rel=0)
    assert sum(len(v) for v in outcomes.values()) == EXPECTED[job]["evals"][key]["n_trials"] or (
        EXPECTED[job]["harbor_version"].startswith("0.25")
    )


# ---- errors by version -------------------------------------------------------------------------


def case_rows(con: Any, suite: str, job: str, count: bool) -> list[dict[str, Any]]:
    rows = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=count, report_ids=None
    )
    return [r for r in rows if r["file"] == f"{job}/"]


@pytest.mark.parametrize("job", ["h025-core-v1", "h025-core-v2"])
def test_harbor_025_counts_a_trial_without_a_reward_as_a_failure(loaded: Any, job: str) -> None:
    (key,) = EXPECTED[job]["evals"]
    tasks = EXPECTED[job]["evals"][key]["tasks"]
    rewardless = sum(r is None for trials in tasks.values() for _, r, _ in trials)
    assert rewardless >= 2
    for count in (False, True):  # nothing is left out: the switch changes nothing
        rows = {r["case_id"]: r for r in case_rows(loaded["con"], "relidash-core", job, count)}
        for task, trials in tasks.items():
            assert rows[task]["n"] == len(trials)
            assert rows[task]["c"] == sum(r == 1 for _, r, _ in trials)


@pytest.mark.parametrize("job", ["h026-core-mini", "h026-core-large"])
def test_harbor_026_leaves_out_a_trial_without_a_valid_reward(loaded: Any, job: str) -> None:
    (key,) = EXPECTED[job]["evals"]
    tasks = EXPECTED[job]["evals"][key]["tasks"]
    outcomes = counted_outcomes(job, key)
    left_out = sum(len(tasks[t]) - len(outcomes.get(t, [])) for t in tasks)
    assert left_out >= 1
    default = {r["case_id"]: r for r in case_rows(loaded["con"], "relidash-core", job, False)}
    counting = {r["case_id"]: r for r in case_rows(loaded["con"], "relidash-core", job, True)}
    for task, trials in tasks.items():
        assert default[task]["n"] == len(outcomes[task])
        assert default[task]["c"] == sum(outcomes[task])
        # counted as failures: every trial, passes unchanged
        assert counting[task]["n"] == len(trials)
        assert counting[task]["c"] == sum(outcomes[task])
    # a crash (unknown to the policy) and a timeout still count: graded 0
    kinds = {e for trials in tasks.values() for _, _, e in trials}
    assert {"ApiRateLimitError", "SimulatedAgentCrash", "AgentTimeoutError"} <= kinds


def test_errors_are_named_by_type_and_cause(loaded: Any) -> None:
    problems = [p for p in loaded["document"]["problems"] if p["file"] == "h026-core-mini/"]
    (warning,) = problems
    assert "model provider 3 (ApiRateLimitError 3)" in warning["reason"]
    assert "budget 3 (AgentTimeoutError 3)" in warning["reason"]
    assert "unclassified 3 (SimulatedAgentCrash 3)" in warning["reason"]
    assert warning["reason"].startswith("3 of 24 attempts have no valid reward and are left out")
    assert "9 raised an exception, by cause: " in warning["reason"]
    facts = (
        loaded["con"]
        .execute("SELECT harness_facts FROM reports WHERE file = 'h026-core-mini/'")
        .fetchall()[0][0]
    )
    facts = json.loads(facts)
    assert facts["errors_by_type"] == {
        "AgentTimeoutError": 3, "ApiRateLimitError": 3, "SimulatedAgentCrash": 3,
    }  # fmt: skip
    assert facts["errors_by_cause"] == {"model provider": 3, "budget": 3, "unclassified": 3}


# ---- what a job is ---------------------------------------------------------------------------


def test_trial_files_are_never_problems_of_their_own(loaded: Any) -> None:
    jobs = {f"{job}/" for job in JOBS}
    files = {r["file"] for r in loaded["document"]["reports"]}
    assert files == jobs
    for problem in loaded["document"]["problems"]:
        assert problem["file"] in jobs | {"expected.json"}, problem
        if problem["file"] in jobs:
            assert problem["scope"] == "report"


def test_job_directories_names_the_outermost_job_only() -> None:
    paths = {
        "a/config.json", "a/lock.json", "a/result.json",
        "a/t__1/config.json", "a/t__1/lock.json", "a/t__1/result.json",
        "a/t__2/config.json", "a/t__2/lock.json",  # still running
        "old/config.json", "old/result.json", "old/t__1/result.json",  # no lock.json
        "other/config.json", "other/data.json",
    }  # fmt: skip
    assert job_directories(paths) == ["a", "old"]
    assert job_directories({"config.json", "lock.json", "t__1/result.json"}) == [""]


def test_interrupted_job_loads_incomplete_with_its_finished_trials(loaded: Any) -> None:
    job = "h025-core-interrupted"
    assert EXPECTED[job]["finished"] is False
    (key,) = EXPECTED[job]["evals"]
    got = record_of(loaded["document"], job, key)
    assert got["complete"] is False and got["log_status"] == "started"
    rows = case_rows(loaded["con"], "relidash-core", job, False)
    assert sum(r["n"] for r in rows) == EXPECTED[job]["n_finished_trials"] == 7
    facts = json.loads(
        loaded["con"]
        .execute(f"SELECT harness_facts FROM reports WHERE file = '{job}/'")
        .fetchall()[0][0]
    )
    assert facts["trial_folders_without_result"] == EXPECTED[job]["trial_folders_without_result"]
    finished = [r for r in loaded["document"]["reports"] if r["file"] != f"{job}/"]
    assert all(r["complete"] for r in finished)


def test_release_and_metadata(loaded: Any) -> None:
    got = record_of(loaded["document"], "h026-core-mini", "coin-flip__claude-haiku-4-5__x")
    assert got["release"] == "coin-flip@2.0.0 (anthropic/claude-haiku-4-5)"
    assert got["suite"] == "relidash-core"
    oracle = record_of(loaded["document"], "h026-partial-multikey", "oracle__relidash-partial")
    assert oracle["release"] == "oracle@1.0.0" and oracle["suite"] == "relidash-partial"
    metadata = json.loads(
        loaded["con"]
        .execute("SELECT metadata FROM reports WHERE file = 'h025-core-v2/'")
        .fetchall()[0][0]
    )
    assert metadata["job_name"] == "h025-core-v2"
    assert metadata["agent_version"] == "1.1.0"
    assert metadata["model"] == "openai/gpt-4o-mini"
    assert metadata["harbor_version"] == "0.25.0"


def test_jobs_of_a_suite_order_as_they_ran(loaded: Any) -> None:
    rows = (
        loaded["con"]
        .execute(
            "SELECT file, recorded_at, release_rank FROM reports WHERE suite = 'relidash-core' "
            "ORDER BY release_rank"
        )
        .fetchall()
    )
    started = [
        json.loads((HARBOR / f / "result.json").read_text())["started_at"] for f, _, _ in rows
    ]
    assert started == sorted(started)
    assert [r[1] for r in rows] == sorted(r[1] for r in rows)


@pytest.mark.parametrize(
    ("key", "label"),
    [("metadata:job_name", "h025-core-v1"), ("metadata:agent_version", "1.0.0"),
     ("metadata:model", "openai/gpt-4o-mini")],
)  # fmt: skip
def test_release_keys(tmp_path: Path, key: str, label: str) -> None:
    root = copy_fixtures(tmp_path, f'[harbor]\ntasks = "tasks"\n[releases]\nkey = "{key}"\n')
    con = load(root)
    rows = con.execute("SELECT release FROM reports WHERE file = 'h025-core-v1/'").fetchall()
    assert rows == [(label,)]
    con.close()


# ---- settings, slices, transcripts -------------------------------------------------------------


def test_multi_key_rewards_are_scores_and_reward_key_changes_the_numbers(
    loaded: Any, tmp_path: Path
) -> None:
    job, key = "h026-partial-multikey", "coin-flip__claude-haiku-4-5__relidash-partial"
    assert EXPECTED[job]["evals"][key]["pass_at_k"] == {}
    default = record_of(loaded["document"], job, key)
    root = copy_fixtures(tmp_path, '[harbor]\ntasks = "tasks"\nreward_key = "partial"\n'
                         "pass_threshold = 0.5\n")  # fmt: skip
    con = load(root)
    partial = record_of(summaries.summary_json(con), job, key)
    outcomes: dict[str, list[int]] = defaultdict(list)
    for trial in trial_files(job):
        if eval_of(trial) == key and trial["reward_valid"]:
            value = trial["verifier_result"]["rewards"]["partial"]
            outcomes[trial["task_name"]].append(int(value >= 0.5))
    want = sum(sum(v) / len(v) for v in outcomes.values()) / len(outcomes)
    assert partial["pass_at_k"]["1"]["value"] == pytest.approx(want, abs=TOLERANCE)
    assert partial["pass_at_k"]["1"]["value"] != default["pass_at_k"]["1"]["value"]
    report_id = con.execute(
        f"SELECT report_id FROM reports WHERE file = '{job}/' AND release LIKE 'coin-flip%'"
    ).fetchall()[0][0]
    trials = read_case_trials(con, report_id, 1)
    graders = [g["name"] for e in trials["evaluators"] for g in json.loads(e)]
    assert {"reward", "partial"} <= set(graders)
    deciding = [g for e in trials["evaluators"] for g in json.loads(e) if g["passed"] is not None]
    assert deciding and {g["name"] for g in deciding} == {"partial"}
    con.close()


def test_a_bad_harbor_table_is_a_problem(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path, '[harbor]\npass_threshold = "high"\n')
    con = load(root)
    document = summaries.summary_json(con)
    reasons = [p["reason"] for p in document["problems"] if p["file"] == "relidash.toml"]
    assert any(r.startswith("[harbor]") for r in reasons)
    con.close()


def test_slices_come_from_task_toml(loaded: Any) -> None:
    tags = {
        tag
        for (tag,) in loaded["con"]
        .execute(
            "SELECT t.tag FROM case_tags t JOIN cases c USING (report_id, case_idx) "
            "JOIN reports r USING (report_id) "
            "WHERE r.file = 'h026-core-mini/' AND c.case_id = 'relidash/hello-file'"
        )
        .fetchall()
    }
    assert tags == {
        "difficulty:easy", "category:files", "files", "basics", "keyword:write", "keyword:file",
    }  # fmt: skip


def test_case_page_transcript_names_the_exception(loaded: Any) -> None:
    con = loaded["con"]
    report_id, case_idx = con.execute(
        "SELECT c.report_id, c.case_idx FROM cases c JOIN reports r USING (report_id) "
        "WHERE r.file = 'h026-core-mini/' AND c.case_id = 'relidash/config-port'"
    ).fetchall()[0]
    trials = read_case_trials(con, report_id, case_idx, None)
    assert list(trials.columns) == list(TRIAL_COLUMNS)
    assert list(trials["run_index"]) == [1, 2, 3, 4]
    first = trials.iloc[0]  # the rate-limited attempt: left out
    assert first["status"] == "model_error"
    assert "[exception ApiRateLimitError: cause model provider" in first["output"]
    assert "Traceback (most recent call last)" in first["output"]
    assert "[left out: no valid reward" in first["output"]
    second = trials.iloc[1]  # the timeout: graded, counted
    assert second["status"] == "failed_quality"
    assert "AgentTimeoutError" in second["output"] and "cause budget" in second["output"]
    assert "Agent execution timed out" in second["output"]
    for output in trials["output"]:
        assert "[user]" in output or "[agent log: coin-flip.txt]" in output
        assert "[verifier: test-stdout.txt]" in output
        assert "[rewards]" in output


# ---- the load path -----------------------------------------------------------------------------


def test_a_trial_added_changes_the_job_on_the_next_load(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path, '[harbor]\ntasks = "tasks"\n')
    con = load(root)
    job = root / "h025-core-v1"

    def state() -> tuple[Any, ...]:
        digest = con.execute("SELECT digest FROM files WHERE path = 'h025-core-v1/'").fetchall()
        n = con.execute(
            "SELECT sum(c.n) FROM cases c JOIN reports r USING (report_id) "
            "WHERE r.file = 'h025-core-v1/'"
        ).fetchall()
        return digest[0][0], n[0][0]

    before, sha_before = state(), file_digests(job)
    source = next(p for p in sorted(job.iterdir()) if p.name.startswith("hello-file__"))
    added = job / "hello-file__ZZZZZZZ"
    shutil.copytree(source, added)
    result = json.loads((added / "result.json").read_text())
    result["trial_name"] = added.name
    result["started_at"] = "2030-01-01T00:00:00.000000Z"
    (added / "result.json").write_text(json.dumps(result))
    loaded_again = loading.refresh_catalog(con, root)
    after = state()
    assert loaded_again.parsed == 1
    assert after[0] != before[0]
    assert after[1] == before[1] + 1
    assert file_digests(job) != sha_before
    con.close()


def _edit_version(root: Path, version: str, drop: str | None = None) -> None:
    job = root / "h026-core-mini"
    lock = json.loads((job / "lock.json").read_text())
    lock["harbor"]["version"] = version
    (job / "lock.json").write_text(json.dumps(lock))
    if drop:
        trial = next(p for p in sorted(job.glob("*/result.json")))
        data = json.loads(trial.read_text())
        data.pop(drop)
        trial.write_text(json.dumps(data))


def test_a_newer_harbor_whose_fields_match_loads_with_a_warning(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path, '[harbor]\ntasks = "tasks"\n')
    _edit_version(root, "0.27.1")
    document = summaries.summary_json(load(root))
    assert any(r["file"] == "h026-core-mini/" for r in document["reports"])
    reasons = [p["reason"] for p in document["problems"] if p["file"] == "h026-core-mini/"]
    assert any("Harbor 0.27.1, newer than 0.26" in r for r in reasons)


def test_a_newer_harbor_whose_fields_differ_is_a_problem(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path, '[harbor]\ntasks = "tasks"\n')
    _edit_version(root, "0.27.1", drop="reward_valid")
    document = summaries.summary_json(load(root))
    assert not any(r["file"] == "h026-core-mini/" for r in document["reports"])
    (problem,) = [p for p in document["problems"] if p["file"] == "h026-core-mini/"]
    assert problem["scope"] == "file"
    assert "Harbor 0.27.1" in problem["reason"] and "`reward_valid`" in problem["reason"]


def test_unknown_reasons_speak_of_tasks_and_attempts(loaded: Any) -> None:
    got = record_of(loaded["document"], "h025-core-v1", "coin-flip__gpt-4o-mini__x")
    assert got["pass_at_k"]["5"]["unknown_reason"] == (
        "UNKNOWN — k=5 exceeds the 4 attempts of each task; rerun with --n-attempts >= 5 "
        "or pass k <= 4. relidash does not extrapolate."
    )
    mini = record_of(loaded["document"], "h026-core-mini", "coin-flip__claude-haiku-4-5__x")
    assert mini["pass_hat_k"]["4"]["unknown_reason"].startswith(
        "UNKNOWN — k=4 exceeds the 3 attempts of the task with the fewest; rerun with "
        "--n-attempts >= 4"
    )
