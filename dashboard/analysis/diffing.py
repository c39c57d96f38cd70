"""Two transcripts aligned: changed lines, changed words, and where they first diverge.

Volatile tokens (durations, timestamps, UUIDs, hex digests, memory addresses, temporary
paths, run counters) are normalised when deciding which lines differ and where the first
divergence is, so `1 failed in 0.38s` against `0.93s` is not where the real change is
said to be; the original text is what is shown. `divergence_groups` says which failing
trials share one first divergence: one failure mode or several.

`separating_row` finds the first line that tells passing trials from failing ones (held
by every passing trial and by no failing one, or the other way round). A line that
varies in every trial (a greeting, say) differs between any two transcripts but
separates nothing, so it is not where the failure starts.

Pure text processing, no HTML (dashboard/render/diff.py draws the table). Must not:
import Streamlit, or read files.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
# Order matters: the longer shapes (a timestamp holds a time, a UUID holds hex) first.
VOLATILE: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "<time>",
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?\b"
            r"|\b\d{2}:\d{2}:\d{2}(\.\d+)?\b"
        ),
    ),
    (
        "<uuid>",
        re.compile(
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
        ),
    ),
    ("<addr>", re.compile(r"\b0x[0-9a-fA-F]{4,}\b")),
    (
        "<tmp>",
        re.compile(r"(/tmp|/var/folders|/private/var|[A-Za-z]:\\\\[^\s]*\\\\Temp)[/\\\\][^\s'\"]*"),
    ),
    ("<hex>", re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{12,}\b")),
    (
        "<duration>",
        re.compile(
            r"\b\d+(\.\d+)?\s?(ms|msec|s|sec|secs|seconds?|m|min|mins|minutes?|h|hours?)\b",
            re.IGNORECASE,
        ),
    ),
    ("<run>", re.compile(r"\b(run|attempt|trial|epoch|try|iteration)\s*#?\s*\d+\b", re.IGNORECASE)),
    ("<pid>", re.compile(r"\b(pid|PID)[=: ]\s*\d+\b")),
)


def normalise_volatile(line: str) -> str:
    """The line with each volatile token replaced by its kind: what two runs that did
    the same thing have in common."""
    for name, pattern in VOLATILE:
        line = pattern.sub(name, line)
    return line


@dataclass(frozen=True)
class DiffRow:
    kind: str  # equal | volatile (differs only in volatile tokens) | replace | delete | insert
    left_no: int | None
    left: str
    right_no: int | None
    right: str


def diff_lines(left: str, right: str, *, ignore_volatile: bool = True) -> list[DiffRow]:
    """Align two transcripts line by line; with `ignore_volatile`, lines that differ only
    in volatile tokens align as `volatile` rows (shown as they are, not a divergence)."""
    a, b = left.splitlines(), right.splitlines()
    keys_a = [normalise_volatile(x) for x in a] if ignore_volatile else a
    keys_b = [normalise_volatile(x) for x in b] if ignore_volatile else b
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(a=keys_a, b=keys_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            rows += [
                DiffRow(
                    "equal" if a[i1 + d] == b[j1 + d] else "volatile",
                    i1 + d + 1,
                    a[i1 + d],
                    j1 + d + 1,
                    b[j1 + d],
                )
                for d in range(i2 - i1)
            ]
            continue
        span = max(i2 - i1, j2 - j1)
        for d in range(span):
            li, rj = i1 + d, j1 + d
            has_l, has_r = li < i2, rj < j2
            kind = "replace" if has_l and has_r else ("delete" if has_l else "insert")
            rows.append(
                DiffRow(
                    kind,
                    li + 1 if has_l else None,
                    a[li] if has_l else "",
                    rj + 1 if has_r else None,
                    b[rj] if has_r else "",
                )
            )
    return rows


def first_divergence(rows: list[DiffRow]) -> int | None:
    """Index of the first row where the transcripts differ, None if identical (rows that
    differ only in volatile tokens do not count)."""
    return next((i for i, row in enumerate(rows) if row.kind not in ("equal", "volatile")), None)


def separating_lines(
    passing: list[str], failing: list[str], *, ignore_volatile: bool = True
) -> tuple[frozenset[str], frozenset[str]]:
    """The line keys held by every passing transcript and no failing one, and those held
    by every failing transcript and no passing one (keys: lines with volatile tokens
    normalised when `ignore_volatile`)."""

    def keys(text: str) -> set[str]:
        lines = text.splitlines()
        return {normalise_volatile(x) for x in lines} if ignore_volatile else set(lines)

    pass_sets = [keys(t) for t in passing]
    fail_sets = [keys(t) for t in failing]
    if not pass_sets or not fail_sets:
        return frozenset(), frozenset()
    in_pass, in_fail = set.union(*pass_sets), set.union(*fail_sets)
    only_pass = set.intersection(*pass_sets) - in_fail
    only_fail = set.intersection(*fail_sets) - in_pass
    return frozenset(only_pass), frozenset(only_fail)


def separating_row(
    rows: list[DiffRow],
    passing: list[str],
    failing: list[str],
    *,
    ignore_volatile: bool = True,
) -> int | None:
    """Index of the first row of a passing-vs-failing diff (`rows`: passing on the left)
    whose passing line is in every passing transcript and no failing one, or whose
    failing line is in every failing transcript and no passing one. None when no line
    separates the two groups (then the first divergence is the best there is).

    A side with one trial says nothing about which of its lines vary from trial to trial
    (a lone failing trial's greeting is "in every failing trial"), so lines from a side
    with two or more trials are looked for first, and a lone trial's only after them."""
    only_pass, only_fail = separating_lines(passing, failing, ignore_volatile=ignore_volatile)

    def key(line: str) -> str:
        return normalise_volatile(line) if ignore_volatile else line

    def first_in(left: frozenset[str], right: frozenset[str]) -> int | None:
        for i, row in enumerate(rows):
            if row.kind in ("equal", "volatile"):
                continue
            if row.left_no is not None and key(row.left) in left:
                return i
            if row.right_no is not None and key(row.right) in right:
                return i
        return None

    none: frozenset[str] = frozenset()
    trusted = first_in(
        only_pass if len(passing) > 1 else none, only_fail if len(failing) > 1 else none
    )
    return trusted if trusted is not None else first_in(only_pass, only_fail)


@dataclass(frozen=True)
class DivergenceGroup:
    """Failing trials whose diff against the passing one first diverges at one point."""

    line: int | None  # the passing transcript's line number there (None: at its end)
    text: str  # the failing transcript's line there, as written by the first such trial
    trials: tuple[int, ...]  # the failing trials' run indices


def divergence_groups(
    passing: str,
    failing: dict[int, str],
    *,
    ignore_volatile: bool = True,
    all_passing: list[str] | None = None,
) -> list[DivergenceGroup]:
    """Group failing trials (run index -> transcript) by where each first diverges from
    the passing transcript, most trials first: one failure mode or several. With
    `all_passing` (every passing trial's transcript), where each failing trial first
    parts from what the passing trials share (`separating_row`), so a line that varies
    in every trial does not split one failure mode into several."""
    groups: dict[tuple[int | None, str], list[int]] = {}
    shown: dict[tuple[int | None, str], str] = {}
    for run, text in sorted(failing.items()):
        rows = diff_lines(passing, text, ignore_volatile=ignore_volatile)
        first = first_divergence(rows)
        if all_passing:
            parted = separating_row(rows, all_passing, [text], ignore_volatile=ignore_volatile)
            first = first if parted is None else parted
        if first is None:
            key: tuple[int | None, str] = (None, "(no difference)")
            line = "(no difference)"
        else:
            row = rows[first]
            line = row.right if row.right_no is not None else "(line missing)"
            at = row.left_no if row.left_no is not None else _next_left(rows, first)
            key = (at, normalise_volatile(line) if ignore_volatile else line)
        groups.setdefault(key, []).append(run)
        shown.setdefault(key, line)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0][0] or 0))
    return [DivergenceGroup(key[0], shown[key], tuple(runs)) for key, runs in ordered]


def _next_left(rows: list[DiffRow], index: int) -> int | None:
    """The passing transcript's line number at or after a row that only inserts."""
    return next((r.left_no for r in rows[index:] if r.left_no is not None), None)


def word_spans(left: str, right: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Each side as (token, changed) pieces."""
    a, b = _TOKEN.findall(left), _TOKEN.findall(right)
    out_a: list[tuple[str, bool]] = []
    out_b: list[tuple[str, bool]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        out_a += [(t, op != "equal") for t in a[i1:i2]]
        out_b += [(t, op != "equal") for t in b[j1:j2]]
    return out_a, out_b
