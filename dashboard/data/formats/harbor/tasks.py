"""A Harbor task's folder, for what no result file copies: its task.toml `[metadata]`
(difficulty, category, tags) and `[task]` keywords as slices, and its instruction as the
case's input.

The folder is the one the trial records (`task_id.path`, else `config.task.path`) when it
holds a task.toml; else, with relidash.toml's `[harbor] tasks` (a folder of task folders,
relative to the reports directory), the task folder there of the recorded folder's name
or of the trial folder's prefix (Harbor names a trial `<task folder name[:32]>__<id>`).
Only `task.toml` and `instruction.md` are read from it.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from typing import Any

TASK_FILE = "task.toml"
INSTRUCTION_FILE = "instruction.md"
MAX_TASK_BYTES = 1 << 20
MAX_INSTRUCTION_CHARS = 20_000
MAX_TAG_TEXT = 120  # a longer value is text, not a slice


@dataclass(frozen=True)
class TaskInfo:
    """What a task folder gives a case (empty when no folder was found)."""

    folder: str | None = None
    tags: tuple[str, ...] = ()
    instruction: str | None = None
    description: str | None = None
    problem: str | None = None  # why its task.toml could not be read


@dataclass
class TaskFolders:
    """Task folders looked up for one read, each folder read once."""

    tasks_dir: str | None
    found: dict[str, TaskInfo] = field(default_factory=dict)

    def for_trial(self, trial: dict[str, Any], lock_names: dict[str, str]) -> TaskInfo:
        """The task folder of one trial (by the path it records, then by name: lock.json's
        name for that path, the path's last part, the trial folder's prefix)."""
        recorded = _recorded_path(trial)
        candidates = [recorded] if recorded else []
        if self.tasks_dir:
            names = [
                lock_names.get(recorded) if recorded else None,
                os.path.basename(recorded.rstrip("/")) if recorded else None,
                str(trial.get("_folder", "")).rpartition("__")[0] or None,
            ]
            candidates += [os.path.join(self.tasks_dir, n) for n in dict.fromkeys(names) if n]
        for folder in candidates:
            info = self._read(folder)
            if info.folder is not None or info.problem:
                return info
        return TaskInfo()

    def _read(self, folder: str) -> TaskInfo:
        if folder not in self.found:
            self.found[folder] = read_task_folder(folder)
        return self.found[folder]


def _recorded_path(trial: dict[str, Any]) -> str | None:
    task_id = trial.get("task_id")
    path = task_id.get("path") if isinstance(task_id, dict) else None
    if not isinstance(path, str):
        config = trial.get("config")
        task = config.get("task") if isinstance(config, dict) else None
        path = task.get("path") if isinstance(task, dict) else None
    return path if isinstance(path, str) and path else None


def read_task_folder(folder: str) -> TaskInfo:
    """A task folder's slices and instruction (an empty TaskInfo when it has no task.toml)."""
    path = os.path.join(folder, TASK_FILE)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_TASK_BYTES + 1)
    except OSError:
        return TaskInfo()
    try:
        if len(raw) > MAX_TASK_BYTES:
            raise ValueError(f"over {MAX_TASK_BYTES} bytes")
        data = tomllib.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return TaskInfo(problem=f"{path} could not be read as TOML ({exc})")
    task = _table(data, "task")
    description = task.get("description")
    return TaskInfo(
        folder=folder,
        tags=task_tags(data),
        instruction=_instruction(folder),
        description=description if isinstance(description, str) else None,
    )


def task_tags(data: dict[str, Any]) -> tuple[str, ...]:
    """`difficulty:…` and `category:…` from `[metadata]`, each of its `tags` as a plain tag,
    each `[task]` keyword as `keyword:…`."""
    metadata = _table(data, "metadata")
    task = _table(data, "task")
    tags: list[str] = []
    for name in ("difficulty", "category"):
        value = metadata.get(name)
        if _scalar(value):
            tags.append(f"{name}:{str(value).strip()}")
    raw_tags = metadata.get("tags")
    for value in raw_tags if isinstance(raw_tags, list) else []:
        if _scalar(value):
            tags.append(str(value).strip())
    keywords = task.get("keywords")
    for value in keywords if isinstance(keywords, list) else []:
        if _scalar(value):
            tags.append(f"keyword:{str(value).strip()}")
    return tuple(dict.fromkeys(tags))


def _table(data: dict[str, Any], name: str) -> dict[str, Any]:
    value = data.get(name)
    return value if isinstance(value, dict) else {}


def _scalar(value: Any) -> bool:
    return (
        isinstance(value, str | int | float)
        and not isinstance(value, bool)
        and 0 < len(str(value).strip()) <= MAX_TAG_TEXT
    )


def _instruction(folder: str) -> str | None:
    try:
        with open(os.path.join(folder, INSTRUCTION_FILE), encoding="utf-8") as handle:
            text = handle.read(MAX_INSTRUCTION_CHARS + 1)
    except (OSError, UnicodeDecodeError):
        return None
    return text if len(text) <= MAX_INSTRUCTION_CHARS else text[:MAX_INSTRUCTION_CHARS] + "…"
