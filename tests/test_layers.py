"""The layers' arrows point one way: each layer, imported alone in a fresh interpreter,
pulls in nothing it must not (STYLE.md, "The shape: data flows one way").

Every module of a package is imported, not only its __init__, so a forbidden import in
any file is caught.
"""

from __future__ import annotations

import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROBE = r"""
import importlib, json, pkgutil, sys
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    if not name.startswith("dashboard"):
        continue
    for info in pkgutil.walk_packages(getattr(module, "__path__", []), name + "."):
        importlib.import_module(info.name)
print(json.dumps(sorted(sys.modules)))
"""

LAYERS = {
    "dashboard.stats": ["pandas", "duckdb", "streamlit", "altair"],
    "dashboard.data": ["streamlit", "altair", "dashboard.stats"],
    "dashboard.service": ["streamlit", "altair"],
    "dashboard.views": ["streamlit", "altair"],
    "dashboard.charts": ["duckdb", "streamlit"],
}


@cache
def imported_by(*modules: str) -> frozenset[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *modules],
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


@pytest.mark.parametrize("layer", list(LAYERS))
def test_layer_imports_nothing_forbidden(layer: str) -> None:
    loaded = imported_by(layer)
    assert layer in loaded
    assert offenders(loaded, LAYERS[layer]) == []


def test_probe_sees_forbidden_imports() -> None:
    """The check can fail: the chart factories do pull in Altair."""
    assert offenders(imported_by("dashboard.charts"), ["altair"])
