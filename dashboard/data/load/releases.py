"""Which release each report belongs to, and the order of releases within a suite.

Release identity: the declared target version (multivon-eval 0.19+ `declare_target`;
an Inspect log's `eval.metadata.release`) when present, else the `model` field, else the
file stem. Files written before 0.19 name a release by the model (`support-bot@v1.5.0`)
where 0.19+ declares `v1.5.0`: in a suite where some report declares a target version, a
model label `NAME@VERSION` is the release `VERSION` (release_source `model@version`), so
one release is one row however its files name it.

Order within a suite: by the reports' own time (earliest trial `recorded_at`; an Inspect
log's `eval.created`) when every report of the suite has one, else a version-aware
natural sort of the label's version (the part after `@`; v1.10.0 after v1.9.0), never
the raw label, which would put every `support-bot@…` before every `v…`. An optional
`relidash.toml` in the reports directory pins the key and the order:

    [releases]
    key = "model"                               # auto | target_version | model | file_stem | directory | metadata:NAME
    order = ["v1.8.0", "v1.9.0", "v1.10.0"]     # listed releases first, in this order
    join_model_versions = false                 # keep `NAME@VERSION` apart from `VERSION`

`metadata:NAME` is the value of NAME in an Inspect log's `eval.metadata` (a report
without it falls back to its file stem).

Reading the file is the only access to the reports directory here; nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from dashboard.data.catalog.problems import record_problems
from dashboard.data.catalog.queries import execute, fetch_rows
from dashboard.data.formats import harness_named
from dashboard.data.names import CONFIG_NAME

RELEASE_KEYS = ("auto", "target_version", "model", "file_stem", "directory")
METADATA_KEY = "metadata:"
# release_source of a model label `NAME@VERSION` read as the release `VERSION`
MODEL_VERSION_SOURCE = "model@version"
# changed with the labelling rules: a catalog labelled under other rules is labelled again
RELEASE_RULES = "rules-2:"


@dataclass(frozen=True)
class ReleaseConfig:
    key: str = "auto"
    order: tuple[str, ...] = field(default_factory=tuple)
    problem: str | None = None
    join_model_versions: bool = True


def read_release_config(path: Path | None) -> ReleaseConfig:
    """The `[releases]` table of relidash.toml (`path`: the file, None when the source has
    none), or defaults (with a problem if it is unusable)."""
    if path is None or not path.is_file():
        return ReleaseConfig()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ReleaseConfig(problem=f"cannot be read ({exc}); using the default release rules")
    table = data.get("releases", {})
    key = table.get("key", "auto") if isinstance(table, dict) else "auto"
    order = table.get("order", []) if isinstance(table, dict) else []
    join = table.get("join_model_versions", True) if isinstance(table, dict) else True
    metadata_key = isinstance(key, str) and key.startswith(METADATA_KEY) and key[9:].strip()
    if (
        (key not in RELEASE_KEYS and not metadata_key)
        or not isinstance(order, list)
        or not isinstance(join, bool)
    ):
        return ReleaseConfig(
            problem=f"[releases] key must be one of {', '.join(RELEASE_KEYS)} or metadata:NAME, "
            "order a list of release names and join_model_versions true or false; "
            "using the default release rules"
        )
    return ReleaseConfig(key=key, order=tuple(str(o) for o in order), join_model_versions=join)


def release_config_digest(path: Path | None) -> str:
    """A fingerprint of the release rules and relidash.toml: releases are labelled and
    ranked again when it changes, so a catalog written under older rules is relabelled."""
    if path is None:
        return RELEASE_RULES
    try:
        return RELEASE_RULES + hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return RELEASE_RULES


def natural_key(label: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key that compares digit runs as numbers: v1.9.0 < v1.10.0."""
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in re.split(r"(\d+)", label)
        if part
    )


def version_part(label: str) -> str:
    """The version of a model label `NAME@VERSION` (the label itself without an `@`)."""
    name, at, version = label.rpartition("@")
    return version.strip() if at and name.strip() and version.strip() else label


def release_order_key(label: str) -> tuple[tuple[tuple[int, int, str], ...], ...]:
    """Version-aware sort key of a release label: its version first, then the label, so
    `support-bot@v1.7.0` sorts before `v1.10.0` whichever way each is named."""
    return (natural_key(version_part(label)), natural_key(label))


def join_model_versions(labelled: Sequence[dict[str, Any]]) -> None:
    """Within one suite's rows (release and release_source set), read a model label
    `NAME@VERSION` as the release `VERSION` when some report of the suite declares a target
    version: the two naming schemes of multivon-eval name one release. Two different
    names with one VERSION are two agents, not one release: their labels are kept."""
    if not any(r["release_source"] == "target_version" for r in labelled):
        return
    names: dict[str, set[str]] = {}
    for row in labelled:
        if row["release_source"] == "model" and version_part(row["release"]) != row["release"]:
            name = row["release"].rpartition("@")[0].strip()
            names.setdefault(version_part(row["release"]), set()).add(name)
    for row in labelled:
        version = version_part(row["release"])
        if row["release_source"] == "model" and len(names.get(version, ())) == 1:
            row["release"], row["release_source"] = version, MODEL_VERSION_SOURCE


def release_label(row: dict[str, Any], key: str) -> tuple[str, str]:
    """(release, where it came from) for one report row."""
    # string functions, not PurePosixPath: this runs for every report on every load
    directory, name = posixpath.split(row["file"].rstrip("/"))  # a directory report: its name
    stem = posixpath.splitext(name)[0]
    directory = directory or "."
    choices = {
        "target_version": row["target_version"],
        "model": row["model"],
        "file_stem": stem,
        "directory": directory if directory != "." else stem,
    }
    if key.startswith(METADATA_KEY):
        value = _metadata_value(row.get("metadata"), key[len(METADATA_KEY) :].strip())
        return (value, key) if value else (stem, "file_stem")
    if key != "auto":
        value = choices[key]
        return (str(value), key) if value else (stem, "file_stem")
    for source in ("target_version", "model"):
        if isinstance(choices[source], str) and choices[source].strip():
            # where the harness's declared release comes from (an Inspect log's is its
            # eval.metadata.release)
            named = (
                harness_named(row.get("harness")).declared_release
                if source == "target_version"
                else source
            )
            return choices[source], named
    return stem, "file_stem"


def _metadata_value(metadata: Any, name: str) -> str | None:
    """A scalar value of a report's metadata (JSON text) as a release label."""
    if not isinstance(metadata, str):
        return None
    try:
        value = json.loads(metadata).get(name)
    except (ValueError, AttributeError):
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    return str(value).strip() or None


def order_releases(
    reports: Sequence[tuple[str, datetime | None]], pinned: tuple[str, ...]
) -> list[str]:
    """Releases of one suite, oldest first, from its reports' (release, recorded_at)."""
    releases = list(dict.fromkeys(release for release, _ in reports))
    if all(when is not None for _, when in reports):
        first_seen: dict[str, datetime] = {}
        for release, when in reports:
            assert when is not None
            first_seen[release] = min(first_seen.get(release, when), when)
        default = sorted(releases, key=lambda r: (first_seen[r], release_order_key(r)))
    else:
        default = sorted(releases, key=release_order_key)
    listed = [r for r in pinned if r in releases]
    return listed + [r for r in default if r not in listed]


def assign_releases(
    con: duckdb.DuckDBPyConnection, config_file: Path | None, suites: list[str] | None = None
) -> list[int]:
    """Fill reports.release, release_source and release_rank for every report of `suites`
    (None: of every suite), by the relidash.toml in `config_file` (None: the defaults).

    Returns the reports whose release label moved (not those labelled for the first
    time): a summary entry stored for one of them names the old label."""
    config = read_release_config(config_file)
    execute(con, "load/forget_problems_of_file", file=CONFIG_NAME)
    if config.problem:
        record_problems(con, [(CONFIG_NAME, "report", config.problem)])
    rows = fetch_rows(con, "load/release_rows", suites=suites)
    if not rows:
        return []
    before = {r["report_id"]: (r["release"], r["release_source"], r["release_rank"]) for r in rows}
    suite_rows: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        row["release"], row["release_source"] = release_label(row, config.key)
        suite_rows.setdefault(row["suite"], []).append(row)
    by_suite: dict[str, list[tuple[str, datetime | None]]] = {}
    for suite, labelled in suite_rows.items():
        if config.join_model_versions and config.key == "auto":
            join_model_versions(labelled)
        by_suite[suite] = [(r["release"], r["recorded_at"]) for r in labelled]
    ranks = {
        (suite, release): rank
        for suite, reports in by_suite.items()
        for rank, release in enumerate(order_releases(reports, config.order), start=1)
    }
    for row in rows:
        row["release_rank"] = ranks[(row["suite"], row["release"])]
    # only rows that moved: an update rewrites what it touches when the catalog is saved
    rows = [
        r
        for r in rows
        if before[r["report_id"]] != (r["release"], r["release_source"], r["release_rank"])
    ]
    if not rows:
        return []
    # plain rows and bound lists: no DataFrame, so a load that changed one file stays fast
    execute(
        con,
        "load/set_releases",
        ids=[r["report_id"] for r in rows],
        releases=[r["release"] for r in rows],
        sources=[r["release_source"] for r in rows],
        ranks=[r["release_rank"] for r in rows],
    )
    # a label before, and another now (a first label is None before)
    return [r["report_id"] for r in rows if before[r["report_id"]][0] not in (None, r["release"])]
