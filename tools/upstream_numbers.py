"""Record the numbers multivon-eval itself computes for saved report files.

Runs INSIDE a throwaway venv with multivon-eval 0.20.0 installed (driven by
``tools/make_fixtures.py``); relidash's golden tests compare their loader and
estimators against the JSON this writes. It never imports relidash, and
relidash never imports multivon-eval.

Usage::

    python tools/upstream_numbers.py --root DIR --out DIR/expected_numbers.json FILE...

For every FILE (keyed by its path relative to ``--root``, with ``/``
separators) it loads ``EvalReport.from_dict(json.load(f))`` and records
suite, model, runs_per_case, total, evaluated, errors, skipped, pass_rate,
``pass_at_k`` / ``pass_hat_k`` for k = 1..max(8, runs_per_case) (value,
ci_low, ci_high, unknown_reason; full float precision, unknown_reason null
when known) and the lottery cases at the default k in upstream order. If
upstream rejects a file, ``from_dict_error`` holds the message and every
number is null.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from multivon_eval.result import EvalReport


def _pass_k_entry(result: Any) -> dict[str, Any]:
    return {
        "value": result.value,
        "ci_low": result.ci_low,
        "ci_high": result.ci_high,
        "unknown_reason": result.unknown_reason or None,
    }


def numbers_for(path: Path) -> dict[str, Any]:
    """Everything upstream reports for one file (or why it refused it)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    try:
        report = EvalReport.from_dict(data)
    except Exception as exc:  # upstream's own validation: record, don't crash
        return {
            "suite": data.get("suite") if isinstance(data, dict) else None,
            "model": data.get("model") if isinstance(data, dict) else None,
            "runs_per_case": None,
            "total": None,
            "evaluated": None,
            "errors": None,
            "skipped": None,
            "pass_rate": None,
            "pass_at_k": None,
            "pass_hat_k": None,
            "lottery": None,
            "from_dict_error": f"{type(exc).__name__}: {exc}",
        }
    runs = report.runs_per_case
    ks = range(1, max(8, runs) + 1)
    return {
        "suite": report.suite_name,
        "model": report.model_id,
        "runs_per_case": runs,
        "total": report.total,
        "evaluated": report.evaluated,
        "errors": report.errors,
        "skipped": report.skipped,
        "pass_rate": report.pass_rate,
        "pass_at_k": {str(k): _pass_k_entry(report.pass_at_k(k)) for k in ks},
        "pass_hat_k": {str(k): _pass_k_entry(report.pass_hat_k(k)) for k in ks},
        "lottery": [
            {
                "input": cr.case_input,
                "case_id": getattr(cr, "case_id", None),
                "runs": cr.runs,
                "pass_count": cr.pass_count,
            }
            for cr in report.lottery_cases()
        ],
        "from_dict_error": None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--root", type=Path, required=True, help="directory the keys are relative to"
    )
    parser.add_argument("--out", type=Path, required=True, help="JSON file to write")
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args(argv)

    root = args.root.resolve()
    numbers = {
        path.resolve().relative_to(root).as_posix(): numbers_for(path)
        for path in sorted(args.files, key=lambda p: p.resolve().relative_to(root).as_posix())
    }
    args.out.write_text(json.dumps(numbers, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    rejected = [k for k, v in numbers.items() if v["from_dict_error"]]
    print(
        f"{args.out}: {len(numbers)} reports, {len(rejected)} rejected by from_dict",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
