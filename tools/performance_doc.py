"""Write docs/performance.md from the figures the benchmarks kept (benchmarks/figures/).

    python tools/performance_doc.py [--check]

One table: each measure, its figure, its target and verdict, the command that measures it
again and the day it was measured. `--check` exits 1 when docs/performance.md is not what
the kept figures give (a hand edit, or a benchmark run whose table was not regenerated).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from generated_page import write_or_check  # noqa: E402

FIGURES = ROOT / "benchmarks" / "figures"
DOC = ROOT / "docs" / "performance.md"
# the order the benchmarks appear in, most read first
ORDER = [
    "bench_load", "bench_long", "bench_pages", "bench_inspect", "bench_harbor",
    "bench_promptfoo", "bench_s3",
]  # fmt: skip

HEADER = """\
# Performance

Current figures, one row a measure, as the benchmarks printed them on the day given. The
machine is shared (2 cores here), so absolute times move with the hour; targets that
compare two things (relidash against DuckDB's own parse, against the harness's own
reader) are measured in one run, in turn. [benchmarks/README.md](../benchmarks/README.md)
says how to run each benchmark and read its output.

This page is written by `make performance-doc` from `benchmarks/figures/`, which each
benchmark rewrites when it runs; do not edit it by hand.
"""


def cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(documents: list[dict[str, object]]) -> str:
    lines = [HEADER]
    if not documents:
        lines.append("No benchmark has kept figures yet: run `make bench`.\n")
        return "\n".join(lines)
    lines.append("| measure | figure | target | verdict | command | measured |")
    lines.append("|---|---|---|---|---|---|")
    for document in documents:
        command = f"`{document['command']}`"
        for row in document["rows"]:  # type: ignore[union-attr]
            lines.append(
                f"| {cell(row['measure'])} | {cell(row['figure'])} | {cell(row['target'])} "
                f"| {cell(row['verdict'])} | {command} | {row['measured']} |"
            )
    lines.append("")
    for document in documents:
        if document.get("setting"):
            lines.append(f"- `{document['benchmark']}`: {document['setting']}")
    lines.append("")
    return "\n".join(lines)


def load() -> list[dict[str, object]]:
    found = {p.stem: json.loads(p.read_text()) for p in sorted(FIGURES.glob("*.json"))}
    ordered = [found.pop(name) for name in ORDER if name in found]
    return ordered + [found[name] for name in sorted(found)]


def main(argv: list[str] | None = None) -> int:
    return write_or_check(
        DOC,
        lambda: render(load()),
        __doc__.split("\n\n")[0],
        "benchmarks/figures/ gives: run make performance-doc",
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
