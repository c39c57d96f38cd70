"""Every harness sits behind one protocol (dashboard/data/formats/protocol.py): nothing
outside dashboard/data/formats/ imports a harness's package or names a harness to branch
on it, and every registered harness fills the protocol."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from dashboard.data.formats import MULTIVON, harness_for, harness_named, registry
from dashboard.data.formats.protocol import Harness, RunTerms

PACKAGE = Path(__file__).resolve().parents[2] / "dashboard"
FORMATS = PACKAGE / "data" / "formats"
HARNESS_PACKAGES = {p.name for p in FORMATS.iterdir() if (p / "__init__.py").is_file()}
# A harness's name is only ever compared inside formats/; MULTIVON stays usable elsewhere as
# the default wording of a number with no report behind it.
HARNESS_NAMES = {"INSPECT", "HARBOR", "PROMPTFOO"}


def _outside_formats() -> list[Path]:
    return [p for p in PACKAGE.rglob("*.py") if FORMATS not in p.parents]


def _is_harness_package(module: str) -> bool:
    parts = module.split(".")
    return parts[:3] == ["dashboard", "data", "formats"] and parts[3:4] in (
        [[name] for name in HARNESS_PACKAGES]
    )


def harness_references(path: Path) -> list[str]:
    """The harness packages a module imports and the harness names it uses."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = node.module
            names = [f"{module}.{alias.name}" for alias in node.names]
            for target in [module, *names]:
                if _is_harness_package(target):
                    found.append(target)
            found += [alias.name for alias in node.names if alias.name in HARNESS_NAMES]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_harness_package(alias.name):
                    found.append(alias.name)
        elif isinstance(node, ast.Attribute) and node.attr in HARNESS_NAMES:
            found.append(node.attr)
        elif isinstance(node, ast.Constant) and node.value in {"inspect-ai", "harbor", "promptfoo"}:
            found.append(repr(node.value))
    return found


def test_the_checker_finds_an_import_and_a_name(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "from dashboard.data.formats.inspect.log import read_log\n"
        "from dashboard.data.formats import INSPECT\n"
        "import dashboard.data.formats.inspect\n"
        "x = h == 'inspect-ai'\n"
    )
    assert harness_references(module) == [
        "dashboard.data.formats.inspect.log",
        "dashboard.data.formats.inspect.log.read_log",
        "INSPECT",
        "dashboard.data.formats.inspect",
        "'inspect-ai'",
    ]


def test_nothing_outside_formats_names_a_harness() -> None:
    found = {
        str(path.relative_to(PACKAGE)): refs
        for path in _outside_formats()
        if (refs := harness_references(path))
    }
    assert found == {}


def test_every_harness_fills_the_protocol() -> None:
    harnesses = registry()
    names = [h.name for h in harnesses]
    assert len(set(names)) == len(names)
    assert names[-1] == MULTIVON  # it takes what no other harness claims
    members = {
        name
        for name, _ in inspect.getmembers(Harness)
        if not name.startswith("_") and name != "staged"
    } | set(Harness.__annotations__)
    for harness in harnesses:
        missing = {m for m in members if not hasattr(harness, m)}
        assert missing == set(), (harness.name, missing)
        assert isinstance(harness.terms, RunTerms)
        assert harness_named(harness.name) is harness


def test_a_file_is_claimed_by_its_content_not_its_name() -> None:
    assert harness_for("a.json", b'{"version": 2, "status": "success"').name == "inspect-ai"
    assert harness_for("a.json", b'{"suite": "x", "cases": []}').name == MULTIVON
    assert harness_for("a.eval", b"PK\x03\x04").name == "inspect-ai"
    assert harness_named("no such harness").name == MULTIVON
