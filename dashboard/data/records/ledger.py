"""The reviews directory as a hash chain: each record names the record before it.

Every record relidash writes carries `previous` (the file name of the record before it in
the reviews directory, None for the first) and `previous_sha256` (the SHA-256 of that
file's bytes), as a git commit names its parent. Editing, removing, renaming or slipping a
record into the middle of the chain then breaks a link that `check_chain` finds and
names. Records written before chaining (no `previous_sha256` key) are a prefix that
predates the chain: the first chained record lists their digests (`unchained_sha256`), so
one of them removed or edited, or one added later, is a break too.

What a chain cannot show alone is its own end cut off or a record added after the last:
signatures (data.sshsig) and the head digest a packet carries cover those.

Must not: read or write files (data.signoffs does, under the directory's lock), or check
signatures; pure functions over the directory's listing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

PREVIOUS: Final = "previous"
PREVIOUS_SHA256: Final = "previous_sha256"
UNCHAINED_SHA256: Final = "unchained_sha256"


@dataclass(frozen=True)
class LedgerFile:
    """One `*.json` file of the reviews directory as found now."""

    name: str
    sha256: str  # of its bytes now
    record: Mapping[str, Any] | None  # None: not a readable record
    time: str = ""  # the record's time, for ordering what the chain cannot order


@dataclass(frozen=True)
class ChainBreak:
    file: str  # the record at which the chain breaks
    kind: str  # "edited" | "removed" | "reordered" | "inserted" | "forked"
    reason: str  # a sentence following the file name


@dataclass(frozen=True)
class ChainState:
    order: tuple[str, ...]  # file names, oldest first: the unchained prefix, then the chain
    unchained: tuple[str, ...]  # the prefix that predates chaining
    head: str | None  # the last chained record
    head_sha256: str | None
    breaks: tuple[ChainBreak, ...] = field(default=())

    @property
    def holds(self) -> bool:
        return not self.breaks


def is_chained(record: Mapping[str, Any]) -> bool:
    return PREVIOUS_SHA256 in record


def next_links(files: Sequence[LedgerFile]) -> dict[str, Any]:
    """The chain fields of the record about to be written after `files`."""
    state = check_chain(files)
    if state.head is not None:
        return {PREVIOUS: state.head, PREVIOUS_SHA256: state.head_sha256}
    fields: dict[str, Any] = {PREVIOUS: None, PREVIOUS_SHA256: None}
    by_name = {f.name: f for f in files}
    if state.unchained:
        last = by_name[state.unchained[-1]]
        fields = {PREVIOUS: last.name, PREVIOUS_SHA256: last.sha256}
        fields[UNCHAINED_SHA256] = sorted(by_name[n].sha256 for n in state.unchained)
    return fields


def check_chain(files: Sequence[LedgerFile]) -> ChainState:
    """Walk the chain from its first record; every link that does not hold is a break."""
    records = [f for f in files if f.record is not None]
    chained = sorted((f for f in records if is_chained(f.record or {})), key=_when)
    unchained = sorted((f for f in records if not is_chained(f.record or {})), key=_when)
    unchained_names = {f.name for f in unchained}
    by_name = {f.name: f for f in files}
    by_sha: dict[str, list[str]] = {}
    for f in files:
        by_sha.setdefault(f.sha256, []).append(f.name)
    breaks: list[ChainBreak] = []
    followers: dict[str, list[LedgerFile]] = {}
    roots: list[LedgerFile] = []
    parents: set[str] = set()
    for f in chained:
        parent = _parent(f, by_name, by_sha, breaks)
        parents.add(str(parent))
        if parent is None or parent in unchained_names:
            roots.append(f)
        else:
            followers.setdefault(parent, []).append(f)
    if len(roots) > 1:
        for extra in roots[1:]:
            breaks.append(ChainBreak(extra.name, "inserted",
                f"claims to be the chain's first record, as {roots[0].name} does: one of them "
                "was slipped into the chain"))  # fmt: skip
    breaks.extend(_prefix_breaks(unchained, roots, chained))
    order: list[str] = []
    seen: set[str] = set()
    head: LedgerFile | None = None
    stack = list(reversed(roots))
    while stack:
        current = stack.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        order.append(current.name)
        head = current
        after = followers.get(current.name, [])
        if len(after) > 1:  # a fork: measured only here, so a straight chain walks in O(n)
            after = sorted(after, key=lambda a: (_depth(a, followers), _when(a)))
            names = ", ".join(a.name for a in after)
            for extra in after[:-1]:
                breaks.append(ChainBreak(extra.name, "inserted",
                    f"follows {current.name}, as another record does ({names}): it was "
                    "slipped into the chain"))  # fmt: skip
        stack.extend(after)  # the longest branch last, so walked first and its end the head
    for f in chained:  # cut off from the first record by a removed one: still listed
        if f.name not in seen:
            order.append(f.name)
    # the newest record none follows: a writer after a break links to the newest end
    ends = [f for f in chained if f.name not in parents]
    head = max(ends, key=_when) if ends else head
    return ChainState(
        order=tuple(f.name for f in unchained) + tuple(order),
        unchained=tuple(f.name for f in unchained),
        head=head.name if head is not None else None,
        head_sha256=head.sha256 if head is not None else None,
        breaks=tuple(_dedupe(breaks)),
    )


def _parent(
    f: LedgerFile,
    by_name: Mapping[str, LedgerFile],
    by_sha: Mapping[str, list[str]],
    breaks: list[ChainBreak],
) -> str | None:
    """The file `f` follows (None for the first), appending a break when the link fails."""
    record = f.record or {}
    wanted, name = record.get(PREVIOUS_SHA256), record.get(PREVIOUS)
    if wanted is None:
        return None
    found = by_name.get(str(name)) if name is not None else None
    if found is not None and found.sha256 == wanted:
        return found.name
    elsewhere = [n for n in by_sha.get(str(wanted), []) if n != f.name]
    if elsewhere:
        breaks.append(ChainBreak(f.name, "reordered",
            f"follows {name}, whose bytes are now under the name {elsewhere[0]}: records "
            "were renamed or reordered"))  # fmt: skip
        return elsewhere[0]
    if found is not None:
        breaks.append(ChainBreak(found.name, "edited",
            f"was edited after it was written: the record after it ({f.name}) was written "
            f"over bytes with SHA-256 {str(wanted)[:16]}…, and its bytes now differ"))  # fmt: skip
        return found.name
    breaks.append(ChainBreak(str(name), "removed",
        f"was removed: the record after it ({f.name}) names it, and it is not in the reviews "
        "directory"))  # fmt: skip
    return f"(removed) {name}"


def _depth(f: LedgerFile, followers: Mapping[str, list[LedgerFile]]) -> int:
    """How many records follow f, along its longest branch."""
    depth, level = 0, [f]
    seen: set[str] = set()
    while level:
        level = [a for x in level for a in followers.get(x.name, []) if a.name not in seen]
        seen.update(a.name for a in level)
        depth += bool(level)
    return depth


def _prefix_breaks(
    unchained: Sequence[LedgerFile], roots: Sequence[LedgerFile], chained: Sequence[LedgerFile]
) -> list[ChainBreak]:
    """The unchained prefix against the digests the first chained record listed."""
    if not chained:
        return []
    listed_in = [f for f in chained if UNCHAINED_SHA256 in (f.record or {})]
    listed: set[str] = set()
    for f in listed_in:
        value = (f.record or {}).get(UNCHAINED_SHA256)
        if isinstance(value, list):
            listed.update(str(v) for v in value)
    anchor = listed_in[0].name if listed_in else (roots[0].name if roots else chained[0].name)
    breaks = []
    present = {f.sha256 for f in unchained}
    for f in unchained:
        if f.sha256 not in listed:
            breaks.append(ChainBreak(f.name, "inserted",
                "has no link to the chain and is not one of the records that predate it "
                f"(as {anchor} lists them): it was added or edited after chaining began"))  # fmt: skip
    for digest in sorted(listed - present):
        breaks.append(ChainBreak(anchor, "removed",
            f"lists a record that predates the chain (SHA-256 {digest[:16]}…) that is no "
            "longer in the reviews directory: it was removed or edited"))  # fmt: skip
    return breaks


def _when(f: LedgerFile) -> tuple[str, str]:
    return (f.time, f.name)


def _dedupe(breaks: Sequence[ChainBreak]) -> list[ChainBreak]:
    seen: set[tuple[str, str]] = set()
    out = []
    for b in breaks:
        if (b.file, b.kind) not in seen:
            seen.add((b.file, b.kind))
            out.append(b)
    return out
