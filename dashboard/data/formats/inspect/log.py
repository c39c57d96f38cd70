"""Inspect AI eval logs (`.eval` archives and `.json` logs) as catalog rows.

The mapping (README, "Inspect AI logs"): one log is one report, suite = `eval.task`,
release = `eval.metadata.release` else `eval.model`, its time `eval.created`; a sample is
a case (its id as a string, with int ids kept apart from string ids); a sample-epoch is a
trial, which passes when the chosen scorer's value (the log's first scorer unless
relidash.toml's `[inspect] scorer` names another) maps to at least the threshold (1.0
unless `[inspect] pass_threshold` says otherwise) by Inspect's own `value_to_float`:
the rule of Inspect's `pass_at(k, value=1.0)`. An errored epoch has no score and is left
out of its sample's trials, as Inspect's reducers leave it out; a sample with no scored
epoch is an errored case.

From a `.eval` only `header.json`, `summaries.json` and `reductions.json` are read for the
catalog (an interrupted log: `_journal/start.json` and `_journal/summaries/N.json`); a
sample's epochs (`samples/<id>_epoch_<n>.json`) are read for the one case a page shows.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashboard.data.formats.inspect.zip_members import (
    LIMIT_HINT,
    ZIP_MAGIC,
    ArchiveError,
    Member,
    read_directory,
    read_member,
)

KNOWN_VERSIONS = (1, 2)
DEFAULT_THRESHOLD = 1.0
HEADER = "header.json"
SUMMARIES = "summaries.json"
REDUCTIONS = "reductions.json"
JOURNAL_START = "_journal/start.json"
JOURNAL_SUMMARY = re.compile(r"^_journal/summaries/(\d+)\.json$")
SAMPLE_FILE = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
COMPLETE_STATUS = "success"
# Scalar metadata longer than this is text, not a slice: it is not made a tag.
MAX_TAG_TEXT = 120
_THINNED = "Key removed from summary (> 1k)"  # Inspect's placeholder for a large value
_PASS_REDUCER = re.compile(r"^(pass_at|pass_k)_(\d+)$")
_INT_TEXT = re.compile(r"-?\d+")


class LogProblem(Exception):
    """The file cannot be read as an Inspect log; the message says why, for a person."""


@dataclass(frozen=True)
class InspectSettings:
    """relidash.toml's `[inspect]` table."""

    scorer: str | None = None
    pass_threshold: float = DEFAULT_THRESHOLD
    problem: str | None = None

    def fingerprint(self) -> str:
        return json.dumps([self.scorer, self.pass_threshold, self.problem])


def read_inspect_settings(config: Path | None) -> InspectSettings:
    """The `[inspect]` table of the source's relidash.toml (`config`: the file, None when
    the source has none), or the defaults."""
    if config is None:
        return InspectSettings()
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return InspectSettings()
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return InspectSettings()  # the release config reports the unreadable file
    table = data.get("inspect", {})
    if not isinstance(table, dict):
        return InspectSettings(problem="[inspect] must be a table; using Inspect's defaults")
    scorer = table.get("scorer")
    threshold = table.get("pass_threshold", DEFAULT_THRESHOLD)
    if (
        (scorer is not None and not isinstance(scorer, str))
        or isinstance(threshold, bool)
        or (not isinstance(threshold, int | float) or not math.isfinite(threshold))
    ):
        return InspectSettings(
            problem="[inspect] scorer must be a scorer's name and pass_threshold a number; "
            "using the log's first scorer and Inspect's threshold 1.0"
        )
    return InspectSettings(scorer=scorer or None, pass_threshold=float(threshold))


# ---- reading a log --------------------------------------------------------------------------


@dataclass
class InspectLog:
    """What the catalog needs of one log (no transcripts)."""

    version: int
    status: str
    eval: dict[str, Any]
    results: dict[str, Any] | None
    summaries: list[dict[str, Any]]  # one per sample-epoch, Inspect's (str(id), epoch) dedupe
    reductions: list[dict[str, Any]]
    container: str  # "eval" or "json"
    error: str | None = None  # the log's own error message (status "error")
    warnings: list[str] = field(default_factory=list)


def read_log(path: str, size: int, max_bytes: int) -> InspectLog:
    """An Inspect log from its file: a `.eval` zip archive or a JSON log."""
    if size == 0:
        raise LogProblem(
            "is empty (0 bytes); if it is still being written, reload when it is complete"
        )
    with open(path, "rb") as handle:
        head = handle.read(4)
        if head.startswith(ZIP_MAGIC):
            return _read_eval(handle, size, max_bytes)
    if size > max_bytes:
        raise LogProblem(
            f"is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:g} MiB size limit "
            "(raise it with --max-file-mb)"
        )
    if path.endswith(".eval") and not head.lstrip().startswith(b"{"):
        raise LogProblem("is not an Inspect .eval log: a .eval log is a zip archive, this is not")
    data = parse_json(_read_bytes(path), "the file")
    return _from_json_log(data)


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def parse_json(raw: bytes | bytearray, what: str) -> Any:
    """JSON as Inspect writes it: bare NaN and Infinity allowed (Python's reader takes them)."""
    return _parse_text(_decode(raw, what), what)


def member_json(handle: Any, member: Member, max_bytes: int, hint: str = LIMIT_HINT) -> Any:
    """A `.eval` member's JSON. The decompressed bytes are dropped once decoded, before the
    parse, so that a large member is held twice at most for the moment of decoding."""
    what = f"its member {member.name}"
    return _parse_text(_decode(read_member(handle, member, max_bytes, hint), what), what)


class MemberBudget:
    """What the members read from one archive may decompress to, together: members each
    within the limit must not add up past it (a journal of many summaries, a sample of
    many epochs)."""

    def __init__(self, limit: int, hint: str = LIMIT_HINT) -> None:
        self.limit = limit
        self.hint = hint
        self.used = 0

    def read_json(self, handle: Any, member: Member) -> Any:
        if member.size <= self.limit < self.used + member.size:
            raise LogProblem(
                f"its members decompress to {(self.used + member.size) / 2**20:.1f} MiB with "
                f"{member.name}, over the {self.limit / 2**20:g} MiB size limit together"
                + self.hint
            )
        data = member_json(handle, member, self.limit, self.hint)
        self.used += member.size
        return data


def _decode(raw: bytes | bytearray, what: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LogProblem(f"{what} is not UTF-8 text (invalid byte at offset {exc.start})") from exc


def _parse_text(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise LogProblem(f"{what} nests objects too deeply to be an Inspect log") from exc
    except ValueError as exc:
        raise LogProblem(f"{what} is not valid JSON (truncated or malformed): {exc}") from exc


def _check_version(data: dict[str, Any]) -> int:
    version = data.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise LogProblem("is not an Inspect log: its `version` is not a schema version number")
    if version not in KNOWN_VERSIONS:
        raise LogProblem(
            f"is an Inspect log of schema version {version}, which relidash does not know "
            f"(it reads versions {KNOWN_VERSIONS[0]}-{KNOWN_VERSIONS[-1]}); a newer Inspect "
            "wrote it"
        )
    return version


def _eval_spec(data: dict[str, Any]) -> dict[str, Any]:
    spec = data.get("eval")
    if not isinstance(spec, dict) or not isinstance(spec.get("task"), str):
        raise LogProblem("is not an Inspect log: it has no `eval` block naming its task")
    return spec


def _from_json_log(data: Any) -> InspectLog:
    if not isinstance(data, dict) or not {"version", "eval"} <= set(data):
        raise LogProblem(
            "is JSON but neither a multivon-eval report (no `cases` list) nor an Inspect log "
            "(no `version` and `eval`)"
        )
    version = _check_version(data)
    spec = _eval_spec(data)
    samples = data.get("samples") or []
    if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
        raise LogProblem("is an Inspect log whose `samples` is not a list of samples")
    return InspectLog(
        version=version,
        status=str(data.get("status") or "started"),
        eval=spec,
        results=data.get("results") if isinstance(data.get("results"), dict) else None,
        summaries=_dedupe(samples),
        reductions=_list_of_dicts(data.get("reductions")),
        container="json",
        error=error_message(data.get("error")),
    )


def _read_eval(handle: Any, size: int, max_bytes: int) -> InspectLog:
    try:
        members = read_directory(handle, size)
        budget = MemberBudget(max_bytes)
        if HEADER in members:
            header = budget.read_json(handle, members[HEADER])
        elif JOURNAL_START in members:
            header = budget.read_json(handle, members[JOURNAL_START])
        else:
            raise LogProblem(
                "is a zip archive but not an Inspect log: it has neither header.json nor "
                "_journal/start.json"
            )
        if not isinstance(header, dict):
            raise LogProblem("is an Inspect log whose header is not a JSON object")
        version = _check_version(header)
        spec = _eval_spec(header)
        summaries = _eval_summaries(handle, members, budget)
        reductions = (
            _list_of_dicts(budget.read_json(handle, members[REDUCTIONS]))
            if REDUCTIONS in members
            else []
        )
    except ArchiveError as exc:
        raise LogProblem(str(exc)) from exc
    log = InspectLog(
        version=version,
        status=str(header.get("status") or "started") if HEADER in members else "started",
        eval=spec,
        results=header.get("results") if isinstance(header.get("results"), dict) else None,
        summaries=summaries,
        reductions=reductions,
        container="eval",
        error=error_message(header.get("error")),
    )
    _check_sample_files(log, members)
    return log


def _eval_summaries(
    handle: Any, members: dict[str, Member], budget: MemberBudget
) -> list[dict[str, Any]]:
    """summaries.json, else every journal summary file in write order (an interrupted log)."""
    if SUMMARIES in members:
        rows = budget.read_json(handle, members[SUMMARIES])
        if not isinstance(rows, list):
            raise LogProblem("is an Inspect log whose summaries.json is not a list")
        return _dedupe(rows)
    journal = sorted(
        (int(m.group(1)), name) for name in members if (m := JOURNAL_SUMMARY.match(name))
    )
    rows = []
    for _, name in journal:
        part = budget.read_json(handle, members[name])
        if not isinstance(part, list):
            raise LogProblem(f"is an Inspect log whose {name} is not a list")
        rows += part
    return _dedupe(rows)


def _dedupe(rows: Iterable[Any]) -> list[dict[str, Any]]:
    """One row per (str(id), epoch), the last written winning: Inspect's own rule."""
    kept: dict[tuple[str, Any], dict[str, Any]] = {}
    for row in rows:
        if not isinstance(row, dict) or "id" not in row:
            raise LogProblem("is an Inspect log with a sample summary that has no id")
        kept[(str(row["id"]), row.get("epoch"))] = row
    return list(kept.values())


def _check_sample_files(log: InspectLog, members: dict[str, Member]) -> None:
    """summaries must list exactly the sample-epochs the archive holds files for."""
    files = {(m.group(1), int(m.group(2))) for name in members if (m := SAMPLE_FILE.match(name))}
    if (log.eval.get("config") or {}).get("log_samples") is False and not files:
        return
    listed = {(str(s["id"]), s.get("epoch")) for s in log.summaries}
    no_summary = sorted(files - listed, key=str)
    no_file = sorted(listed - files, key=str)
    if not no_summary and not no_file:
        return
    where = SUMMARIES if SUMMARIES in members else "its journal summaries"

    def some(pairs: list[tuple[str, Any]]) -> str:
        shown = ", ".join(f"sample {i} epoch {e}" for i, e in pairs[:3])
        return shown + (f" and {len(pairs) - 3} more" if len(pairs) > 3 else "")

    parts = []
    if no_summary:
        counted = (
            "1 sample file has" if len(no_summary) == 1 else f"{len(no_summary)} sample files have"
        )
        parts.append(f"{counted} no summary ({some(no_summary)})")
    if no_file:
        rows = "1 summary has" if len(no_file) == 1 else f"{len(no_file)} summaries have"
        parts.append(f"{rows} no sample file ({some(no_file)})")
    raise LogProblem(
        f"is an Inspect log whose {where} disagrees with its sample files: "
        + "; ".join(parts)
        + "; relidash does not guess which is right"
    )


def _list_of_dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def error_message(error: Any) -> str | None:
    if isinstance(error, dict):
        return str(error.get("message") or "") or None
    return str(error) if error else None


# ---- the numbers' rule ----------------------------------------------------------------------


def value_to_float(value: Any) -> float | None:
    """Inspect's default `value_to_float`, with None for the unscored sentinel (NaN).

    C -> 1, P -> 0.5, I and N -> 0, booleans and numbers as floats, "yes"/"true" -> 1,
    "no"/"false" -> 0, a numeric string as its number, anything else 0 (Inspect warns).
    """
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, str | int | float):  # bool is an int
        if value == "C":
            return 1.0
        if value == "P":
            return 0.5
        if value in ("I", "N"):
            return 0.0
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        text = value.lower()
        if text in ("yes", "true"):
            return 1.0
        if text in ("no", "false"):
            return 0.0
        try:
            number = float(text)
        except ValueError:
            return 0.0
        return number if math.isfinite(number) else 0.0
    return 0.0


def case_key(sample_id: Any) -> str:
    """A sample id as the catalog's case_id: ints as their digits, strings as they are,
    except a string that would read as an int (or starts with a quote), which is quoted:
    sample 7 and sample "7" stay two cases."""
    if isinstance(sample_id, str):
        if _INT_TEXT.fullmatch(sample_id) or sample_id.startswith('"'):
            return json.dumps(sample_id)
        return sample_id
    return str(sample_id)


def sample_id_of(case_id: str) -> int | str:
    """The sample id a case_key came from."""
    if case_id.startswith('"'):
        text: str = json.loads(case_id)
        return text
    return int(case_id) if _INT_TEXT.fullmatch(case_id) else case_id


def chosen_scorer(log: InspectLog, settings: InspectSettings) -> str:
    """The scorer whose value decides a trial: the configured one, else the log's first."""
    names = [str(s.get("name")) for s in log.eval.get("scorers") or [] if isinstance(s, dict)]
    if not names:  # older logs: the scorers the results or the summaries name
        names = [
            str(s.get("scorer") or s.get("name"))
            for s in (log.results or {}).get("scores") or []
            if isinstance(s, dict)
        ]
    if not names:
        names = list(dict.fromkeys(k for s in log.summaries for k in (s.get("scores") or {})))
    if settings.scorer:
        if settings.scorer not in names:
            raise LogProblem(
                f"has no scorer {settings.scorer!r} (relidash.toml [inspect] scorer); its "
                f"scorers are {', '.join(names) or 'none'}"
            )
        return settings.scorer
    if not names:
        raise LogProblem("is an Inspect log with no scorer, so no trial can pass or fail")
    return names[0]


def input_text(value: Any) -> str:
    """A sample's input as text: the string, or the first user message of a message list."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        messages = [m for m in value if isinstance(m, dict)]
        first = next((m for m in messages if m.get("role") == "user"), None)
        if first is None and messages:
            first = messages[0]
        if first is not None:
            return content_text(first.get("content"))
    return ""


def content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                kind = part.get("type")
                if kind == "text":
                    parts.append(str(part.get("text") or ""))
                elif kind == "reasoning":
                    parts.append(
                        f"[reasoning] {part.get('reasoning') or part.get('summary') or ''}"
                    )
                elif kind:
                    parts.append(f"[{kind}]")
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return "" if content is None else str(content)


def metadata_tags(metadata: Any) -> list[str]:
    """`key:value` for each scalar metadata value (short strings, numbers, booleans)."""
    if not isinstance(metadata, dict):
        return []
    tags = []
    for key, value in metadata.items():
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int | float):
            if isinstance(value, float) and not math.isfinite(value):
                continue
            text = json.dumps(value)
        elif isinstance(value, str):
            if not value or value == _THINNED or len(value) > MAX_TAG_TEXT or "\n" in value:
                continue
            text = value
        else:
            continue
        tags.append(f"{key}:{text}")
    return tags


def pass_reductions(log: InspectLog, scorer: str) -> dict[tuple[str, int], dict[str, float]]:
    """The stored `pass_at_<k>` / `pass_k_<k>` reductions of a scorer, by (reducer, k),
    each as {str(sample id): value}."""
    out: dict[tuple[str, int], dict[str, float]] = {}
    for reduction in log.reductions:
        match = _PASS_REDUCER.match(str(reduction.get("reducer") or ""))
        if reduction.get("scorer") != scorer or not match:
            continue
        values = {}
        for sample in _list_of_dicts(reduction.get("samples")):
            value = sample.get("value")
            if isinstance(value, int | float) and not isinstance(value, bool):
                values[str(sample.get("sample_id"))] = float(value)
        out[(match.group(1), int(match.group(2)))] = values
    return out
