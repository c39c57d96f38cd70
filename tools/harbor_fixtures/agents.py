"""A Harbor agent that passes or fails at random, and sometimes crashes or stalls.

Every fixture task's instruction names one file and its exact content
(``Write `CONTENT` to `PATH`.``). The agent reads that line and then, by a
seeded draw, does one of five things:

- pass: writes the right content (the verifier gives reward 1);
- fail: writes a wrong content (reward 0);
- crash: raises ``SimulatedAgentCrash`` before writing anything, an exception
  Harbor's error policy does not classify (0.25: the verifier does not run, no
  reward; 0.26: graded, reward 0, counted as a valid reward);
- provider: raises ``ApiRateLimitError`` before writing anything, a model
  provider error by Harbor's policy (0.25: as crash; 0.26: graded, reward 0,
  ``reward_valid`` false, left out of pass@k);
- stall: writes the right or wrong content, then sleeps past the task's agent
  timeout, so Harbor raises ``AgentTimeoutError`` and still runs the verifier.

The draw for the n-th attempt of a task in one process depends only on
(seed, task name, n), so a job's outcomes per task are reproducible whatever
order Harbor schedules its trials in. Each attempt leaves a short log in its
agent logs, and each that writes an answer an ATIF ``trajectory.json`` too
(built with Harbor's own models).

Agent kwargs (``agents[].kwargs`` in the job config): ``seed``, ``profile`` (a
key of ``PROFILES``: the chance of a right answer per task; ``p_pass`` for
other tasks), ``p_crash``, ``p_provider``, ``p_stall``, ``agent_version``,
``stall_sec`` (how long a stall sleeps) and ``delay_sec`` (a pause before every
attempt, to slow a job down). Use it as
``agents[].import_path = "agents:CoinFlipAgent"``.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
from collections import Counter
from pathlib import Path

from harbor.agents.base import BaseAgent
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

_ATTEMPTS: Counter[tuple[int, str]] = Counter()
_ASK = re.compile(r"Write `(?P<content>[^`]*)` to `(?P<path>/[^`]+)`")


class SimulatedAgentCrash(RuntimeError):
    """The agent gave up with an error, as a real agent's unhandled exception would."""


class ApiRateLimitError(RuntimeError):
    """A model provider's rate limit, named as Harbor's error policy knows it.

    Harbor classifies exceptions by type name: from 0.26 this one is graded but
    marks the trial's reward invalid; 0.25 treats it as any other agent error.
    """


# Chance of a right answer per task, by profile: hard tasks stay hard.
PROFILES: dict[str, dict[str, float]] = {
    "base": {
        "hello-file": 0.9,
        "sum-numbers": 0.7,
        "reverse-word": 0.5,
        "csv-header": 0.5,
        "json-key": 0.3,
        "config-port": 0.2,
    },
    "improved": {
        "hello-file": 0.9,
        "sum-numbers": 0.7,
        "reverse-word": 0.8,
        "csv-header": 0.7,
        "json-key": 0.5,
        "config-port": 0.2,
    },
}


class CoinFlipAgent(BaseAgent):
    """Answers right with probability p_pass; crashes or stalls now and then."""

    def __init__(
        self,
        logs_dir: Path,
        model_name: str | None = None,
        *,
        seed: int = 0,
        profile: str = "base",
        p_pass: float = 0.5,
        p_crash: float = 0.08,
        p_provider: float = 0.08,
        p_stall: float = 0.1,
        agent_version: str = "1.0.0",
        stall_sec: float = 30.0,
        delay_sec: float = 0.0,
        **kwargs,
    ):
        super().__init__(logs_dir=logs_dir, model_name=model_name, **kwargs)
        self._seed = int(seed)
        self._p_pass = float(p_pass)
        self._p_crash = float(p_crash)
        self._p_provider = float(p_provider)
        self._p_stall = float(p_stall)
        self._task_p_pass = PROFILES[profile]
        self._version = str(agent_version)
        self._stall_sec = float(stall_sec)
        self._delay_sec = float(delay_sec)

    @staticmethod
    def name() -> str:
        return "coin-flip"

    def version(self) -> str:
        return self._version

    async def setup(self, environment: BaseEnvironment) -> None:
        return None

    def _draw(self, task: str) -> tuple[str, bool, random.Random]:
        """(action, right answer?, rng) for this task's next attempt in this process."""
        n = _ATTEMPTS[(self._seed, task)]
        _ATTEMPTS[(self._seed, task)] += 1
        digest = hashlib.sha256(f"{self._seed}:{task}:{n}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        p_pass = self._task_p_pass.get(task, self._p_pass)
        roll = rng.random()
        if roll < self._p_crash:
            return "crash", False, rng
        if roll < self._p_crash + self._p_provider:
            return "provider", False, rng
        if roll < self._p_crash + self._p_provider + self._p_stall:
            return "stall", rng.random() < p_pass, rng
        return ("pass", True, rng) if rng.random() < p_pass else ("fail", False, rng)

    async def run(
        self,
        instruction: str,
        environment: BaseEnvironment,
        context: AgentContext,
    ) -> None:
        task = environment.environment_name
        action, right, rng = self._draw(task)
        if self._delay_sec:
            await asyncio.sleep(self._delay_sec)
        ask = _ASK.search(instruction)
        if ask is None:
            raise SimulatedAgentCrash(f"no `Write ... to ...` line in the instruction of {task}")
        content = ask["content"] if right else f"{ask['content']}-wrong"
        log = self.logs_dir / "coin-flip.txt"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(f"task={task} action={action} right={right}\n")
        context.n_input_tokens = 40 + rng.randrange(200)
        context.n_output_tokens = 5 + rng.randrange(50)
        context.cost_usd = round(context.n_input_tokens * 1e-6, 8)
        if action == "crash":
            raise SimulatedAgentCrash(f"simulated crash on {task}")
        if action == "provider":
            raise ApiRateLimitError(f"429 Too Many Requests (simulated) on {task}")
        self._write_trajectory(instruction, content, context)
        result = await environment.exec(
            command=f"printf %s {_shell_quote(content)} > {_shell_quote(ask['path'])}"
        )
        if result.return_code != 0:
            raise SimulatedAgentCrash(f"could not write {ask['path']}: {result.stderr}")
        if action == "stall":
            await asyncio.sleep(self._stall_sec)

    def _write_trajectory(self, instruction: str, content: str, context: AgentContext) -> None:
        """A two-step ATIF trajectory, written with Harbor's own models."""
        from harbor.models.trajectories.agent import Agent
        from harbor.models.trajectories.final_metrics import FinalMetrics
        from harbor.models.trajectories.step import Step
        from harbor.models.trajectories.trajectory import Trajectory

        trajectory = Trajectory(
            session_id=self.session_id or "coin-flip",
            agent=Agent(name=self.name(), version=self._version, model_name=self.model_name),
            steps=[
                Step(step_id=1, source="user", message=instruction),
                Step(step_id=2, source="agent", message=f"Writing {content!r}."),
            ],
            final_metrics=FinalMetrics(
                total_prompt_tokens=context.n_input_tokens,
                total_completion_tokens=context.n_output_tokens,
                total_cost_usd=context.cost_usd,
                total_steps=2,
            ),
        )
        (self.logs_dir / "trajectory.json").write_text(
            trajectory.model_dump_json(indent=2, exclude_none=True)
        )


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
