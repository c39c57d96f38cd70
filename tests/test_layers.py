"""The house's floors point one way (STYLE.md, "The shape: data flows one way").

Two guards:

1. The import graph, built with `ast` from every module of the package (imports inside
   functions included: a lazy import is still an arrow), has no circle, and no module
   imports a floor above its own: app, cli -> render -> analysis -> stats, data.
2. Each floor, imported alone in a fresh interpreter, pulls in no forbidden library
   (stats: no pandas/duckdb/streamlit/altair; data: no streamlit/altair; streamlit only
   under app/).

Both checkers are themselves tested on a made-up graph, so the guard can fail.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "dashboard"

# floor of each top-level part of the package; a module may import its own floor or lower
FLOORS = {
    "dashboard": 0,  # dashboard/__init__.py
    "dashboard.stats": 0,
    "dashboard.data": 0,
    "dashboard.simulate": 1,
    "dashboard.analysis": 1,
    "dashboard.render": 2,
    "dashboard.cli": 3,
    "dashboard.app": 3,
}
# floors that must not import each other although one is not above the other
SEPARATE = {("dashboard.data", "dashboard.stats"), ("dashboard.stats", "dashboard.data")}
MAX_LINES = 600
MAX_TOP_LEVEL_MODULES = 4


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, name: str, known: Iterable[str]) -> set[str]:
    """The package modules `path` imports, anywhere in its body (TYPE_CHECKING included)."""
    known = set(known)
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            # `from pkg import mod` names a module; `from mod import func` names mod
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = package_modules()
    return {name: imports_of(path, name, modules) for name, path in modules.items()}


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One import circle as a path [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def floor_of(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def upward_imports(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every arrow that points up a floor, or between two floors kept apart."""
    bad = []
    for module, targets in graph.items():
        here = floor_of(module)
        for target in targets:
            there = floor_of(target)
            if there == here:
                continue
            if FLOORS[there] > FLOORS[here] or (here, there) in SEPARATE:
                bad.append(f"{module} -> {target}")
            elif FLOORS[there] == FLOORS[here]:
                bad.append(f"{module} -> {target} (two floors at one level)")
    return sorted(bad)


# The data floor's wings, in the order their imports point (dashboard/data/__init__.py): a
# wing imports only the wings before it. The package's own `__init__` names none of them.
WINGS = ("names", "sources", "catalog", "formats", "load", "records")


def wing_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["dashboard", "data"] and len(parts) > 2 else None


def backward_wing_imports(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every arrow inside the data floor from a wing to one after it."""
    bad = []
    for module, targets in graph.items():
        here = wing_of(module)
        for target in targets:
            there = wing_of(target)
            if here is None or there is None or here == there:
                continue
            if WINGS.index(there) > WINGS.index(here):
                bad.append(f"{module} -> {target}")
    return sorted(bad)


def test_the_data_floor_is_in_wings_whose_imports_point_one_way() -> None:
    graph = import_graph()
    wings = {wing_of(m) for m in graph} - {None}
    assert wings == set(WINGS), "every data module belongs to a wing"
    assert backward_wing_imports(graph) == []


def test_a_backward_wing_import_is_caught() -> None:
    graph = {
        "dashboard.data.sources.walk": {"dashboard.data.catalog.queries"},
        "dashboard.data.load.ingest": {"dashboard.data.formats.protocol"},
        "dashboard.data.records.ledger": {"dashboard.data.load.facts"},
        "dashboard.data.formats.inspect": {"dashboard.data.load.rows"},
    }
    assert backward_wing_imports(graph) == [
        "dashboard.data.formats.inspect -> dashboard.data.load.rows",
        "dashboard.data.sources.walk -> dashboard.data.catalog.queries",
    ]


def test_import_graph_has_no_circle() -> None:
    assert find_cycle(import_graph()) is None


def test_imports_point_down_the_floors() -> None:
    graph = import_graph()
    assert {floor_of(m) for m in graph} <= set(FLOORS), "a new top-level part needs a floor"
    assert upward_imports(graph) == []


def test_cycle_finder_finds_a_circle() -> None:
    """The check can fail: a made-up circle of three modules, and a graph without one."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_upward_import_is_caught() -> None:
    graph = {
        "dashboard.analysis.releases": {"dashboard.render.formatting"},
        "dashboard.data.catalog": {"dashboard.stats.passk"},
        "dashboard.render.charts": {"dashboard.analysis.estimates"},
    }
    assert upward_imports(graph) == [
        "dashboard.analysis.releases -> dashboard.render.formatting",
        "dashboard.data.catalog -> dashboard.stats.passk",
    ]


def test_graph_sees_lazy_and_relative_imports() -> None:
    """Imports inside functions and relative ones are arrows too."""
    graph = import_graph()
    assert "dashboard.analysis.opening" in graph["dashboard.cli.common"]  # inside load()
    assert "dashboard.stats.bootstrap" in graph["dashboard.stats.passk"]  # from .bootstrap


def test_modules_are_small_and_the_top_level_is_thin() -> None:
    long = {
        name: n
        for name, path in package_modules().items()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


MAX_DATA_FUNCTION_LINES = 80


def long_functions(modules: Mapping[str, Path], most: int) -> dict[str, int]:
    """Functions (module.name) longer than `most` lines."""
    found = {}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > most:
                    found[f"{name}.{node.name}"] = lines
    return found


def test_no_function_of_the_data_floor_is_long() -> None:
    data = {n: p for n, p in package_modules().items() if n.startswith("dashboard.data")}
    assert long_functions(data, MAX_DATA_FUNCTION_LINES) == {}


def test_a_long_function_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def short():\n    pass\n\n\ndef long():\n" + "    x = 1\n" * 90)
    assert long_functions({"m": module}, MAX_DATA_FUNCTION_LINES) == {"m.long": 91}


def test_every_module_says_its_role() -> None:
    missing = [
        name
        for name, path in package_modules().items()
        if not ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert missing == []


# ---- forbidden libraries, checked by importing each floor alone ----------------------------

PROBE = r"""
import importlib, json, pkgutil, sys
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    if not name.startswith("dashboard") or not hasattr(module, "__path__"):
        continue
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        if info.name.startswith("dashboard.app.page_scripts") or info.name.endswith("__main__"):
            continue  # page scripts and `python -m` entries run when imported
        importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""

LIBRARIES = {
    "dashboard.stats": ["pandas", "duckdb", "streamlit", "altair", "dashboard.data"],
    "dashboard.data": ["streamlit", "altair", "dashboard.stats"],
    "dashboard.analysis": ["streamlit", "altair"],
    "dashboard.simulate": ["streamlit", "altair", "duckdb"],
    "dashboard.render": ["streamlit"],
    "dashboard.render.charts": ["duckdb", "streamlit"],  # frames in, charts out: no catalog
    "dashboard.cli": ["streamlit"],
}


@cache
def imported_by(*modules: str, setup: str = "") -> frozenset[str]:
    """Every module loaded by importing these (their packages' modules with them), after
    running `setup` in the fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", setup + "\n" + PROBE, *modules],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return frozenset(json.loads(done.stdout.strip().splitlines()[-1]))


def offenders(loaded: frozenset[str], forbidden: list[str]) -> list[str]:
    return sorted(m for m in loaded for f in forbidden if m == f or m.startswith(f + "."))


@pytest.mark.parametrize("layer", list(LIBRARIES))
def test_layer_imports_nothing_forbidden(layer: str) -> None:
    loaded = imported_by(layer)
    assert layer in loaded
    assert offenders(loaded, LIBRARIES[layer]) == []


def test_parsing_a_command_imports_nothing_heavy() -> None:
    """A command parses its arguments before DuckDB, numpy or pandas are imported: a
    loading command begins its walk then, in a child process (dashboard/data/sources/walk.py),
    and the walk overlaps those imports only if the parse does not make them."""
    parse = (
        'from dashboard.cli.main import build_parser; build_parser().parse_args(["summary", "."])'
    )
    loaded = imported_by("dashboard.cli.main", setup=parse)
    assert offenders(loaded, ["duckdb", "numpy", "pandas"]) == []


def test_streamlit_is_imported_only_under_app() -> None:
    users = sorted(
        name
        for name, path in package_modules().items()
        if "streamlit" in {t.split(".")[0] for t in _external_imports(path)}
    )
    assert users and all(name.startswith("dashboard.app") for name in users), users


def _external_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return names


def test_probe_sees_forbidden_imports() -> None:
    """The check can fail: the chart factories do pull in Altair."""
    assert offenders(imported_by("dashboard.render"), ["altair"])
