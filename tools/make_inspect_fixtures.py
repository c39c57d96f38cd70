"""Write Inspect AI eval logs with the real inspect-ai, and the numbers its reducers give.

One file, two roles. Run with any Python >= 3.11, it is the orchestrator (stdlib only):
it creates a throwaway venv under ``${XDG_CACHE_HOME:-~/.cache}/relidash-fixtures/
venv-inspect`` (reused when present), installs ``inspect-ai==INSPECT_VERSION`` there
(never into relidash's .venv: Inspect is a fixture and test-time tool, not a dependency)
and runs itself inside it with ``--inside``. Inside, it runs a scripted ticket-triage
agent offline on Inspect's mock model ``mockllm/model`` and writes:

- ``sample_reports/ticket_triage/<date>_<release>.eval``: four releases for ``make run``;
- ``tests/fixtures/inspect/ticket_triage/``: the golden fixtures, each built around an
  edge (epochs 3 to 8, both log formats, errored epochs, an errored sample, stored
  ``pass_at_<k>`` / ``pass_k_<k>`` reductions, a cancelled run, a run stopped by an
  error, and an interrupted run whose log holds only its journal);
- ``tests/expected/inspect.json``: for every log, what Inspect itself computes
  (``inspect_ai.log.read_eval_log`` and the ``pass_at(k)`` / ``pass_k(k)`` reducers, per
  sample and averaged over the samples), for the first scorer at Inspect's default
  threshold (1.0) and for the second scorer at 0.5 (``[inspect]`` in relidash.toml).

Usage::

    python tools/make_inspect_fixtures.py            # logs and numbers
    python tools/make_inspect_fixtures.py --only-numbers

The agent is a pure function of (release, sample, epoch): a seeded script decides each
epoch's tool calls and final answer, and the mock model replays it (a callable passed
as ``custom_outputs``, with token usage set so that nothing is downloaded). Inspect
stamps ids and times of its own, so files are not byte-identical across runs; the
creation time is pinned to the release date so that releases sort by it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
INSPECT_VERSION = "0.3.285"
SAMPLES_DIR = REPO / "sample_reports" / "ticket_triage"
FIXTURES_DIR = REPO / "tests" / "fixtures" / "inspect" / "ticket_triage"
EXPECTED = REPO / "tests" / "expected" / "inspect.json"
TASK = "ticket_triage"

# One log each: where it goes, its name and release, its epochs, and the edge it is built around
# (format, samples, error_rate, always_errors, reducers, cancel_after, fail_at, interrupt_after).
RUNS: list[dict[str, Any]] = [
    # sample_reports/: what `make run` shows (small files: 12 samples)
    {
        "dir": "samples",
        "name": "2026-01-12_v2.0.0",
        "release": "v2.0.0",
        "epochs": 5,
        "error_rate": 0.0,
    },
    {
        "dir": "samples",
        "name": "2026-01-26_v2.1.0",
        "release": "v2.1.0",
        "epochs": 5,
        "error_rate": 0.02,
    },
    {
        "dir": "samples",
        "name": "2026-02-09_v2.2.0",
        "release": "v2.2.0",
        "epochs": 8,
        "error_rate": 0.04,
        "reducers": ["mean", "pass_at_2", "pass_k_2", "pass_at_4", "pass_k_4"],
    },
    {
        "dir": "samples",
        "name": "2026-02-23_v2.3.0",
        "release": "v2.3.0",
        "epochs": 6,
        "error_rate": 0.0,
        "always_errors": [107],
    },
    # tests/fixtures/inspect/: one edge each
    {"dir": "fixtures", "name": "v2.0.0_epochs3", "release": "v2.0.0", "epochs": 3, "samples": 8},
    {
        "dir": "fixtures",
        "name": "v2.1.0_epochs5_json",
        "release": "v2.1.0",
        "epochs": 5,
        "samples": 5,
        "format": "json",
    },
    {
        "dir": "fixtures",
        "name": "v2.2.0_epochs8_reducers",
        "release": "v2.2.0",
        "epochs": 8,
        "samples": 8,
        "error_rate": 0.2,
        "always_errors": [104],
        "reducers": [
            "mean",
            "pass_at_2",
            "pass_k_2",
            "pass_at_3",
            "pass_k_3",
            "pass_at_5",
            "pass_k_5",
        ],
    },
    {
        "dir": "fixtures",
        "name": "v2.3.0_epochs4_cancelled",
        "release": "v2.3.0",
        "epochs": 4,
        "samples": 8,
        "cancel_after": 14,
    },
    {
        "dir": "fixtures",
        "name": "v2.4.0_epochs6_error_json",
        "release": "v2.4.0",
        "epochs": 6,
        "samples": 4,
        "format": "json",
        "fail_on_error": True,
        "fail_at": 12,
    },
    {
        "dir": "fixtures",
        "name": "v2.5.0_epochs4_interrupted",
        "release": "v2.5.0",
        "epochs": 4,
        "samples": 8,
        "interrupt_after": 12,
    },
]
RELEASE_DATES = {
    "v2.0.0": "2026-01-12T09:00:00+00:00",
    "v2.1.0": "2026-01-26T09:00:00+00:00",
    "v2.2.0": "2026-02-09T09:00:00+00:00",
    "v2.3.0": "2026-02-23T09:00:00+00:00",
    "v2.4.0": "2026-03-09T09:00:00+00:00",
    "v2.5.0": "2026-03-23T09:00:00+00:00",
}
# How good each release is (probability scale of a correct final answer).
RELEASE_SKILL = {"v2.0.0": 0.55, "v2.1.0": 0.62, "v2.2.0": 0.7, "v2.3.0": 0.66,
                 "v2.4.0": 0.72, "v2.5.0": 0.74}  # fmt: skip

# The tickets: (id, text, resolution, team, metadata). Ids are ints but two are strings,
# as Inspect datasets allow.
TICKETS: list[tuple[int | str, str, str, str, dict[str, Any]]] = [
    (101, "Customer was charged twice for order 5521 and wants the duplicate refunded.",
     "refund_duplicate", "billing", {"priority": "p1", "channel": "email", "difficulty": 1}),
    (102, "The mobile app logs users out every few minutes since yesterday's update.",
     "known_issue_session", "mobile", {"priority": "p1", "channel": "chat", "difficulty": 2}),
    (103, "Order 7730 shows delivered but the customer never received the parcel.",
     "carrier_claim", "logistics", {"priority": "p2", "channel": "email", "difficulty": 2}),
    (104, "A user asks for all of their personal data to be deleted under GDPR.",
     "privacy_erasure", "privacy", {"priority": "p1", "channel": "email", "difficulty": 3}),
    (105, "Password reset emails never arrive for an @outlook.com address.",
     "email_deliverability", "platform", {"priority": "p2", "channel": "chat", "difficulty": 2}),
    (106, "Customer wants to downgrade from Pro to Basic mid-cycle and asks about proration.",
     "plan_change_proration", "billing", {"priority": "p3", "channel": "chat", "difficulty": 1}),
    (107, "The CSV export of invoices has garbled accents in customer names.",
     "export_encoding_bug", "platform", {"priority": "p3", "channel": "email", "difficulty": 3}),
    ("vip-escalation", "A VIP account reports an outage of the public API for all keys.",
     "incident_escalation", "sre", {"priority": "p1", "channel": "phone", "difficulty": 3}),
    (108, "Customer cannot apply a discount code that the marketing email promised.",
     "promo_code_expired", "billing", {"priority": "p3", "channel": "chat", "difficulty": 1}),
    (109, "Two team members were merged into one account by mistake.",
     "account_split", "accounts", {"priority": "p2", "channel": "email", "difficulty": 3}),
    (110, "The invoice PDF shows the wrong VAT number after a company rename.",
     "invoice_reissue", "billing", {"priority": "p2", "channel": "email", "difficulty": 2}),
    ("bulk-import", "Importing 40,000 contacts stops at 10,000 with no error message.",
     "import_limit", "platform", {"priority": "p2", "channel": "chat", "difficulty": 2}),
    (111, "Customer asks whether the charger of model X2 works with the new X3.",
     "compatibility_answer", "product", {"priority": "p3", "channel": "chat", "difficulty": 1}),
    (112, "A parent wants to add a child profile with restricted content.",
     "child_profile", "accounts", {"priority": "p3", "channel": "email", "difficulty": 1}),
    (113, "Payments fail with error 402 for cards issued in Brazil.",
     "payment_region_block", "billing", {"priority": "p1", "channel": "chat", "difficulty": 3}),
    (114, "Customer requests a refund for an annual plan bought 40 days ago.",
     "refund_outside_window", "billing", {"priority": "p2", "channel": "email", "difficulty": 2}),
]  # fmt: skip


# ---- orchestrator (stdlib only) ------------------------------------------------------------


def venv_dir() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "relidash-fixtures" / "venv-inspect"


def ensure_venv() -> Path:
    """The throwaway venv's python, with inspect-ai installed."""
    venv = venv_dir()
    python = venv / "bin" / "python"
    marker = venv / f".inspect-{INSPECT_VERSION}"
    if not marker.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"inspect-ai=={INSPECT_VERSION}"],
            check=True,
        )
        marker.touch()
    return python


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--only-numbers", action="store_true")
    args = parser.parse_args()
    if args.inside:
        if not args.only_numbers:
            write_logs()
        write_numbers()
        return 0
    python = ensure_venv()
    command = [str(python), str(Path(__file__).resolve()), "--inside"]
    if args.only_numbers:
        command.append("--only-numbers")
    return subprocess.run(command, cwd=REPO, check=False).returncode


# ---- inside the venv: the agent, the task, the runs ----------------------------------------


def write_logs() -> None:
    import shutil
    import tempfile

    for directory in (SAMPLES_DIR, FIXTURES_DIR):
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
    for run in RUNS:
        if "interrupt_after" in run:
            # a real interruption: the process dies mid-run, leaving only the journal
            with tempfile.TemporaryDirectory() as tmp:
                done = subprocess.run(
                    [
                        sys.executable,
                        str(Path(__file__).resolve()),
                        "--inside-run",
                        json.dumps({**run, "log_dir": tmp}),
                    ],  # fmt: skip
                    cwd=REPO,
                    check=False,
                )
                assert done.returncode == 3, f"{run['name']} was not interrupted"
                move_log(run, Path(tmp))
        else:
            run_one(run)
    for directory in (SAMPLES_DIR, FIXTURES_DIR):
        for path in sorted(directory.iterdir()):
            print(f"{path.relative_to(REPO)}: {path.stat().st_size:,} bytes")


def target_dir(run: dict[str, Any]) -> Path:
    if run.get("out"):  # benchmarks/bench_inspect.py writes its base logs elsewhere
        return Path(run["out"])
    return SAMPLES_DIR if run["dir"] == "samples" else FIXTURES_DIR


def tickets_for(count: int) -> list[tuple[int | str, str, str, str, dict[str, Any]]]:
    """The first `count` tickets; beyond the sixteen, numbered copies with new ids."""
    if count <= len(TICKETS):
        return TICKETS[:count]
    extra = [
        (1000 + i, f"{text} (case {i})", resolution, team, meta)
        for i, (_, text, resolution, team, meta) in enumerate(
            TICKETS[i % len(TICKETS)] for i in range(count - len(TICKETS))
        )
    ]
    return TICKETS + extra


def file_name(run: dict[str, Any]) -> str:
    ext = "json" if run.get("format") == "json" else "eval"
    return f"{run['name']}.{ext}"


def run_one(run: dict[str, Any]) -> None:
    """Run one release of the task with Inspect and move its log into place."""
    import asyncio
    import contextlib
    import random
    import tempfile

    import inspect_ai._eval.task.log as task_log
    from inspect_ai import Epochs, Task, eval_async
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageTool, ModelOutput, ModelUsage
    from inspect_ai.scorer import CORRECT, INCORRECT, PARTIAL, Score, accuracy, mean, scorer
    from inspect_ai.solver import Generate, TaskState, solver, use_tools
    from inspect_ai.solver._task_state import sample_state
    from inspect_ai.tool import tool

    os.environ["INSPECT_DISPLAY"] = "none"
    release = run["release"]
    created = RELEASE_DATES[release]
    task_log.iso_now = lambda timespec="seconds": created  # type: ignore[assignment]
    tickets = tickets_for(run.get("samples", 12))
    by_id = {t[0]: t for t in tickets}
    error_rate = run.get("error_rate", 0.08)
    always_errors = set(run.get("always_errors", []))
    finished = {"epochs": 0}

    def plan_for(sample_id: int | str, epoch: int) -> dict[str, Any]:
        """The scripted behaviour of one epoch: a pure function of (release, id, epoch)."""
        _, _, resolution, team, meta = by_id[sample_id]
        rng = random.Random(f"{release}|{sample_id}|{epoch}")
        # each ticket has its own ease; releases shift it
        ease = random.Random(f"ease|{sample_id}").uniform(-0.25, 0.25)
        skill = RELEASE_SKILL[release] + ease - 0.08 * (meta["difficulty"] - 2)
        errored = sample_id in always_errors or rng.random() < error_rate
        roll = rng.random()
        if roll < skill:
            outcome = "correct"
        elif roll < skill + 0.12:
            outcome = "partial"
        else:
            outcome = "wrong"
        steps: list[dict[str, Any]] = [
            {"tool": "search_kb", "args": {"query": f"{meta['channel']} {resolution}"}}
        ]
        if outcome != "wrong" or rng.random() < 0.5:
            steps.append({"tool": "lookup_account", "args": {"ticket": str(sample_id)}})
        if outcome == "correct" or (outcome == "partial" and rng.random() < 0.5):
            steps.append({"tool": "route", "args": {"team": team, "priority": meta["priority"]}})
        if outcome == "correct":
            answer = f"Resolution: {resolution}. Routed to {team}."
        elif outcome == "partial":
            answer = f"Resolution: {resolution}. Routed to general-support."
        else:
            wrong = random.Random(f"wrong|{release}|{sample_id}|{epoch}").choice(
                ["refund_duplicate", "known_issue_session", "ask_for_screenshot"]
            )
            if wrong == resolution:
                wrong = "ask_for_screenshot"
            answer = f"Resolution: {wrong}. Routed to general-support."
        return {"errored": errored, "steps": steps, "answer": answer}

    @tool
    def search_kb():  # type: ignore[no-untyped-def]
        async def execute(query: str) -> str:
            """Search the knowledge base.

            Args:
              query: words to look for
            """
            words = query.split()
            return f"3 articles match '{query}': KB-{len(query)} covers {words[-1]}."

        return execute

    @tool
    def lookup_account():  # type: ignore[no-untyped-def]
        async def execute(ticket: str) -> str:
            """Look up the account behind a ticket.

            Args:
              ticket: the ticket id
            """
            return f"Ticket {ticket}: account in good standing, plan Pro, 2 open tickets."

        return execute

    @tool
    def route():  # type: ignore[no-untyped-def]
        async def execute(team: str, priority: str) -> str:
            """Route the ticket to a team.

            Args:
              team: the team's queue
              priority: p1, p2 or p3
            """
            return f"Queued for {team} at {priority}."

        return execute

    def mock_model(input, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        """mockllm/model's outputs: replay the epoch's script, one step per call."""
        state = sample_state()
        assert state is not None
        plan = plan_for(state.sample_id, state.epoch)
        done = sum(1 for m in input if isinstance(m, ChatMessageTool))
        if done < len(plan["steps"]):
            step = plan["steps"][done]
            output = ModelOutput.for_tool_call(
                "mockllm/model",
                step["tool"],
                step["args"],
                tool_call_id=f"call_{done + 1}",
                content=f"Step {done + 1}: calling {step['tool']}.",
            )
        else:
            output = ModelOutput.from_content("mockllm/model", plan["answer"])
        output.usage = ModelUsage(input_tokens=40 * len(input), output_tokens=24,
                                  total_tokens=40 * len(input) + 24)  # fmt: skip
        return output

    @solver
    def triage_agent():  # type: ignore[no-untyped-def]
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            plan = plan_for(state.sample_id, state.epoch)
            if plan["errored"]:
                raise RuntimeError("sandbox: connection reset by peer while starting tools")
            state = await generate(state, tool_calls="loop")
            finished["epochs"] += 1
            if run.get("fail_on_error") and finished["epochs"] == run.get("fail_at"):
                raise RuntimeError("tool server crashed: quota exceeded")
            if run.get("interrupt_after") and finished["epochs"] >= run["interrupt_after"]:
                await asyncio.sleep(1.5)  # let the journal flush, then die mid-run
                os._exit(3)
            return state

        return solve

    @scorer(metrics=[accuracy()])
    def resolution():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Any) -> Score:
            answer = state.output.completion
            want, team = target.target
            right = f"Resolution: {want}." in answer
            routed = f"Routed to {team}." in answer
            value = CORRECT if right and routed else PARTIAL if right else INCORRECT
            explanation = (
                "right resolution and team"
                if value == CORRECT
                else f"right resolution, routed to the wrong team (want {team})"
                if value == PARTIAL
                else f"wrong resolution (want {want})"
            )
            return Score(value=value, answer=answer, explanation=explanation)

        return score

    @scorer(metrics=[mean()])
    def tool_use():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Any) -> Score:
            used = {
                call.function
                for m in state.messages
                for call in (getattr(m, "tool_calls", None) or [])
            }
            value = len(used & {"search_kb", "lookup_account", "route"}) / 3
            return Score(value=value, explanation=f"used {', '.join(sorted(used)) or 'no tools'}")

        return score

    dataset = [
        Sample(
            id=sample_id,
            input=text,
            target=[resolution_, team],
            metadata={
                **meta,
                "needs_lookup": meta["difficulty"] >= 2,
                "history": [f"earlier ticket {i}" for i in range(2)],  # not a tag: a list
            },
        )
        for sample_id, text, resolution_, team, meta in tickets
    ]
    epochs: Any = run["epochs"]
    if run.get("reducers"):
        epochs = Epochs(run["epochs"], run["reducers"])
    task = Task(
        name=TASK,
        dataset=dataset,
        solver=[use_tools(search_kb(), lookup_account(), route()), triage_agent()],
        scorer=[resolution(), tool_use()],
        epochs=epochs,
    )
    fmt = run.get("format", "eval")
    with tempfile.TemporaryDirectory() as own_tmp:
        tmp = run.get("log_dir") or own_tmp
        options: dict[str, Any] = {
            "model": "mockllm/model",
            "model_args": {"custom_outputs": mock_model},
            "log_dir": tmp,
            "log_format": fmt,
            "metadata": {"release": release, "agent": "triage-bot"},
            "fail_on_error": bool(run.get("fail_on_error")),
            "max_samples": 1 if ("cancel_after" in run or "interrupt_after" in run) else 4,
            "log_buffer": 2 if "interrupt_after" in run else None,
        }

        async def go() -> None:
            job = asyncio.ensure_future(eval_async(task, **options))
            if "cancel_after" in run:
                while finished["epochs"] < run["cancel_after"] and not job.done():
                    await asyncio.sleep(0.01)
                job.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await job

        asyncio.run(go())
        move_log(run, Path(tmp))


def move_log(run: dict[str, Any], log_dir: Path) -> None:
    """Copy the one log Inspect wrote into log_dir to its fixture name."""
    (log,) = list(log_dir.glob("*.json" if run.get("format") == "json" else "*.eval"))
    (target_dir(run) / file_name(run)).write_bytes(log.read_bytes())


def inside_run(spec: str) -> None:
    run_one(json.loads(spec))


# ---- inside the venv: Inspect's own numbers ------------------------------------------------


def write_numbers() -> None:
    """What Inspect computes for every log, keyed by path relative to the repository."""
    numbers: dict[str, Any] = {}
    for directory in (SAMPLES_DIR, FIXTURES_DIR):
        for path in sorted(directory.iterdir()):
            numbers[path.relative_to(REPO).as_posix()] = numbers_for(path)
    EXPECTED.write_text(json.dumps(numbers, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {EXPECTED.relative_to(REPO)} ({len(numbers)} logs)")


def numbers_for(path: Path) -> dict[str, Any]:
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(path))
    scorers = [s.name for s in (log.eval.scorers or [])]
    by_sample: dict[str, list[Any]] = {}
    ids: dict[str, int | str] = {}
    for sample in log.samples or []:
        key = f"{type(sample.id).__name__}:{sample.id}"
        ids[key] = sample.id
        by_sample.setdefault(key, []).append(sample)
    result: dict[str, Any] = {
        "status": log.status,
        "version": log.version,
        "task": log.eval.task,
        "model": log.eval.model,
        "release": (log.eval.metadata or {}).get("release"),
        "created": log.eval.created,
        "inspect_ai": log.eval.packages.get("inspect_ai"),
        "epochs": log.eval.config.epochs,
        "scorers": scorers,
        "samples": {
            key: {
                "id": ids[key],
                "epochs": sorted(s.epoch for s in samples),
                "errored_epochs": sorted(
                    s.epoch for s in samples if s.error is not None and not s.scores
                ),
            }  # fmt: skip
            for key, samples in by_sample.items()
        },
        "stored_reductions": [
            {
                "scorer": r.scorer,
                "reducer": r.reducer,
                "samples": {
                    f"{type(s.sample_id).__name__}:{s.sample_id}": s.value for s in r.samples
                },  # fmt: skip
            }
            for r in log.reductions or []
        ],
        "views": {
            "default": reducer_numbers(by_sample, scorers[0], 1.0),
            "second_scorer_0.5": reducer_numbers(by_sample, scorers[1], 0.5),
        },
    }
    return result


def reducer_numbers(by_sample: dict[str, list[Any]], scorer_name: str, threshold: float) -> Any:
    """Per-sample pass_at(k) / pass_k(k) values from Inspect's reducers, and their mean over
    the samples, for every k from 1 to the largest epoch count."""
    import math

    from inspect_ai.scorer import pass_at, pass_k

    scored = {
        key: [s.scores[scorer_name] for s in samples if s.scores and scorer_name in s.scores]
        for key, samples in by_sample.items()
    }
    counted = {key: scores for key, scores in scored.items() if scores}
    k_max = max(len(samples) for samples in by_sample.values())
    out: dict[str, Any] = {
        "scorer": scorer_name,
        "threshold": threshold,
        "evaluated_samples": sorted(counted),
        "errored_samples": sorted(set(scored) - set(counted)),
        "min_scored_epochs": min(len(s) for s in counted.values()) if counted else 0,
        "pass_at_k": {},
        "pass_hat_k": {},
    }
    for metric, reducer in (("pass_at_k", pass_at), ("pass_hat_k", pass_k)):
        for k in range(1, k_max + 1):
            reduce = reducer(k, value=threshold)
            per_sample = {key: float(reduce(scores).value) for key, scores in counted.items()}
            known = [v for v in per_sample.values() if not math.isnan(v)]
            out[metric][str(k)] = {
                "per_sample": {
                    key: (None if math.isnan(v) else v) for key, v in per_sample.items()
                },
                # relidash's number: the mean over every evaluated sample, defined only
                # when every sample has k scored epochs
                "mean": sum(known) / len(known) if known and len(known) == len(counted) else None,
                # Inspect's own average skips the samples with fewer than k epochs
                "mean_of_defined": sum(known) / len(known) if known else None,
            }
    return out


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--inside-run":
        inside_run(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
