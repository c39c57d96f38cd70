"""The harnesses relidash reads, one package each, and how a file is told apart by its
content. Add a harness: add a folder here whose `__init__` gives a `HARNESS` that fills
dashboard/data/formats/protocol.py's Harness, and name it in `_PACKAGES`; its own SQL
statements go in the folder's `queries/`, named `formats/<harness>/<name>`.

multivon-eval reports are staged by DuckDB's JSON reader (dashboard/data/formats/multivon/staging.py
and its queries/stage_*.sql); every other harness reads its files in Python into the rows of
the catalog's harness-neutral tables (dashboard/data/load/rows.py inserts them). Nothing
outside this folder branches on a harness's name or imports a harness package.

Must not: import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING

from dashboard.data.names import REPORT_SUFFIXES as REPORT_SUFFIXES

if TYPE_CHECKING:
    from pathlib import Path

    from dashboard.data.formats.protocol import Harness, StagedReader, TrialDigests

MULTIVON = "multivon-eval"
INSPECT = "inspect-ai"
HARBOR = "harbor"
PROMPTFOO = "promptfoo"
# Asked in this order; the first that claims a file reads it. multivon-eval comes last: it
# takes whatever no other harness claims, and names what is wrong with a file that is no
# report at all.
_PACKAGES = ("inspect", "harbor", "promptfoo", "multivon")


@cache
def registry() -> tuple[Harness, ...]:
    """Every harness, in the order they are asked."""
    found = []
    for package in _PACKAGES:
        try:
            module = import_module(f"dashboard.data.formats.{package}")
        except ModuleNotFoundError as exc:
            if exc.name != f"dashboard.data.formats.{package}":
                raise
            continue
        found.append(module.HARNESS)
    return tuple(found)


def harness_named(name: object) -> Harness:
    """The harness of that name (multivon-eval's for a report that names none we know)."""
    by_name = {h.name: h for h in registry()}
    return by_name.get(str(name), by_name[MULTIVON])


def harness_for(path: str, leading: bytes) -> Harness:
    """The harness that wrote a file, judged from its name and first bytes."""
    for harness in registry():
        if harness.claims(path, leading):
            return harness
    return harness_named(MULTIVON)


def harness_of(path: str, leading: bytes) -> str:
    """The name of the harness that wrote a file."""
    return harness_for(path, leading).name


def staged_reader() -> StagedReader:
    """The batch reader of the harness DuckDB stages (multivon-eval)."""
    for harness in registry():
        if harness.staged and harness.staged_reader is not None:
            return harness.staged_reader
    raise LookupError("no harness is staged by DuckDB")


def check_records(path: Path, leading: bytes) -> TrialDigests:
    """A file's own integrity records checked by the harness that wrote it."""
    return harness_for(str(path), leading).check_records(path)


def report_directories(paths: Sequence[str]) -> set[str]:
    """The directories among the listed files' that are each one report (a Harbor job):
    relative, "" for the root itself."""
    listed = set(paths)
    found: set[str] = set()
    for harness in registry():
        found.update(harness.report_directories(listed))
    return found


def settings_tables() -> Iterable[tuple[str, str]]:
    """(harness, its relidash.toml table) for each harness with one."""
    return [(h.name, h.settings_table) for h in registry() if h.settings_table]
