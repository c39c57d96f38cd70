"""One Inspect sample's epochs, read from its log on demand, as readable transcripts.

A `.eval` keeps each sample-epoch in its own member (`samples/<id>_epoch_<n>.json`), so
showing a case reads only that sample's members; a JSON log is parsed whole (it has no
index). A transcript is text made to be diffed line by line: one block per message with
its role, each tool call with its arguments, each tool result, the final answer marked,
then every scorer's value, answer and explanation. Message and tool-call ids (random per
epoch) are left out, so that two epochs differ only where the agent did.

Must not: touch DuckDB, import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import json
import re
from typing import Any

from dashboard.data.formats.inspect.log import (
    LogProblem,
    MemberBudget,
    content_text,
    parse_json,
    value_to_float,
)
from dashboard.data.formats.inspect.zip_members import ZIP_MAGIC, ArchiveError, read_directory
from dashboard.data.formats.tool_calls import tool_call_lines

ATTACHMENT = "attachment://"
_ATTACHMENT_REF = re.compile(r"attachment://([0-9A-Za-z_-]+)")


def read_sample_epochs(
    path: str, size: int, sample_id: int | str, max_bytes: int, hint: str = ""
) -> dict[int, dict[str, Any]]:
    """Every recorded epoch of one sample, by epoch number (LogProblem if unreadable).

    Its members decompressing past `max_bytes` together are refused; `hint` says how to
    raise it."""
    with open(path, "rb") as handle:
        if handle.read(4).startswith(ZIP_MAGIC):
            try:
                members = read_directory(handle, size)
                budget = MemberBudget(max_bytes, hint)
                prefix = f"samples/{sample_id}_epoch_"
                out = {}
                for name, member in members.items():
                    epoch = name[len(prefix) : -len(".json")]
                    if name.startswith(prefix) and name.endswith(".json") and epoch.isdigit():
                        data = budget.read_json(handle, member)
                        if isinstance(data, dict):
                            out[int(epoch)] = data
                return out
            except ArchiveError as exc:
                raise LogProblem(str(exc)) from exc
        handle.seek(0)
        data = parse_json(handle.read(), "the file")
    samples = data.get("samples") if isinstance(data, dict) else None
    return {
        int(s["epoch"]): s
        for s in samples or []
        if isinstance(s, dict)
        and str(s.get("id")) == str(sample_id)
        and isinstance(s.get("epoch"), int)
    }


def transcript(sample: dict[str, Any], scorer: str, threshold: float) -> str:
    """One epoch as text: its messages, its error (if it errored), its scores."""
    attachments = _dict(sample.get("attachments"))
    messages = [m for m in sample.get("messages") or [] if isinstance(m, dict)]
    final = max(
        (
            i
            for i, m in enumerate(messages)
            if m.get("role") == "assistant" and not m.get("tool_calls")
        ),
        default=None,
    )
    blocks = [_message_block(m, i == final, attachments) for i, m in enumerate(messages)]
    if not messages:
        blocks.append(f"[input]\n{_resolve(_input_text(sample.get('input')), attachments)}")
    error = sample.get("error")
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        blocks.append(f"[error]\n{message}")
    for name, score in (sample.get("scores") or {}).items():
        if isinstance(score, dict):
            blocks.append(_score_block(name, score, threshold if name == scorer else None))
    return "\n\n".join(blocks) + "\n"


def evaluators(sample: dict[str, Any], scorer: str, threshold: float) -> list[dict[str, Any]]:
    """The epoch's scores in the shape of multivon-eval's per-trial graders."""
    out = []
    for name, score in (sample.get("scores") or {}).items():
        if not isinstance(score, dict):
            continue
        number = value_to_float(score.get("value"))
        out.append(
            {
                "name": name,
                "score": number,
                # only the scorer that decides the trial has a verdict
                "passed": (number >= threshold) if name == scorer and number is not None else None,
                "reason": score.get("explanation"),
                "value": score.get("value"),
                "answer": score.get("answer"),
            }
        )
    return out


def _message_block(message: dict[str, Any], final: bool, attachments: dict[str, Any]) -> str:
    role = str(message.get("role") or "message")
    if role == "tool":
        head = f"[tool result: {message.get('function') or 'tool'}]"
    elif role == "assistant" and final:
        head = "[assistant: final answer]"
    else:
        head = f"[{role}]"
    lines = [head]
    text = _resolve(content_text(message.get("content")), attachments).strip()
    if text:
        lines.append(text)
    error = message.get("error")
    if isinstance(error, dict) and error.get("message"):
        lines.append(f"tool error ({error.get('type') or 'error'}): {error['message']}")
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict):
            lines += _call_lines(call, attachments)
    return "\n".join(lines)


def _call_lines(call: dict[str, Any], attachments: dict[str, Any]) -> list[str]:
    arguments = {
        key: _resolve(value, attachments) if isinstance(value, str) else value
        for key, value in _dict(call.get("arguments")).items()
    }
    return tool_call_lines(call.get("function"), arguments)


def _score_block(name: str, score: dict[str, Any], threshold: float | None) -> str:
    value = score.get("value")
    shown = value if isinstance(value, str) else json.dumps(value, default=str)
    if threshold is not None:
        number = value_to_float(value)
        verdict = "unscored" if number is None else "passed" if number >= threshold else "failed"
        head = f"[score {name}: {shown}, {verdict}]"
    else:
        head = f"[score {name}: {shown}]"
    lines = [head]
    if score.get("answer") not in (None, ""):
        lines.append(f"answer: {score['answer']}")
    if score.get("explanation") not in (None, ""):
        lines.append(f"explanation: {score['explanation']}")
    return "\n".join(lines)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(content_text(m.get("content")) for m in value if isinstance(m, dict))
    return ""


def _resolve(text: str, attachments: dict[str, Any]) -> str:
    """Inspect stores large content once, as `attachment://<hash>`: put it back."""
    if ATTACHMENT not in text:
        return text
    return _ATTACHMENT_REF.sub(lambda m: str(attachments.get(m.group(1), m.group(0))), text)
