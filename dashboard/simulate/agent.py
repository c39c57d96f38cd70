"""The simulated support agent: seeded random streams (mulberry32), the task templates
(templates.json, shipped in the package), and one trial's transcript and grades.

Outcomes come from mulberry32 and nothing else; see the package docstring. Must not:
write files, import DuckDB or Streamlit, or depend on multivon-eval.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dashboard.simulate.settings import MASK32

TEMPLATES_FILE = Path(__file__).with_name("templates.json")


# --- the generator ------------------------------------------------------------------------


def mulberry32(seed: int) -> Callable[[], float]:
    """The mulberry32 generator: a function returning the next number in [0, 1).

    A line-for-line port of the JavaScript original, with every intermediate kept to 32
    bits as `Math.imul` and `>>> 0` do:
    `a += 0x6D2B79F5; t = imul(a ^ a >>> 15, a | 1); t ^= t + imul(t ^ t >>> 7, t | 61);
    return ((t ^ t >>> 14) >>> 0) / 2**32`.
    """
    a = seed & MASK32

    def draw() -> float:
        nonlocal a
        a = (a + 0x6D2B79F5) & MASK32
        t = ((a ^ (a >> 15)) * (a | 1)) & MASK32
        t ^= (t + ((t ^ (t >> 7)) * (t | 61))) & MASK32
        return ((t ^ (t >> 14)) & MASK32) / 4294967296.0

    return draw


def derive_seed(seed: int, *parts: object) -> int:
    """A 32-bit seed for an independent stream, named by `parts`."""
    text = "|".join(str(x) for x in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


class Texture:
    """Choices that shape a report but never an outcome: wording, latencies, ids."""

    def __init__(self, seed: int) -> None:
        self.draw = mulberry32(seed)

    def uniform(self, low: float = 0.0, high: float = 1.0) -> float:
        return low + (high - low) * self.draw()

    def below(self, n: int) -> int:
        return min(int(self.draw() * n), n - 1)

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]

    def hex_id(self) -> str:
        return "".join(f"{int(self.draw() * 4294967296.0):08x}" for _ in range(4))


# --- the simulated agent's tasks ----------------------------------------------------------


@dataclass(frozen=True)
class Template:
    slug: str
    domain: str
    risk: str
    tag: str
    input: str
    tool: str | None
    result: str | None
    good: str
    bad: tuple[str, ...]
    facts: tuple[str, ...]
    forbidden: tuple[str, ...] = ()


def load_templates(path: Path = TEMPLATES_FILE) -> tuple[Template, ...]:
    """The task templates, kept as data beside this module (templates.json)."""
    rows = json.loads(path.read_text(encoding="utf-8"))["templates"]
    tuples = ("bad", "facts", "forbidden")
    return tuple(
        Template(**{key: tuple(value) if key in tuples else value for key, value in row.items()})
        for row in rows
    )


# `{id}`, `{amt}` and `{acct}` are filled per case, so every case of a suite differs.
TEMPLATES: tuple[Template, ...] = load_templates()


SUITE_NAMES = (
    "support-chat",
    "support-email",
    "billing-desk",
    "returns-desk",
    "trust-safety",
    "help-center",
    "voice-agent",
    "partner-support",
)
OPENERS = (
    "I can help with that. One moment.",
    "Let me look into that for you.",
    "Thanks for reaching out - checking now.",
)
CLOSER = "Is there anything else I can help with?"
MODEL_ERRORS = (
    "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', "
    "'message': 'Overloaded'}}",
    "Request timed out after 30.0s",
    "Error code: 500 - {'error': {'message': 'The server had an error while processing your "
    "request.', 'type': 'server_error'}}",
    "Connection reset by peer",
)
EVALUATORS = ("required_facts", "policy_guard")


@dataclass(frozen=True)
class Task:
    """One case of a simulated suite: the same in every release."""

    case_id: str
    slug: str
    input: str
    tool: str | None
    result: str | None
    good: str
    bad: tuple[str, ...]
    facts: tuple[str, ...]
    forbidden: tuple[str, ...]
    tags: tuple[str, ...]

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"facts": list(self.facts), "slug": self.slug}
        if self.forbidden:
            meta["forbidden"] = list(self.forbidden)
        return dict(sorted(meta.items()))


def suite_name(index: int) -> str:
    base = SUITE_NAMES[index % len(SUITE_NAMES)]
    return base if index < len(SUITE_NAMES) else f"{base}-{index // len(SUITE_NAMES) + 1}"


def release_label(index: int) -> str:
    return f"v1.{index}.0"


def suite_tasks(name: str, cases: int, seed: int) -> list[Task]:
    texture = Texture(derive_seed(seed, name, "tasks"))
    offset = texture.below(len(TEMPLATES))
    tasks = []
    for i in range(cases):
        tpl = TEMPLATES[(offset + i) % len(TEMPLATES)]
        ident = 10000 + 997 * i + texture.below(997)
        values = {
            "id": str(ident),
            "id4": f"{ident % 10000:04d}",
            "amt": f"{texture.uniform(9, 240):.2f}",
            "acct": f"ACC-{texture.below(90000) + 10000}",
        }

        def fill(text: str, values: dict[str, str] = values) -> str:
            return text.format(**values)

        tasks.append(
            Task(
                case_id=f"{name}/{tpl.slug}-{i + 1:03d}",
                slug=tpl.slug,
                input=fill(tpl.input),
                tool=fill(tpl.tool) if tpl.tool else None,
                result=fill(tpl.result) if tpl.result else None,
                good=fill(tpl.good),
                bad=tuple(fill(b) for b in tpl.bad),
                facts=tuple(fill(f) for f in tpl.facts),
                forbidden=tpl.forbidden,
                tags=(f"risk_tier:{tpl.risk}", f"domain:{tpl.domain}", tpl.tag),
            )
        )
    return tasks


def reliabilities(
    tasks: Sequence[Task], releases: int, p: float, seed: int, name: str
) -> list[list[float]]:
    """Each case's pass probability per release: `p` at first, then drifting.

    Most cases wander a little; a few regress sharply or get fixed, as when a prompt or
    tool change lands.
    """
    texture = Texture(derive_seed(seed, name, "drift"))
    current = [p] * len(tasks)
    table = [list(current)]
    for _ in range(1, releases):
        for i, value in enumerate(current):
            u = texture.uniform()
            if u < 0.05:
                value -= texture.uniform(0.25, 0.5)
            elif u < 0.12:
                value += (1.0 - value) * texture.uniform(0.5, 0.9)
            else:
                value += texture.uniform(-0.03, 0.03)
            current[i] = min(0.995, max(0.02, value))
        table.append(list(current))
    return table


# --- grading a transcript, as the suite's two graders would ---------------------------------


def transcript(task: Task, answer: str, texture: Texture) -> str:
    lines = [f"[user] {task.input}", f"[assistant] {texture.choice(OPENERS)}"]
    if task.tool:
        lines += [f"[tool_call] {task.tool}", f"[tool_result] {task.result}"]
    lines.append(f"[assistant] {answer}")
    if texture.uniform() < 0.3:
        lines.append(f"[assistant] {CLOSER}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Grade:
    name: str
    score: float
    passed: bool
    reason: str
    skipped: bool = False
    error_kind: str | None = None


def grade(task: Task, output: str) -> list[Grade]:
    # both graders read the agent's turns only: the user may quote a forbidden string
    said = "\n".join(x for x in output.splitlines() if x.startswith("[assistant]")).lower()
    missing = [f for f in task.facts if f.lower() not in said]
    facts = Grade(
        "required_facts",
        (len(task.facts) - len(missing)) / len(task.facts),
        not missing,
        "All required facts present" if not missing else f"Missing: {missing}",
    )
    hits = [f for f in task.forbidden if f.lower() in said]
    if not task.forbidden:
        policy = Grade("policy_guard", 1.0, True, "No forbidden actions declared")
    elif hits:
        policy = Grade("policy_guard", 0.0, False, f"Policy violation: {hits}")
    else:
        policy = Grade("policy_guard", 1.0, True, "No policy violations")
    return [facts, policy]


@dataclass(frozen=True)
class Run:
    output: str
    grades: list[Grade]
    latency_ms: float
    model_error: str | None

    @property
    def passed(self) -> bool:
        return self.model_error is None and all(g.passed for g in self.grades)

    def score(self, fmt: str) -> float:
        # 0.17+ leaves graders flagged `skipped` out of the mean; 0.15 averages them all
        measured = [g for g in self.grades if not (fmt == "0.20" and g.skipped)]
        return sum(g.score for g in measured) / len(measured) if measured else 0.0


def simulate_run(task: Task, passes: bool, error: str | None, texture: Texture) -> Run:
    if error is not None:
        grades = [
            Grade(name, 0.0, False, f"[skipped — model error: {error}]", True, "model_error_skip")
            for name in EVALUATORS
        ]
        return Run(f"[MODEL ERROR: {error}]", grades, texture.uniform(30000, 31500), error)
    answer = task.good if passes else texture.choice(task.bad)
    output = transcript(task, answer, texture)
    grades = grade(task, output)
    if all(g.passed for g in grades) != passes:
        raise AssertionError(f"template {task.slug}: graders disagree with the simulated outcome")
    return Run(output, grades, texture.uniform(1200, 4800), None)


# --- digests, as multivon-eval computes them -------------------------------------------------
