"""Verifying a review packet: whether what it carries is what the reports and the reviews
directory give now, and if not, what moved, by whose doing, and which sign-offs it touches.

A packet holds only when its review's numbers equal a fresh review of the same release,
its evidence is exactly the files the fresh review's numbers come from (same paths, same
bytes, at least one), and every sign-off it shows is a record in the reviews directory
(none recorded before it was written left out). Whether the visible document is what
relidash renders from that data is compared by dashboard/render/packet_diff.py; this
module gets its answer as a flag, never the markup.

Must not: read files, import Streamlit, or format a number (render/verify_report.py does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Final

from dashboard.analysis.review import (
    UNCHANGED,
    UNCHECKED_KEYS,
    EvidenceStatus,
    Review,
    differs,
    flatten,
)


class MalformedPacket(ValueError):
    """A file that is not a readable relidash packet: no block, bad JSON, or a bad shape."""


# what must be in a packet's review block, with the JSON type each must have
_REVIEW_FIELDS: Final = (
    ("suite", str),
    ("release", str),
    ("k", int),
    ("count_agent_errors", bool),
    ("verdict", str),
    ("relidash_version", str),
    ("policy", dict),
    ("evidence", list),
)


def packet_parts(block: Any) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    """The review, the sign-offs and the time of writing of a packet's block, checked for
    the shape verify reads; MalformedPacket naming the first key that is wrong."""
    if not isinstance(block, dict):
        raise MalformedPacket("its review block is not a JSON object")
    review = block.get("review")
    if not isinstance(review, dict):
        raise MalformedPacket("its review block has no 'review' object")
    for key, kind in _REVIEW_FIELDS:
        value = review.get(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise MalformedPacket(f"its review block has no valid 'review.{key}'")
    if review["k"] < 1:
        raise MalformedPacket("its review block has 'review.k' below 1")
    if not (review.get("base") is None or isinstance(review.get("base"), str)):
        raise MalformedPacket("its review block has no valid 'review.base'")
    policy = review["policy"]
    if not isinstance(policy.get("source"), str) or not isinstance(policy.get("sha256"), str):
        raise MalformedPacket("its review block has no valid 'review.policy'")
    for i, entry in enumerate(review["evidence"]):
        if not (
            isinstance(entry, dict)
            and isinstance(entry.get("path"), str)
            and isinstance(entry.get("sha256"), str)
        ):
            raise MalformedPacket(f"its review block has no valid 'review.evidence[{i}]'")
    signoffs = block.get("signoffs")
    if not isinstance(signoffs, list) or not all(isinstance(s, dict) for s in signoffs):
        raise MalformedPacket("its review block has no valid 'signoffs' list")
    generated_at = block.get("generated_at")
    if not isinstance(generated_at, str):
        raise MalformedPacket("its review block has no valid 'generated_at'")
    return review, signoffs, generated_at


# ---- moved numbers, named as a reader knows them ---------------------------------------------


@dataclass(frozen=True)
class Moved:
    """One thing of the review that differs between the packet and the reports now.

    kind: "metric" (a headline cell), "delta" (a paired Δ), "slice" (a tag's Δpass^k),
    "rule" (a rule's verdict and value), "count" (cases per bucket), "envelope",
    "policy" (its digest) or "other" (any other key, by its dotted path)."""

    kind: str
    name: str
    old: Any  # the packet's value (None when absent)
    new: Any  # the value now


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _keyed(items: Any, key: str) -> dict[str, Any]:
    return (
        {str(i.get(key)): i for i in items if isinstance(i, Mapping)}
        if isinstance(items, list)
        else {}
    )


def _union(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    return list(a) + [k for k in b if k not in a]


_GROUPED: Final = (
    "verdict", "headline", "delta", "ledger", "slices", "rules", "policy", "evidence",
)  # fmt: skip


def moved(packet: Mapping[str, Any], fresh: Mapping[str, Any]) -> tuple[Moved, ...]:
    """Every number of the packet's review that differs from the fresh one, one entry per
    metric, Δ, slice, rule or count (the verdict and the evidence are checked apart)."""
    out: list[Moved] = []

    def add(kind: str, name: str, old: Any, new: Any) -> None:
        if differs(old, new):
            out.append(Moved(kind, name, old, new))

    k = packet.get("k")
    names = {"pass_at_1": "pass@1", "pass_at_k": f"pass@{k}", "pass_hat_k": f"pass^{k}"}
    hp, hf = _obj(packet.get("headline")), _obj(fresh.get("headline"))
    for key, name in names.items():
        add("metric", name, hp.get(key), hf.get(key))
    cp, cf = _obj(hp.get("cases")), _obj(hf.get("cases"))
    for key in _union(cp, cf):
        add("count", f"cases {key}", cp.get(key), cf.get(key))
    envelope = ("envelope_points", "envelope_reading")
    add("envelope", "envelope", [hp.get(e) for e in envelope], [hf.get(e) for e in envelope])
    dp, df = _obj(packet.get("delta")), _obj(fresh.get("delta"))
    for key in _union(dp, df):
        add("delta", f"Δ{names.get(key, key)}", dp.get(key), df.get(key))
    sp, sf = _keyed(packet.get("slices"), "tag"), _keyed(fresh.get("slices"), "tag")
    for tag in _union(sp, sf):
        add("slice", tag, sp.get(tag), sf.get(tag))
    rp = packet.get("rules") if isinstance(packet.get("rules"), list) else []
    rf = fresh.get("rules") if isinstance(fresh.get("rules"), list) else []
    for i in range(max(len(rp), len(rf))):
        old, new = (rp[i] if i < len(rp) else None), (rf[i] if i < len(rf) else None)
        label = _obj(old).get("rule") or _obj(new).get("rule") or f"rule {i + 1}"
        add("rule", str(label), old, new)
    lp, lf = _obj(packet.get("ledger")), _obj(fresh.get("ledger"))
    for key in _union(lp, lf):
        add("count", f"cases {key}", lp.get(key), lf.get(key))
    add(
        "policy",
        "policy",
        _obj(packet.get("policy")).get("sha256"),
        _obj(fresh.get("policy")).get("sha256"),
    )
    rest_p = flatten({k: v for k, v in packet.items() if k not in _GROUPED})
    rest_f = flatten({k: v for k, v in fresh.items() if k not in _GROUPED})
    for key in _union(rest_p, rest_f):
        if key not in UNCHECKED_KEYS:
            add("other", key, rest_p.get(key), rest_f.get(key))
    return tuple(out)


# ---- evidence ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvidenceCheck:
    """The packet's evidence entries against the reviewed releases' files now."""

    shown: tuple[Mapping[str, Any], ...]
    changed: tuple[
        Mapping[str, Any], ...
    ]  # {path, role, old, new}: other bytes now (new None: gone)
    not_theirs: tuple[str, ...]  # paths shown that are not the reviewed releases' files
    left_out: tuple[str, ...]  # the reviewed releases' files that the packet does not show
    misdescribed: tuple[str, ...]  # same path and bytes, other role, size or format

    @property
    def forged(self) -> bool:
        """The entries are not the set the review's numbers come from."""
        return not self.shown or bool(self.not_theirs or self.left_out or self.misdescribed)


_FACTS: Final = ("role", "bytes", "format", "upgraded")


def check_evidence(
    shown: Sequence[Mapping[str, Any]],
    expected: Sequence[Mapping[str, Any]] | None,
    digests_now: Mapping[str, str | None],
) -> EvidenceCheck:
    """`expected`: the fresh review's evidence (None when the release cannot be reviewed
    now: then only the digests are checked); `digests_now`: SHA-256 of each shown path."""
    changed = tuple(
        {
            "path": e["path"],
            "role": e.get("role"),
            "old": e["sha256"],
            "new": digests_now.get(e["path"]),
        }
        for e in shown
        if digests_now.get(e["path"]) != e["sha256"]
    )
    if expected is None:
        return EvidenceCheck(tuple(shown), changed, (), (), ())
    ours = {str(e["path"]): e for e in expected}
    paths = [str(e["path"]) for e in shown]
    misdescribed = tuple(
        str(e["path"])
        for e in shown
        if e["path"] in ours
        and ours[e["path"]]["sha256"] == e["sha256"]
        and any(e.get(f) != ours[e["path"]].get(f) for f in _FACTS)
    )
    return EvidenceCheck(
        shown=tuple(shown),
        changed=changed,
        not_theirs=tuple(p for p in paths if p not in ours),
        left_out=tuple(p for p in ours if p not in paths),
        misdescribed=misdescribed,
    )


# ---- sign-offs ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignoffCheck:
    """The sign-offs a packet shows against the records of its release now."""

    shown: tuple[Mapping[str, Any], ...]
    unrecorded: tuple[Mapping[str, Any], ...]  # shown, but no record of this release is it
    left_out: tuple[Mapping[str, Any], ...]  # recorded before the packet was written, not shown
    later: tuple[Mapping[str, Any], ...]  # recorded after the packet was written
    touched: tuple[Mapping[str, Any], ...]  # records whose evidence is no longer as signed


def _time(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


def check_signoffs(
    shown: Sequence[Mapping[str, Any]],
    stored: Sequence[tuple[Mapping[str, Any], EvidenceStatus]],
    generated_at: str,
) -> SignoffCheck:
    """`stored`: every record of the packet's suite and release with its evidence status now."""
    records = [dict(r) for r, _ in stored]
    written = _time(generated_at)
    unrecorded = tuple(s for s in shown if dict(s) not in records)
    left_out, later = [], []
    for record in records:
        if record in [dict(s) for s in shown]:
            continue
        when = _time(record.get("time"))
        # the same second as the packet counts as after it: the packet may have been first
        if written is not None and when is not None and when >= written:
            later.append(record)
        else:
            left_out.append(record)
    touched = tuple(dict(r) for r, status in stored if status.status != UNCHANGED)
    return SignoffCheck(tuple(shown), unrecorded, tuple(left_out), tuple(later), touched)


# ---- the whole check -------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    """What `relidash verify` found; `holds` and the causes take the visible comparison's
    answer (whether the document differs from the one relidash renders)."""

    suite: str
    release: str
    base: str | None
    generated_at: str
    verdict_then: str
    verdict_now: str | None  # None: the release cannot be reviewed from the reports now
    cannot_review: str  # why not, or ""
    moved: tuple[Moved, ...]
    evidence: EvidenceCheck
    signoffs: SignoffCheck
    version_then: str
    version_now: str

    @property
    def reports_changed(self) -> bool:
        return bool(self.evidence.changed) or bool(self.cannot_review)

    @property
    def policy_changed(self) -> bool:
        return any(m.kind == "policy" for m in self.moved)

    @property
    def other_program(self) -> bool:
        return self.version_then != self.version_now

    @property
    def verdict_flipped(self) -> bool:
        return self.verdict_now is not None and self.verdict_now != self.verdict_then

    def edits(self, visible_differs: bool) -> list[str]:
        """What was changed in the packet itself, each as the reason (empty: nothing found).

        Moved numbers and a visible difference count as edits only when nothing else
        explains them: the same report bytes, the same policy, the same relidash."""
        found = []
        if not self.evidence.shown:
            found.append("no evidence")
        elif self.evidence.forged:
            found.append("other evidence")
        if self.signoffs.unrecorded:
            found.append("unrecorded sign-off")
        if self.signoffs.left_out:
            found.append("sign-off left out")
        explained = self.reports_changed or self.policy_changed or self.other_program
        if not explained and (self.moved or self.verdict_flipped):
            found.append("numbers")
        if not explained and visible_differs:
            found.append("visible")
        return found

    def holds(self, visible_differs: bool) -> bool:
        return not (
            self.reports_changed
            or self.moved
            or self.verdict_flipped
            or visible_differs
            or self.edits(visible_differs)
        )


def verify_review(
    packet: Mapping[str, Any],
    fresh: Mapping[str, Any] | None,
    *,
    cannot_review: str = "",
    digests_now: Mapping[str, str | None],
    signoffs_shown: Sequence[Mapping[str, Any]],
    signoffs_stored: Sequence[tuple[Mapping[str, Any], EvidenceStatus]],
    generated_at: str,
    version_now: str,
) -> Verification:
    """The packet's review (`packet`) against the review built now (`fresh`, review_json)."""
    return Verification(
        suite=str(packet["suite"]),
        release=str(packet["release"]),
        base=packet.get("base"),
        generated_at=generated_at,
        verdict_then=str(packet["verdict"]),
        verdict_now=None if fresh is None else str(fresh["verdict"]),
        cannot_review=cannot_review,
        moved=() if fresh is None else moved(packet, fresh),
        evidence=check_evidence(
            packet["evidence"], None if fresh is None else fresh["evidence"], digests_now
        ),
        signoffs=check_signoffs(signoffs_shown, signoffs_stored, generated_at),
        version_then=str(packet["relidash_version"]),
        version_now=version_now,
    )


def as_written(fresh: Review, packet: Mapping[str, Any], suite_releases: Any) -> Review:
    """The fresh review with what the packet names of its writing rather than of its data:
    the relidash that wrote it, the policy file's name then (its digest is checked), and
    the suite's releases then, when those are still releases of the suite, in order (a
    release added since is not in the packet's chart or list)."""
    releases = fresh.releases
    if isinstance(suite_releases, list) and all(isinstance(r, str) for r in suite_releases):
        now = iter(fresh.releases)
        if all(r in now for r in suite_releases):  # a subsequence of the releases now
            releases = tuple(suite_releases)
    policy = replace(fresh.policy, source=str(packet["policy"]["source"]))
    return replace(
        fresh, relidash_version=str(packet["relidash_version"]), policy=policy, releases=releases
    )
