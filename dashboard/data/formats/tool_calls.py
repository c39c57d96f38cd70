"""An agent's tool call as transcript lines, the same for every harness whose transcripts
record them (Inspect's messages, Harbor's ATIF trajectories): short arguments inline, long
or multi-line string arguments as a block below, so a diff of two trials lines up.

Must not: read files, touch DuckDB, import Streamlit or Altair.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

INLINE_ARGUMENT = 120  # longer (or multi-line) string arguments are shown as a block


def tool_call_lines(function: object, arguments: Mapping[str, Any]) -> list[str]:
    """`-> tool call name(a=1, b=<below>)`, then each block argument indented."""
    inline, blocks = [], []
    for key, value in arguments.items():
        if isinstance(value, str) and (len(value) > INLINE_ARGUMENT or "\n" in value):
            blocks.append((key, value))
            inline.append(f"{key}=<below>")
        else:
            inline.append(f"{key}={json.dumps(value, ensure_ascii=False, default=str)}")
    lines = [f"-> tool call {function or '?'}({', '.join(inline)})"]
    for key, value in blocks:
        lines.append(f"   {key}:")
        lines += [f"   | {line}" for line in value.splitlines()]
    return lines
