"""The figures a benchmark printed, kept for docs/performance.md.

Each benchmark hands its table's rows (measure, figure, target, verdict) to `keep`, which
writes them to benchmarks/figures/<benchmark>.json with the day they were measured and the
command that measures them again. `tools/performance_doc.py` (`make performance-doc`)
turns those files into docs/performance.md, so the table is the benchmarks' output and
never edited by hand. A benchmark run replaces its own file: the table holds current
figures only, and git keeps the rest.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

FIGURES = Path(__file__).resolve().parent / "figures"


def keep(
    benchmark: str,
    command: str,
    rows: Iterable[Sequence[str]],
    setting: str = "",
    partial: bool = False,
) -> Path:
    """Write one benchmark's rows, replacing the ones it wrote before.

    `setting` says what was measured on (the corpus). A `partial` run (one that measured
    only some of its figures, such as bench_long --warm-only) keeps the earlier rows it did
    not measure again, each with its own day.
    """
    FIGURES.mkdir(exist_ok=True)
    target = FIGURES / f"{benchmark}.json"
    today = dt.datetime.now(dt.UTC).date().isoformat()
    fresh = [
        {"measure": m.strip(), "figure": f, "target": t, "verdict": v, "measured": today}
        for m, f, t, v in (tuple(row) + ("",) * (4 - len(row)) for row in rows)
    ]
    if partial and target.exists():
        measured = {row["measure"] for row in fresh}
        earlier = json.loads(target.read_text())["rows"]
        fresh = [row for row in earlier if row["measure"] not in measured] + fresh
    document = {
        "benchmark": benchmark,
        "command": command,
        "cores": os.cpu_count(),
        "setting": setting,
        "rows": fresh,
    }
    temporary = target.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    temporary.replace(target)
    return target
