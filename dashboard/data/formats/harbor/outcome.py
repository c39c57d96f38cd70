"""One Harbor trial's outcome under relidash's rule: whether it counts, whether it passed,
its rewards and its exceptions with their causes.

A trial passes when its reward under `reward_key` reaches `pass_threshold`. Which trials
count follows the Harbor version that wrote the job, as its own pass@k does: before 0.26
every finished trial counts (one without a reward is a failure); from 0.26 only trials
whose `reward_valid` is true count, and the rest are agent errors left out (failures when
agent errors count).

Must not: touch DuckDB, import Streamlit or Altair, or read files.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dashboard.data.formats.harbor.causes import cause_of

MAX_ERROR_TEXT = 500


@dataclass(frozen=True)
class Failure:
    """One exception a trial recorded."""

    type: str
    cause: str
    message: str
    traceback: str


@dataclass(frozen=True)
class Outcome:
    counted: bool
    passed: bool
    value: float | None  # the reward under reward_key
    rewards: dict[str, Any]
    failures: tuple[Failure, ...]

    @property
    def status(self) -> str:
        if not self.counted:
            return "model_error"
        return "passed" if self.passed else "failed_quality"

    @property
    def error_text(self) -> str | None:
        """The first exception, for the trial's model_error column."""
        if not self.failures:
            return None
        first = self.failures[0]
        text = f"{first.type} ({first.cause}): {first.message}".strip()
        return text if len(text) <= MAX_ERROR_TEXT else text[:MAX_ERROR_TEXT] + "…"


def trial_outcome(trial: dict[str, Any], valid_rule: bool, key: str, threshold: float) -> Outcome:
    rewards = rewards_of(trial)
    counted = trial.get("reward_valid") is True if valid_rule else True
    raw = rewards.get(key)
    value = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    return Outcome(
        counted=counted,
        passed=counted and value is not None and value >= threshold,
        value=value,
        rewards=rewards,
        failures=failures_of(trial),
    )


def rewards_of(trial: dict[str, Any]) -> dict[str, Any]:
    verifier = trial.get("verifier_result")
    rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
    return rewards if isinstance(rewards, dict) else {}


def failures_of(trial: dict[str, Any]) -> tuple[Failure, ...]:
    """The trial's exception, then its steps' (Harbor's recorded_exceptions order)."""
    infos = [trial.get("exception_info")]
    steps = trial.get("step_results")
    infos += (
        [s.get("exception_info") for s in steps if isinstance(s, dict)]
        if isinstance(steps, list)
        else []
    )
    out = []
    for info in infos:
        if isinstance(info, dict) and info.get("exception_type"):
            kind = str(info["exception_type"])
            out.append(
                Failure(
                    kind,
                    cause_of(kind),
                    str(info.get("exception_message") or ""),
                    str(info.get("exception_traceback") or ""),
                )
            )
    return tuple(out)


def latency_ms(trial: dict[str, Any]) -> float | None:
    try:
        start = datetime.fromisoformat(str(trial.get("started_at")))
        end = datetime.fromisoformat(str(trial.get("finished_at")))
    except ValueError:
        return None
    return (end - start).total_seconds() * 1000.0


def harbor_pass_at_k(trials: list[dict[str, Any]], valid_rule: bool) -> dict[str, float]:
    """Harbor's own pass@k of one eval's trials (harbor/utils/pass_at_k.py): only rewards
    of exactly 0 or 1 on a single key, k a power of 2 or a multiple of 5 up to the fewest
    trials of a task; {} when the rewards do not allow it."""
    outcomes: dict[str, list[int]] = defaultdict(list)
    for trial in trials:
        if valid_rule and trial.get("reward_valid") is not True:
            continue
        verifier = trial.get("verifier_result")
        rewards = verifier.get("rewards") if isinstance(verifier, dict) else None
        if rewards is None:
            if valid_rule:
                continue
            outcomes[str(trial["task_name"])].append(0)
            continue
        if not isinstance(rewards, dict) or len(rewards) != 1:
            return {}
        value = next(iter(rewards.values()))
        if not _number(value) or value not in (0, 1):
            return {}
        outcomes[str(trial["task_name"])].append(int(value))
    if not outcomes:
        return {}
    fewest = min(len(v) for v in outcomes.values())
    ks = sorted({2**i for i in range(1, fewest.bit_length()) if 2**i <= fewest})
    ks = sorted(set(ks) | set(range(5, fewest + 1, 5)))
    return {
        str(k): sum(_pass_at(len(v), sum(v), k) for v in outcomes.values()) / len(outcomes)
        for k in ks
    }


def _pass_at(n: int, c: int, k: int) -> float:
    if n - c < k:
        return 1.0
    product = 1.0
    for i in range(k):
        product *= (n - c - i) / (n - i)
    return 1.0 - product


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
