"""promptfoo eval outputs (`promptfoo eval -o results.json`, `promptfoo export eval ID -o
file.json`): the file read and checked, its (prompt, provider) pairs, and its tests.

An eval file holds `evalId`, `results{version, timestamp, prompts[], results[]}`, the
resolved `config` (`description`, `tags`) and `metadata{promptfooVersion}`; the command
line's `--repeat` is in `runtimeOptions.repeat` (a config's own in
`config.evaluateOptions.repeat`). `results.prompts[]` has one entry per pair run, its
`label` and `provider` (the provider's label); each row of `results.results[]` names its
entry by `promptIdx`. A row carries no repeat index and no stable test id: every repeat
of a test has its own `testIdx` (test position x repeats + repeat), so a test is known by
its metadata `case_id` (or `id`), else its description, else a digest of its vars.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dashboard.data.formats.protocol import FormatProblem

KNOWN_RESULTS_VERSIONS = (3,)
RELEASE_TAG = "release"
TAG_PREFIX = "tag:"
TIMESTAMP = "timestamp"
# the eval file's first bytes: its first key is `evalId`, or `results` and `evalId` are
# both among the first keys
_EVAL_HEAD = re.compile(rb'^(?:\xef\xbb\xbf)?\s*\{\s*"evalId"\s*:')
_RESULTS_KEY = re.compile(rb'"results"\s*:')
_EVAL_ID_KEY = re.compile(rb'"evalId"\s*:')
FIRST_LINE_LIMIT = 1 << 22  # a .jsonl's first row is read this far to tell whose it is
VARS_DIGEST = 12  # hex digits of a vars digest in a case key


# ---- relidash.toml -------------------------------------------------------------------------


@dataclass(frozen=True)
class PromptfooSettings:
    """relidash.toml's `[promptfoo]` table: which tag names an eval's release (None: the
    eval's timestamp)."""

    release_tag: str | None = RELEASE_TAG
    problem: str | None = None

    def fingerprint(self) -> str:
        return json.dumps([self.release_tag, self.problem])


def read_promptfoo_settings(config: Path | None) -> PromptfooSettings:
    """The `[promptfoo]` table of the source's relidash.toml, or the defaults."""
    if config is None:
        return PromptfooSettings()
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return PromptfooSettings()  # the release config reports an unreadable file
    table = data.get("promptfoo", {})
    release = table.get("release", TAG_PREFIX + RELEASE_TAG) if isinstance(table, dict) else None
    if isinstance(release, str) and release.strip() == TIMESTAMP:
        return PromptfooSettings(release_tag=None)
    if isinstance(release, str) and release.startswith(TAG_PREFIX):
        name = release[len(TAG_PREFIX) :].strip()
        if name:
            return PromptfooSettings(release_tag=name)
    return PromptfooSettings(
        problem='[promptfoo] must be a table whose release is "tag:NAME" (an eval tag, '
        '`--tag NAME=…`) or "timestamp"; using the `release` tag, else the eval\'s timestamp'
    )


# ---- claiming a file ------------------------------------------------------------------------


def looks_like_eval(leading: bytes) -> bool:
    """An eval file's first bytes: `{"evalId"` (after a BOM or whitespace), or `"results"`
    and `"evalId"` both among them."""
    if _EVAL_HEAD.match(leading):
        return True
    return bool(_EVAL_ID_KEY.search(leading) and _RESULTS_KEY.search(leading))


def jsonl_problem(path: str) -> FormatProblem:
    """Why a `.jsonl` file is not read: promptfoo's JSON Lines output has no eval id,
    config or timestamp; any other is not a report at all."""
    with open(path, "rb") as handle:
        first = handle.readline(FIRST_LINE_LIMIT)
    try:
        row = json.loads(first.decode("utf-8-sig"))
    except ValueError:
        row = None
    if isinstance(row, dict) and (
        {"testIdx", "promptIdx"} <= set(row) or {"testCase", "failureReason"} <= set(row)
    ):
        return FormatProblem(
            "is promptfoo's JSON Lines output, without eval id or config: use `promptfoo eval "
            "-o results.json` (or `promptfoo export eval <id> -o results.json`)"
        )
    return FormatProblem(
        "is JSON Lines, not a report relidash reads (it reads promptfoo's `-o results.json`, "
        "Inspect logs and multivon-eval reports)"
    )


# ---- reading an eval -----------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """One entry of `results.prompts[]`: a prompt run against a provider."""

    index: int  # its promptIdx
    prompt: str  # the prompt's label
    provider: str  # the provider's label
    metrics: dict[str, Any]


@dataclass
class PromptfooEval:
    """What relidash needs of one eval file."""

    eval_id: str
    version: int
    timestamp: str | None
    description: str | None
    tags: dict[str, Any]
    promptfoo_version: str | None
    repeats: int | None  # --repeat as run, when the file says
    pairs: list[Pair]
    rows: dict[int, list[dict[str, Any]]]  # promptIdx -> its rows, in file order
    warnings: list[str] = field(default_factory=list)


def read_eval(path: str, size: int, max_bytes: int) -> PromptfooEval:
    """An eval file read and checked (FormatProblem naming what is wrong)."""
    if size == 0:
        raise FormatProblem(
            "is empty (0 bytes); if promptfoo is still writing it, reload when it is complete"
        )
    if size > max_bytes:
        raise FormatProblem(
            f"is {size / 2**20:.1f} MiB, over the {max_bytes / 2**20:g} MiB size limit "
            "(raise it with --max-file-mb)"
        )
    with open(path, "rb") as handle:
        raw = handle.read()
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise FormatProblem(f"is not UTF-8 text (invalid byte at offset {exc.start})") from exc
    except RecursionError as exc:
        raise FormatProblem("nests objects too deeply to be a promptfoo eval") from exc
    except ValueError as exc:
        raise FormatProblem(f"is not valid JSON (truncated or malformed): {exc}") from exc
    return eval_from_json(data)


def eval_from_json(data: Any) -> PromptfooEval:
    """The eval an output's parsed JSON holds."""
    if not isinstance(data, dict) or not isinstance(data.get("evalId"), str):
        raise FormatProblem("is not a promptfoo eval: it has no `evalId`")
    results = data.get("results")
    if not isinstance(results, dict):
        raise FormatProblem("is a promptfoo eval without a `results` object")
    version = results.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise FormatProblem("is a promptfoo eval whose `results.version` is not a number")
    where = f"is a promptfoo eval of results version {version}"
    prompts, rows = results.get("prompts"), results.get("results")
    if not isinstance(prompts, list) or not isinstance(rows, list):
        raise FormatProblem(f"{where} without the lists `results.prompts` and `results.results`")
    pairs = [_pair(i, entry, where) for i, entry in enumerate(prompts)]
    config = _dict(data.get("config"))
    metadata = _dict(data.get("metadata"))
    found = PromptfooEval(
        eval_id=data["evalId"],
        version=version,
        timestamp=_text(results.get("timestamp")) or _text(metadata.get("evaluationCreatedAt")),
        description=_text(config.get("description")),
        tags=_dict(config.get("tags")),
        promptfoo_version=_text(metadata.get("promptfooVersion")),
        repeats=_repeats(data, config),
        pairs=pairs,
        rows=_rows_by_pair(rows, pairs, where),
    )
    if version not in KNOWN_RESULTS_VERSIONS:
        found.warnings.append(
            f"was written as promptfoo results version {version} (promptfoo "
            f"{found.promptfoo_version or 'version not recorded'}); relidash knows version "
            f"{', '.join(map(str, KNOWN_RESULTS_VERSIONS))}, and the fields it reads match"
        )
    return found


def _pair(index: int, entry: Any, where: str) -> Pair:
    if not isinstance(entry, dict):
        raise FormatProblem(f"{where} whose results.prompts[{index}] is not an object")
    label = _text(entry.get("label")) or _text(entry.get("raw"))
    provider = _text(entry.get("provider"))
    if label is None or provider is None:
        raise FormatProblem(
            f"{where} whose results.prompts[{index}] names no prompt `label` or `provider`"
        )
    return Pair(index, label, provider, _dict(entry.get("metrics")))


def _rows_by_pair(
    rows: list[Any], pairs: list[Pair], where: str
) -> dict[int, list[dict[str, Any]]]:
    """Each pair's rows. A row names its pair by `promptIdx`, checked against its prompt and
    provider labels (two providers may share one id: only the label tells them apart)."""
    by_labels = {(p.prompt, p.provider): p.index for p in pairs}
    out: dict[int, list[dict[str, Any]]] = {p.index: [] for p in pairs}
    for position, row in enumerate(rows):
        if not isinstance(row, dict):
            raise FormatProblem(f"{where} whose results.results[{position}] is not an object")
        index = row.get("promptIdx")
        labels = row_labels(row)
        if not _names_pair(index, labels, pairs):
            index = by_labels.get(labels)  # type: ignore[arg-type]
        if index is None:
            raise FormatProblem(
                f"{where} whose results.results[{position}] belongs to no entry of "
                f"results.prompts (promptIdx {row.get('promptIdx')!r}, prompt "
                f"{labels[0]!r}, provider {labels[1]!r})"
            )
        test_idx = row.get("testIdx")
        if isinstance(test_idx, bool) or not isinstance(test_idx, int):
            raise FormatProblem(f"{where} whose results.results[{position}] has no `testIdx`")
        out[index].append(row)
    return out


def _names_pair(index: Any, labels: tuple[str | None, str | None], pairs: list[Pair]) -> bool:
    """Whether a row's promptIdx is an entry of results.prompts whose labels it carries."""
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(pairs):
        return False
    return None in labels or labels == (pairs[index].prompt, pairs[index].provider)


def row_labels(row: dict[str, Any]) -> tuple[str | None, str | None]:
    """A row's (prompt label, provider label): the provider's id when it has no label."""
    prompt, provider = _dict(row.get("prompt")), _dict(row.get("provider"))
    return (
        _text(prompt.get("label")) or _text(prompt.get("raw")),
        _text(provider.get("label")) or _text(provider.get("id")),
    )


def _repeats(data: dict[str, Any], config: dict[str, Any]) -> int | None:
    for options in (_dict(data.get("runtimeOptions")), _dict(config.get("evaluateOptions"))):
        repeat = options.get("repeat")
        if isinstance(repeat, int) and not isinstance(repeat, bool) and repeat >= 1:
            return repeat
    return None


# ---- tests ---------------------------------------------------------------------------------


def case_key(test_case: Any) -> str:
    """A test's key across repeats and evals: its metadata `case_id`, else `id`, else its
    description, else `vars:` and a digest of its vars."""
    case = _dict(test_case)
    metadata = _dict(case.get("metadata"))
    for value in (metadata.get("case_id"), metadata.get("id")):
        if isinstance(value, str | int | float) and not isinstance(value, bool) and str(value):
            return str(value)
    description = _text(case.get("description"))
    if description:
        return description
    canonical = json.dumps(
        case.get("vars"), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return "vars:" + hashlib.sha256(canonical.encode()).hexdigest()[:VARS_DIGEST]


def tests_of(
    rows: list[dict[str, Any]], repeats: int | None
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """One pair's rows grouped by test, tests in the order they ran, each test's repeats in
    `testIdx` order; and the keys two different tests share. With the repeat count known,
    a test's position is its testIdx // repeats: two positions with one key are two tests,
    kept apart as `KEY #POSITION`."""
    ordered = sorted(rows, key=lambda r: r["testIdx"])
    keys: dict[int, str] = {}  # testIdx -> key, computed once per testIdx
    positions: dict[str, set[int]] = {}
    for row in ordered:
        test_idx = row["testIdx"]
        if test_idx not in keys:
            keys[test_idx] = case_key(row.get("testCase"))
        if repeats:
            positions.setdefault(keys[test_idx], set()).add(test_idx // repeats)
    shared = sorted(key for key, seen in positions.items() if len(seen) > 1)
    grouped: dict[str, list[dict[str, Any]]] = {}
    for row in ordered:
        key = keys[row["testIdx"]]
        if repeats and key in positions and len(positions[key]) > 1:
            key = f"{key} #{row['testIdx'] // repeats + 1}"
        grouped.setdefault(key, []).append(row)
    return grouped, shared


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    text = str(value).strip()
    return text or None
