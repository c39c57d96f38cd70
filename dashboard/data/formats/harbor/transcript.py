"""One Harbor task's attempts read back from the job folder, as readable transcripts.

An attempt's transcript is text made to be diffed line by line: the agent's trajectory
(ATIF `agent/trajectory.json`: one block per step, each tool call with its arguments and
each observation) or, for an agent that writes none, its log files under `agent/`; the
verifier's `test-stdout.txt`; every reward; and, for an attempt that raised, each
exception's type, failure cause, message and traceback. Ids and times (random per trial)
are left out, so two attempts differ only where the agent did.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import json
import os
from typing import Any

from dashboard.data.formats.harbor.causes import VALID_REWARD_CAUSES
from dashboard.data.formats.harbor.job import read_json
from dashboard.data.formats.harbor.outcome import Outcome
from dashboard.data.formats.harbor.rows import eval_key, trial_order
from dashboard.data.formats.protocol import FormatProblem
from dashboard.data.formats.tool_calls import tool_call_lines

MAX_TEXT = 64 * 1024  # of one log or output file
LOG_SUFFIXES = (".txt", ".log", ".md", ".jsonl")


def read_task_attempts(root: str, task: str, key: str) -> list[dict[str, Any]]:
    """The result.json of each attempt at `task` in eval `key`, in attempt order."""
    needle = json.dumps(task).encode()
    found = []
    with os.scandir(root) as entries:
        folders = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    for folder in folders:
        path = os.path.join(root, folder, "result.json")
        try:
            with open(path, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError:
            continue
        if needle not in raw:  # most trials are of other tasks: skip parsing them
            continue
        data = read_json(path, f"trial {folder}'s result.json")
        if isinstance(data, dict) and data.get("task_name") == task and eval_key(data) == key:
            data["_folder"] = folder
            found.append(data)
    return sorted(found, key=trial_order)


def transcript(
    folder: str, trial: dict[str, Any], outcome: Outcome, key: str, threshold: float
) -> str:
    blocks = _agent_blocks(os.path.join(folder, "agent"))
    verifier = os.path.join(folder, "verifier")
    for name in ("test-stdout.txt", "test-stderr.txt"):
        text = _text(os.path.join(verifier, name))
        if text and text.strip():
            blocks.append(f"[verifier: {name}]\n{text.rstrip()}")
    blocks.append(_rewards_block(outcome, key, threshold))
    for failure in outcome.failures:
        keeps = failure.cause in VALID_REWARD_CAUSES
        blocks.append(
            f"[exception {failure.type}: cause {failure.cause}"
            + (", a valid measurement of the agent" if keeps else ", not the agent's doing")
            + f"]\n{failure.message.rstrip()}\n\n{failure.traceback.rstrip()}"
        )
    if not outcome.counted:
        blocks.append(
            "[left out: no valid reward, as Harbor's pass@k leaves it out; a failure when "
            "agent errors count]"
        )
    return "\n\n".join(blocks) + "\n"


def evaluators(outcome: Outcome, key: str, threshold: float) -> list[dict[str, Any]]:
    """The attempt's rewards in the shape of multivon-eval's per-trial graders: the chosen
    key decides the trial, the others are scores."""
    out = []
    for name, value in outcome.rewards.items():
        number = (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
        decides = name == key and outcome.counted
        out.append(
            {
                "name": name,
                "score": number,
                "passed": (number >= threshold) if decides and number is not None else None,
                "reason": None if outcome.counted else "no valid reward: left out",
                "value": value,
            }
        )
    if not outcome.rewards and outcome.failures:
        first = outcome.failures[0]
        out.append(
            {
                "name": key,
                "score": None,
                "passed": False if outcome.counted else None,
                "reason": f"no reward: {first.type} ({first.cause})",
                "value": None,
            }
        )
    return out


def _rewards_block(outcome: Outcome, key: str, threshold: float) -> str:
    if not outcome.rewards:
        return "[rewards: none]" + (" (a failure)" if outcome.counted else "")
    lines = []
    for name, value in outcome.rewards.items():
        if name == key and outcome.counted:
            verdict = "passed" if outcome.passed else "failed"
            lines.append(f"{name} = {value} ({verdict}; passing needs >= {threshold:g})")
        else:
            lines.append(f"{name} = {value}")
    return "[rewards]\n" + "\n".join(lines)


def _agent_blocks(agent_dir: str) -> list[str]:
    trajectory = os.path.join(agent_dir, "trajectory.json")
    if os.path.isfile(trajectory):
        try:
            data = read_json(trajectory, "trajectory.json")
        except (FormatProblem, OSError):
            data = None
        steps = data.get("steps") if isinstance(data, dict) else None
        if isinstance(steps, list):
            return [_step_block(s) for s in steps if isinstance(s, dict)]
    blocks = []
    try:
        names = sorted(os.listdir(agent_dir))
    except OSError:
        return ["[agent: no log]"]
    for name in names:
        path = os.path.join(agent_dir, name)
        if name.endswith(LOG_SUFFIXES) and os.path.isfile(path):
            text = _text(path)
            if text is not None:
                blocks.append(f"[agent log: {name}]\n{text.rstrip()}")
    return blocks or ["[agent: no log]"]


def _step_block(step: dict[str, Any]) -> str:
    lines = [f"[{step.get('source') or 'step'}]"]
    message = _content(step.get("message")).strip()
    if message:
        lines.append(message)
    reasoning = step.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        lines.append(f"(reasoning) {reasoning.strip()}")
    for call in step.get("tool_calls") or []:
        if isinstance(call, dict):
            lines += _call_lines(call)
    observation = step.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    for result in results or []:
        if isinstance(result, dict):
            lines.append("[observation]")
            lines.append(_content(result.get("content")).rstrip())
    return "\n".join(lines)


def _call_lines(call: dict[str, Any]) -> list[str]:
    raw = call.get("arguments")
    return tool_call_lines(call.get("function_name"), raw if isinstance(raw, dict) else {})


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text") or f"[{part.get('type') or 'part'}]"))
        return "\n".join(parts)
    return ""


def _text(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_TEXT + 1)
    except OSError:
        return None
    text = raw[:MAX_TEXT].decode("utf-8", errors="replace")
    return text + ("\n…(cut at 64 KiB)" if len(raw) > MAX_TEXT else "")
