"""One promptfoo row (a repeat of a test for one pair) as a readable transcript.

Text made to be diffed line by line: the prompt as rendered, the provider's output (or
its error), then the grade and each assertion's verdict and reason from
`gradingResult.componentResults`. Row ids, latencies and token counts (which differ
between any two repeats) are left out, so that two repeats differ only where the model
did.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import json
from typing import Any

from dashboard.data.formats.promptfoo.rows import trial_status

INLINE_VALUE = 80  # an assertion's value longer than this is not repeated in its heading


def transcript(row: dict[str, Any]) -> str:
    """One row as text: prompt, output or error, grade, assertions."""
    blocks = [f"[prompt]\n{_prompt(row)}"]
    response = row.get("response")
    response = response if isinstance(response, dict) else {}
    status = trial_status(row)
    if status == "model_error":
        error = row.get("error") or response.get("error") or "(promptfoo recorded no message)"
        blocks.append(f"[error]\n{str(error).strip()}")
    else:
        head = "[output: replayed from promptfoo's cache]" if response.get("cached") else "[output]"
        blocks.append(f"{head}\n{_text(response.get('output'))}")
    grading = row.get("gradingResult")
    if isinstance(grading, dict):
        verdict = "passed" if status == "passed" else "failed"
        lines = [f"[grade: {verdict}, score {_score(row.get('score'))}]"]
        if grading.get("reason") not in (None, ""):
            lines.append(f"reason: {grading['reason']}")
        blocks.append("\n".join(lines))
        for component in _components(grading):
            blocks.append(_assertion_block(component))
    return "\n\n".join(blocks) + "\n"


def evaluators(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's assertions in the shape of multivon-eval's per-trial graders."""
    grading = row.get("gradingResult")
    if not isinstance(grading, dict):
        return []
    out = []
    for component in _components(grading):
        assertion = component.get("assertion")
        assertion = assertion if isinstance(assertion, dict) else {}
        passed = component.get("pass")
        out.append(
            {
                "name": _assertion_name(assertion),
                "score": _number(component.get("score")),
                "passed": passed if isinstance(passed, bool) else None,
                "reason": component.get("reason"),
                "value": assertion.get("value"),
            }
        )
    return out


def _components(grading: dict[str, Any]) -> list[dict[str, Any]]:
    parts = grading.get("componentResults")
    return [c for c in parts if isinstance(c, dict)] if isinstance(parts, list) else []


def _assertion_block(component: dict[str, Any]) -> str:
    assertion = component.get("assertion")
    assertion = assertion if isinstance(assertion, dict) else {}
    passed = component.get("pass")
    verdict = "passed" if passed is True else "failed" if passed is False else "no verdict"
    lines = [f"[assertion {_assertion_name(assertion)}: {verdict}]"]
    value = assertion.get("value")
    if value is not None:
        shown = _text(value)
        if len(shown) <= INLINE_VALUE and "\n" not in shown:
            lines.append(f"value: {shown}")
        else:
            lines += ["value:"] + [f"| {line}" for line in shown.splitlines()]
    if component.get("reason") not in (None, ""):
        lines.append(f"reason: {component['reason']}")
    return "\n".join(lines)


def _assertion_name(assertion: dict[str, Any]) -> str:
    """The assertion's metric name when it has one, else its type."""
    kind = str(assertion.get("type") or "assertion")
    metric = assertion.get("metric")
    return f"{metric} ({kind})" if isinstance(metric, str) and metric else kind


def _prompt(row: dict[str, Any]) -> str:
    prompt = row.get("prompt")
    if isinstance(prompt, dict) and isinstance(prompt.get("raw"), str):
        return str(prompt["raw"])
    return _text(row.get("vars"))


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return "(no output)"
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _score(value: Any) -> str:
    number = _number(value)
    return "—" if number is None else f"{number:g}"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
