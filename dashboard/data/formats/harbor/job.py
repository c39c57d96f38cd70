"""A Harbor job folder read: its config.json, lock.json, result.json and each trial
folder's result.json, with the version check and relidash.toml's `[harbor]` table.

Harbor writes config.json and lock.json when a job starts, a trial folder's result.json
when the trial ends and the job's result.json as trials finish (`finished_at` set at the
end). Which trials count follows the version in lock.json (`harbor.version`): before 0.26
a trial without a reward is a failure; from 0.26 only trials whose `reward_valid` is true
count. A version newer than the newest known here is read by that rule when its fields
are those the rule needs, with a warning; otherwise it is a problem naming the version
and the field.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from dashboard.data.formats.protocol import FormatProblem

DEFAULT_REWARD_KEY = "reward"
DEFAULT_THRESHOLD = 1.0
NEWEST_KNOWN = (0, 26)
VALID_REWARD_FROM = (0, 26)  # the first version that writes reward_valid
KNOWN_SCHEMA = 1  # result.json schema_version (absent before 0.26)
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
# a job's own times are naive local times: read against lock.json's UTC created_at, to
# the nearest quarter hour (every UTC offset in use is a multiple of one)
_QUARTER_HOUR = 900
_MAX_OFFSET = 14 * 3600
# trial result.json fields the reader needs, with the type each must have (None: may be null)
_TRIAL_FIELDS: dict[str, tuple[type, ...]] = {
    "task_name": (str,),
    "trial_name": (str,),
    "agent_info": (dict,),
    "started_at": (str,),
    "verifier_result": (dict, type(None)),
    "exception_info": (dict, type(None)),
}


@dataclass(frozen=True)
class HarborSettings:
    """relidash.toml's `[harbor]` table (`tasks` made absolute)."""

    reward_key: str = DEFAULT_REWARD_KEY
    pass_threshold: float = DEFAULT_THRESHOLD
    tasks: str | None = None
    problem: str | None = None

    def fingerprint(self) -> str:
        return json.dumps([self.reward_key, self.pass_threshold, self.tasks, self.problem])


def read_harbor_settings(config: Path | None) -> HarborSettings:
    """The `[harbor]` table of the source's relidash.toml (None: the source has none)."""
    if config is None:
        return HarborSettings()
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return HarborSettings()  # the release config reports the unreadable file
    table = data.get("harbor", {})
    if not isinstance(table, dict):
        return HarborSettings(problem="[harbor] must be a table; using Harbor's defaults")
    key = table.get("reward_key", DEFAULT_REWARD_KEY)
    threshold = table.get("pass_threshold", DEFAULT_THRESHOLD)
    tasks = table.get("tasks")
    if (
        not isinstance(key, str)
        or not key.strip()
        or isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
        or (tasks is not None and (not isinstance(tasks, str) or not tasks.strip()))
    ):
        return HarborSettings(
            problem="[harbor] reward_key must be a reward's name, pass_threshold a number and "
            'tasks a folder; using reward_key "reward", pass_threshold 1.0 and no tasks folder'
        )
    folder = str((config.parent / tasks).resolve()) if tasks else None
    return HarborSettings(key.strip(), float(threshold), folder)


@dataclass
class Job:
    """What the catalog needs of one job (no transcripts)."""

    root: str
    name: str
    version: str | None  # lock.json harbor.version
    valid_rule: bool  # 0.26+: only trials with reward_valid count
    config: dict[str, Any]
    lock: dict[str, Any]
    result: dict[str, Any] | None
    trials: list[dict[str, Any]]  # each trial's result.json, with "_folder" added
    unfinished: list[str] = field(default_factory=list)  # trial folders without result.json
    warnings: list[str] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return bool(self.result and self.result.get("finished_at"))

    @property
    def version_label(self) -> str:
        return self.version or "(version not recorded)"


def read_json(path: str, what: str) -> Any:
    """A JSON file's value (FormatProblem naming `what` when it is not JSON)."""
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise FormatProblem(f"its {what} is not JSON ({exc})") from exc


def _object(path: str, what: str, required: bool) -> dict[str, Any] | None:
    try:
        data = read_json(path, what)
    except FileNotFoundError:
        if required:
            raise FormatProblem(f"is not a Harbor job: it has no {what}") from None
        return None
    if not isinstance(data, dict):
        raise FormatProblem(f"is not a Harbor job: its {what} is not a JSON object")
    return data


def read_job(root: str) -> Job:
    """A job folder's files (FormatProblem when it is not a readable Harbor job)."""
    config = _object(os.path.join(root, "config.json"), "config.json", True) or {}
    if "trial_name" in config or "task" in config and "job_name" not in config:
        raise FormatProblem(
            "is one Harbor trial's folder, not a job: point relidash at the job's folder "
            "(the one holding the trial folders) or at a folder of jobs"
        )
    lock = _object(os.path.join(root, "lock.json"), "lock.json", False) or {}
    result = _object(os.path.join(root, "result.json"), "result.json", False)
    harbor = lock.get("harbor")
    version = harbor.get("version") if isinstance(harbor, dict) else None
    if lock and not isinstance(version, str):
        raise FormatProblem("is not a Harbor job: its lock.json has no harbor.version")
    parsed = _parse_version(version)
    job = Job(
        root=root,
        name=str(config.get("job_name") or os.path.basename(root.rstrip("/"))),
        version=version,
        valid_rule=parsed is not None and parsed >= VALID_REWARD_FROM,
        config=config,
        lock=lock,
        result=result,
        trials=[],
    )
    if result is not None:
        _check_fields(job, result, "result.json", {"started_at": (str,), "stats": (dict,)})
    _read_trials(job)
    if parsed is not None and parsed > NEWEST_KNOWN:
        job.warnings.append(
            f"was written by Harbor {version}, newer than {'.'.join(map(str, NEWEST_KNOWN))}, "
            "the newest relidash knows; its fields are the ones relidash reads, so it is read "
            f"by Harbor {'.'.join(map(str, NEWEST_KNOWN))}'s rule (only trials whose "
            "reward_valid is true count)"
        )
    return job


def _parse_version(version: str | None) -> tuple[int, int] | None:
    match = _VERSION.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def _read_trials(job: Job) -> None:
    with os.scandir(job.root) as entries:
        folders = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
    fields = dict(_TRIAL_FIELDS)
    if job.valid_rule:
        fields["reward_valid"] = (bool,)
    for folder in folders:
        path = os.path.join(job.root, folder, "result.json")
        try:
            data = read_json(path, f"trial {folder}'s result.json")
        except FileNotFoundError:
            if os.path.exists(os.path.join(job.root, folder, "config.json")):
                job.unfinished.append(folder)  # a trial still running (or killed)
            continue
        if not isinstance(data, dict):
            raise FormatProblem(f"its trial {folder}'s result.json is not a JSON object")
        _check_fields(job, data, f"trial {folder}'s result.json", fields)
        data["_folder"] = folder
        job.trials.append(data)


def _check_fields(
    job: Job, data: dict[str, Any], what: str, fields: dict[str, tuple[type, ...]]
) -> None:
    """A field the reader needs, missing or of another type, is a problem naming the Harbor
    version, the file and the field."""
    schema = data.get("schema_version", KNOWN_SCHEMA)
    if job.valid_rule and schema != KNOWN_SCHEMA:
        raise FormatProblem(
            f"was written by Harbor {job.version_label}, whose {what} has schema_version "
            f"{schema!r}; relidash reads schema_version {KNOWN_SCHEMA} (Harbor 0.26): field "
            "`schema_version` does not match"
        )
    for name, types in fields.items():
        if name not in data or not isinstance(data[name], types):
            state = "has no" if name not in data else "has a different kind of"
            raise FormatProblem(
                f"was written by Harbor {job.version_label}, whose {what} {state} field "
                f"`{name}`, which relidash reads"
            )


def job_started_utc(job: Job) -> str | None:
    """When the job started, in UTC (ISO): result.json's naive local `started_at`, placed
    by lock.json's UTC `created_at` (written as the job starts); else the first trial's
    start."""
    started = _naive(job.result.get("started_at")) if job.result else None
    created = _aware(job.lock.get("created_at"))
    if started is not None and created is not None:
        gap = (started - created.replace(tzinfo=None)).total_seconds()
        offset = round(gap / _QUARTER_HOUR) * _QUARTER_HOUR
        if abs(offset) <= _MAX_OFFSET:
            zone = timezone(timedelta(seconds=offset))
            return started.replace(tzinfo=zone).astimezone(UTC).isoformat()
    firsts = sorted(str(t["started_at"]) for t in job.trials if t.get("started_at"))
    if firsts:
        return firsts[0]
    return started.isoformat() if started is not None else None


def _naive(value: Any) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed.replace(tzinfo=None) if parsed.tzinfo is None else None


def _aware(value: Any) -> datetime | None:
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
