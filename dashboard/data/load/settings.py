"""Each harness's table of relidash.toml: read for a load, compared with the last load's,
and an unusable one recorded as a problem of relidash.toml.

Must not: import Streamlit or Altair, or write anywhere but the catalog.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from dashboard.data.catalog.problems import record_problems
from dashboard.data.catalog.queries import execute
from dashboard.data.formats import registry, settings_tables
from dashboard.data.formats.protocol import Settings
from dashboard.data.names import CONFIG_NAME


def read_settings(config: Path | None) -> dict[str, Settings]:
    """Every harness's table, by harness name."""
    return {h.name: h.read_settings(config) for h in registry()}


def fingerprints(settings: dict[str, Settings]) -> dict[str, str]:
    return {name: value.fingerprint() for name, value in settings.items()}


def settings_moved(stored: str | None, now: dict[str, str]) -> set[str]:
    """The harnesses whose relidash.toml table reads differently from the last load's."""
    try:
        before = json.loads(stored) if stored else {}
    except ValueError:
        before = {}
    if not isinstance(before, dict):
        before = {}
    return {name for name, value in now.items() if before.get(name) != value}


def record_settings_problems(con: duckdb.DuckDBPyConnection, settings: dict[str, Settings]) -> None:
    """An unusable harness table is a problem of relidash.toml, found afresh each load."""
    for name, table in settings_tables():
        execute(con, "load/forget_settings_problems", file=CONFIG_NAME, table=f"[{table}]")
        problem = settings[name].problem
        if problem:
            record_problems(con, [(CONFIG_NAME, "report", problem)])
