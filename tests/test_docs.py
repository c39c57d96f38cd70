"""The user docs hold together: README's links and pictures exist, the pages stay within
their length, and docs/performance.md is what the benchmarks' kept figures give."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT / "docs").glob("*.md"))
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)|<img src=\"([^\"]+)\"")


@pytest.mark.parametrize("page", [ROOT / "README.md", *DOCS], ids=lambda p: p.name)
def test_every_local_link_and_picture_exists(page: Path) -> None:
    missing = []
    for match in LINK.finditer(page.read_text()):
        target = match.group(1) or match.group(2)
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        if not (page.parent / target).exists():
            missing.append(target)
    assert not missing, f"{page.name} links to files that do not exist: {missing}"


def test_the_readme_opens_with_the_two_commands_and_stays_short() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200
    opening = "\n".join(lines[:6])
    assert "make run" in opening and "make test" in opening
    assert len((ROOT / "benchmarks" / "README.md").read_text().splitlines()) <= 150


def test_performance_page_is_the_benchmarks_output() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "performance_doc.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr


def test_the_performance_page_changes_with_the_figures() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import performance_doc
    finally:
        sys.path.pop(0)
    kept = performance_doc.load()
    one_more = {
        "benchmark": "bench_extra",
        "command": "python benchmarks/bench_extra.py",
        "setting": "",
        "rows": [{"measure": "m", "figure": "1.0 s", "target": "< 2 s", "verdict": "met",
                  "measured": "2026-01-01"}],
    }  # fmt: skip
    assert performance_doc.render(kept) == (ROOT / "docs" / "performance.md").read_text()
    assert "| m | 1.0 s | < 2 s | met |" in performance_doc.render([*kept, one_more])
