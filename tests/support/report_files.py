"""Report files for the tests: whether a file is one, hand-made ones in multivon-eval's
0.15 shape (the gate and compare tests), and a bucket's objects written as a directory."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def write_tree(root: Path, files: Mapping[str, bytes], stamps: Mapping[str, int]) -> Path:
    """The files (key -> bytes) under root, each with its stamp (ns since the epoch) as its
    mtime: a bucket's objects as a directory, dated by their modification time (which
    report of a release is the latest is decided by time)."""
    for key, body in files.items():
        target = root / key
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        os.utime(target, ns=(stamps[key], stamps[key]))
    return root


def is_report(path: Path) -> bool:
    """Whether the file holds one JSON object with a `cases` list."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("cases"), list)


def case(
    text: str,
    passes: int,
    runs: int = 5,
    tags: Sequence[str] = (),
    *,
    model_error: str | None = None,
    case_id: str | None = None,
    rate: float | None = None,
) -> dict[str, Any]:
    """One case as multivon-eval 0.15 wrote it (pass count recovered from run_pass_rate)."""
    passed = passes == runs
    out: dict[str, Any] = {
        "input": text,
        "output": f"answer to {text}",
        "runs": runs,
        "run_pass_rate": passes / runs if rate is None else rate,
        "tags": list(tags),
        "evaluators": [{"name": "exact", "score": float(passed), "passed": passed}],
        "passed": passed and model_error is None,
        "status": "passed" if passed else "failed",
    }
    if model_error is not None:
        out["model_error"] = model_error
        out["status"] = "error"
    if case_id is not None:
        out["case_id"] = case_id
    return out


def write_report(
    root: Path, suite: str, release: str, cases: list[dict[str, Any]], name: str | None = None
) -> Path:
    """`root/suite/<name or release>.json` with the release as its model name."""
    path = root / suite / f"{name or release}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"suite": suite, "model": release, "summary": {}, "cases": cases}),
        encoding="utf-8",
    )
    return path
