"""The data floor keeps its SQL in named statements (dashboard/data/catalog/queries.py):
no module under dashboard/data/ holds a string that opens with a SQL verb, every `.sql`
file is run by some name in the code or the tests, and every statement named exists.

A docstring may speak of SQL; a string the code could run may not. A template's
identifiers go in through fill_template alone, so an f-string is no way around this.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dashboard.data.catalog.queries import statement_file

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "dashboard" / "data"
QUERIES = ROOT / "queries"
# where names of statements are used: the package, its tests, benchmarks and tools
USERS = [ROOT / "dashboard", ROOT / "tests", ROOT / "benchmarks", ROOT / "tools"]

VERBS = (
    "SELECT", "INSERT", "CREATE", "UPDATE", "DELETE", "WITH", "ATTACH", "DETACH", "DROP",
    "ALTER", "COPY", "PRAGMA", "SET", "BEGIN", "COMMIT", "ROLLBACK", "CHECKPOINT", "INSTALL",
    "LOAD", "EXPORT", "IMPORT", "DESCRIBE", "SHOW", "SUMMARIZE",
)  # fmt: skip
# A verb at the start (after blanks or an opening bracket), then a blank, `;` or the end:
# `load/known_files`, a statement's name, is not `LOAD`.
OPENS_WITH_VERB = re.compile(rf"\s*\(*\s*({'|'.join(VERBS)})(?:\s|;|\(|$)", re.IGNORECASE)
NAME = re.compile(r"[a-z0-9_]+(?:/[a-z0-9_]+)*")
# a name that says where its statement is: a wing's, or a harness's
WING_NAME = re.compile(r"(?:catalog|load|read|records|formats/[a-z0-9_]+)/[a-z0-9_]+")
# tests of the naming itself, which name missing statements and made-up templates on purpose
NAMING_TESTS = {ROOT / "tests" / "data" / "test_named_queries.py"}
QUERY_FUNCTIONS = {
    "load_query": 0,
    "statement_file": 0,
    "fill_template": 0,
    "execute": 1,
    "execute_many": 1,
    "run_query": 1,
    "fetch_rows": 1,
    "iter_row_batches": 1,
}  # the position of the statement's name among each one's arguments
PARTIAL = re.compile(r"\{>([a-z0-9_]+(?:/[a-z0-9_]+)*)\}")


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def inline_sql(path: Path) -> list[str]:
    """The strings of a module (an f-string's literal parts too, docstrings left out) that
    open with a SQL verb, as `line: text`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = _docstrings(tree)
    return [
        f"{node.lineno}: {node.value.strip()[:60]}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and OPENS_WITH_VERB.match(node.value)
    ]


def _modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_of_the_data_floor_holds_sql() -> None:
    found = {
        str(path.relative_to(ROOT)): lines for path in _modules(DATA) if (lines := inline_sql(path))
    }
    assert found == {}, "SQL belongs in a named statement (queries/, formats/<harness>/queries/)"


def test_inline_sql_is_caught(tmp_path: Path) -> None:
    module = tmp_path / "made_up.py"
    module.write_text(
        '"""SELECT in a docstring is words, not a statement."""\n'
        'COUNT = "SELECT count(*) FROM files"\n'
        "def drop(table):\n"
        '    """Drop a table: a docstring."""\n'
        '    return f"DROP TABLE {table}"\n'
        'LATER = f"{COUNT} WHERE racy"\n'
        'NAME = "load/known_files"\n'
        'LOWER = "\\n  (with t AS (SELECT 1) SELECT * FROM t)"\n'
        'SETTING = "set preserve_insertion_order = false"\n'
        'WORDS = "Settings", "selected", "loaded"\n'
    )
    assert sorted(int(line.split(":")[0]) for line in inline_sql(module)) == [2, 5, 8, 9]


def sql_files() -> list[Path]:
    """Every statement's file: a wing's under queries/, a harness's in its package."""
    return sorted([*QUERIES.rglob("*.sql"), *DATA.glob("formats/*/queries/*.sql")])


def test_no_sql_file_lies_elsewhere_in_the_package() -> None:
    """load_query finds a harness's statements in formats/<harness>/queries/ only."""
    assert set((ROOT / "dashboard").rglob("*.sql")) == set(DATA.glob("formats/*/queries/*.sql"))


def _names_in(path: Path) -> tuple[set[str], set[str]]:
    """The string literals of a module that could name a statement, and those it passes as
    a statement's name to a query function (or that say where one is: a wing's name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    literals = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    named = {name for name in literals if WING_NAME.fullmatch(name)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        position = QUERY_FUNCTIONS.get(str(called))
        if position is not None and len(node.args) > position:
            argument = node.args[position]
            if isinstance(argument, ast.Constant) and isinstance(argument.value, str):
                named.add(argument.value)
    return {name for name in literals if NAME.fullmatch(name)}, named


def _used_names() -> tuple[set[str], dict[str, set[str]]]:
    literals: set[str] = set()
    named: dict[str, set[str]] = {}
    for folder in USERS:
        for path in _modules(folder):
            found, called = _names_in(path)
            literals |= found
            if path in NAMING_TESTS:
                continue
            for name in called:
                named.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return literals, named


def test_every_statement_named_exists() -> None:
    _, named = _used_names()
    missing = {}
    for name, where in sorted(named.items()):
        try:
            statement_file(name)
        except KeyError:
            missing[name] = sorted(where)
    assert missing == {}


def test_every_sql_file_is_used() -> None:
    literals, _ = _used_names()
    used = set()
    for name in literals:
        try:
            used.add(statement_file(name))
        except KeyError:
            continue  # a word, not a statement's name
    for path in sql_files():  # a template's partial is used where the template is
        used |= {statement_file(name) for name in PARTIAL.findall(path.read_text())}
    orphans = [str(p.relative_to(ROOT)) for p in sql_files() if p not in used]
    assert orphans == [], "a statement no code runs: remove it, or run it"


@pytest.mark.parametrize("path", sql_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_sql_file_opens_with_a_header(path: Path) -> None:
    assert path.read_text(encoding="utf-8").startswith("--"), "say what it does and why"
