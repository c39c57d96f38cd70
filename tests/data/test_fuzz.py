"""Hypothesis over mutated real reports: the load never raises, every file is either loaded
or listed as a problem, the good file's numbers do not move, and the directory is untouched."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import summaries
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dashboard.analysis import loading
from dashboard.data.catalog import open_catalog

FIXTURES = Path(__file__).parents[1] / "fixtures"
SOURCES = ["mv-0.15.2_early-stop_runs8.json", "mv-0.16.0_runs3.json", "mv-0.18.0_runs1.json"]
GOOD = "mv-0.17.0_skipped-case_runs5.json"

HOSTILE_TEXT = st.sampled_from(
    [
        "'; DROP TABLE reports; --",
        '" OR 1=1 --',
        "../../etc/passwd",
        "\x00\x01\x1b[31mred\x1b[0m",
        "\u202eevil\u202c",
        "x" * 100_000,
        "<script>alert(1)</script>",
        '=HYPERLINK("http://x")',
        "$suite",
        "",
    ]
)
WEIRD_VALUE = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.none(),
    st.booleans(),
    st.just([]),
    st.just({}),
    st.lists(HOSTILE_TEXT, max_size=3),
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:3]):
            out += _paths(value, (*prefix, i))
    return out


def _set(node: Any, path: tuple[Any, ...], value: Any) -> None:
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


@st.composite
def mutated_report(draw: st.DrawFn) -> bytes:
    source = (FIXTURES / draw(st.sampled_from(SOURCES))).read_bytes()
    kind = draw(st.sampled_from(["field", "field", "field", "truncate", "bytes", "delete"]))
    if kind == "truncate":
        return source[: draw(st.integers(min_value=0, max_value=len(source) - 1))]
    if kind == "bytes":
        data = bytearray(source)
        for _ in range(draw(st.integers(1, 8))):
            data[draw(st.integers(0, len(data) - 1))] = draw(st.integers(0, 255))
        return bytes(data)
    report = json.loads(source)
    paths = _paths(report)
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(paths))
        try:
            if kind == "delete":
                parent = report
                for part in path[:-1]:
                    parent = parent[part]
                del parent[path[-1]]
            else:
                _set(report, path, draw(WEIRD_VALUE))
        except (KeyError, IndexError, TypeError):
            pass
        paths = _paths(report)
        if not paths:
            break
    return json.dumps(report).encode()


def _snapshot(root: Path) -> dict[str, tuple[str, int]]:
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _numbers(document: dict[str, Any], file: str) -> Any:
    (report,) = [r for r in document["reports"] if r["file"] == file]
    return report["pass_at_k"], report["pass_hat_k"], report["cases"]


def _load(root: Path) -> dict[str, Any]:
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, root)
    return summaries.summary_json(con)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(payload=mutated_report())
def test_mutated_reports_never_break_the_load(tmp_path_factory: Any, payload: bytes) -> None:
    root = tmp_path_factory.mktemp("reports")
    shutil.copy(FIXTURES / GOOD, root / GOOD)
    baseline = _numbers(_load(root), GOOD)
    (root / "mutant.json").write_bytes(payload)
    before = _snapshot(root)

    document = _load(root)

    assert _snapshot(root) == before
    loaded = {r["file"] for r in document["reports"]}
    file_problems = {p["file"] for p in document["problems"] if p["scope"] == "file"}
    assert "mutant.json" in loaded ^ file_problems  # exactly one of the two
    assert GOOD in loaded and GOOD not in file_problems
    assert _numbers(document, GOOD) == baseline
    for report in document["reports"]:
        for block in (report["pass_at_k"], report["pass_hat_k"]):
            for cell in block.values():
                if cell["value"] is not None:
                    assert 0.0 <= cell["ci_low"] <= cell["value"] <= cell["ci_high"] <= 1.0
