"""Tables made to fit a page 1280 px wide: what every row says alike is said once,
above or below the table, not in a column; a reason repeated in many cells becomes a
numbered note; long digests are cut, with the full value kept for whoever needs it.

Formatting only: the pages pass frames in and show what comes out; CSV downloads keep
the full frames. Must not: import Streamlit, decide a verdict, or do I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from dashboard.render.formatting import pct

UNKNOWN_PREFIX = "UNKNOWN — "
SHA_SHOWN = 12  # hex digits of a SHA-256 shown in a table cell


def _text(value: Any) -> str:
    if value is None or value == "" or (isinstance(value, float) and value != value):
        return "—"
    return str(value)


def drop_constant(
    frame: pd.DataFrame, keep: Iterable[str] = ()
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The frame without the columns that hold one value in every row (other than
    `keep`), and those columns' single values. A frame of one row is kept whole: its
    columns are the point."""
    if len(frame) < 2:
        return frame, {}
    kept = set(keep)
    same = {
        column: frame[column].iloc[0]
        for column in frame.columns
        if column not in kept and frame[column].astype(str).nunique(dropna=False) == 1
    }
    return frame.drop(columns=list(same)), same


def constant_note(
    same: dict[str, Any], labels: dict[str, str] | None = None, percent: Iterable[str] = ()
) -> str:
    """`Every row: attempt 1 · model_error —`, or "" when nothing was dropped; the
    `percent` columns' values as percentages."""
    if not same:
        return ""
    names, in_percent = labels or {}, set(percent)
    return "Every row: " + " · ".join(
        f"{names.get(c, c)} {pct(v) if c in in_percent else _text(v)}" for c, v in same.items()
    )


def unknown_notes(frame: pd.DataFrame, columns: Sequence[str]) -> tuple[pd.DataFrame, list[str]]:
    """Cells reading `UNKNOWN — reason` shown as `UNKNOWN (n)`, with the distinct
    reasons as numbered notes, so a reason repeated down a column is read once."""
    reasons: list[str] = []
    shown = frame.copy()
    for column in columns:
        cells = []
        for value in shown[column]:
            text = "" if value is None else str(value)
            if text.startswith(UNKNOWN_PREFIX):
                reason = text.removeprefix(UNKNOWN_PREFIX)
                if reason not in reasons:
                    reasons.append(reason)
                cells.append(f"UNKNOWN ({reasons.index(reason) + 1})")
            else:
                cells.append(value)
        shown[column] = cells
    return shown, [f"({i}) UNKNOWN: {r}" for i, r in enumerate(reasons, start=1)]


def short_sha(value: Any) -> str:
    """A SHA-256 cut to its first digits (the full value is listed under the table)."""
    text = _text(value)
    return text if len(text) <= SHA_SHOWN else text[:SHA_SHOWN] + "…"


def lottery_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The Lottery page's table: passes and runs as one `c/n` cell."""
    shown = frame.copy()
    shown.insert(
        list(shown.columns).index("passes"),
        "passes_runs",
        [f"{int(c)}/{int(n)}" for c, n in zip(shown["passes"], shown["runs"], strict=True)],
    )
    return shown.drop(columns=["passes", "runs"])


def trial_rows(trials: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """A case's trials as shown: latency in whole milliseconds (a tenth of a
    millisecond says nothing about an agent's run)."""
    shown = trials[list(columns)].copy()
    if "latency_ms" in shown.columns:
        shown["latency_ms"] = [
            None if v is None or v != v else int(round(float(v))) for v in shown["latency_ms"]
        ]
    return shown


def sha_lines(frame: pd.DataFrame, sha: str = "SHA-256", path: str = "file") -> str:
    """The full digests as `sha256sum` prints them (`digest  path`), one file a line,
    for the table that shows them cut: copyable, and checkable with `sha256sum -c`."""
    return "\n".join(f"{d}  {p}" for d, p in zip(frame[sha], frame[path], strict=True))


SIGNOFF_ORDER = [
    "time", "suite", "release", "base", "decision", "by", "comment", "identity", "signature",
    "chain", "evidence", "changed files",
]  # fmt: skip


def signoff_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """Sign-offs as a page shows them: the comment beside who wrote it, the time to the
    minute (the CSV keeps it to the microsecond)."""
    shown = frame[[c for c in SIGNOFF_ORDER if c in frame.columns]].copy()
    shown["time"] = [str(t)[:16].replace("T", " ") if t else "—" for t in shown["time"]]
    return shown
