"""`relidash verify` as a person reads it: whether the packet holds, the verdict held or
flipped, what moved (by metric, slice and rule, in percentages and points), what in the
packet itself was changed, which sign-offs it touches, and what to do. File paths and
digests only when asked (`verbose`).

Formatting only: every finding is dashboard/analysis/verifying.py's or
dashboard/render/packet_diff.py's. Must not: decide whether a packet holds, or do I/O.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Final

from dashboard.analysis.verifying import Moved, Verification
from dashboard.render.formatting import delta_text, envelope_text, one_line, pct, with_ci
from dashboard.render.packet_diff import VisibleDifference

# regions drawn in part from the suite's other releases' files, which are not evidence
_OTHER_FILES_REGIONS: Final = frozenset(("Headline section", "Lottery cases section"))
SHOWN: Final = 12  # moved numbers and visible differences listed before "… and N more"
_EDIT_WORDS: Final = {
    "no evidence": "it names no evidence file, so nothing binds its numbers to any report",
    "other evidence": "its evidence list is not the files of the reviewed release(s)",
    "unrecorded sign-off": "it shows a sign-off that is not a record in the reviews directory",
    "sign-off left out": "it leaves out a sign-off recorded before it was written",
    "numbers": "its numbers are not the ones relidash computes from the same report bytes",
    "visible": "what it shows is not what relidash renders from its data",
}


def _signoff(record: Mapping[str, Any]) -> str:
    who = one_line(str(record.get("by", "?")), 40)
    verified = "identity verified" if record.get("identity_verified") else "name typed"
    return (
        f"{one_line(str(record.get('decision', '?')), 20)} by {who} ({verified}), "
        f"{one_line(str(record.get('time', '?')), 25)}"
    )


def _value(m: Moved, side: Any) -> str:
    if side is None:
        return "absent"
    if m.kind == "metric":
        return with_ci(side if isinstance(side, dict) else None)
    if m.kind in ("delta", "slice") and isinstance(side, dict):
        return delta_text(
            side.get("delta"), side.get("ci_low"), side.get("ci_high"),
            int(side.get("n_pairs", side.get("pairs")) or 0), side.get("unknown_reason") or "",
        )  # fmt: skip
    if m.kind == "rule" and isinstance(side, dict):
        value = side.get("ci_low") if side.get("uses") == "ci_low" else side.get("value")
        return f"{side.get('verdict')} ({pct(value)})"
    if m.kind == "envelope" and isinstance(side, list) and len(side) == 2:
        return envelope_text(side[0], str(side[1]))
    if m.kind == "policy":
        return f"policy {str(side)[:12]}…"
    return one_line(str(side), 60)


def _moved_line(m: Moved) -> str:
    name = {
        "slice": f'slice "{one_line(m.name, 40)}" Δ',
        "rule": f'rule "{one_line(m.name, 60)}"',
        "delta": f"paired {m.name}",
        "policy": "the policy file's bytes",
    }.get(m.kind, one_line(m.name, 60))
    return f"    {name}: {_value(m, m.old)} → {_value(m, m.new)}"


def _more(items: Sequence[str], shown: int = SHOWN) -> list[str]:
    lines = list(items[:shown])
    if len(items) > shown:
        lines.append(f"    … and {len(items) - shown} more")
    return lines


_DIGEST: Final = re.compile(r"\b[0-9a-f]{64}\b")


def _difference_lines(
    differences: Sequence[VisibleDifference], paths: Sequence[str] = (), verbose: bool = True
) -> list[str]:
    """One line per changed text; without `verbose`, a change naming a file path or a
    digest becomes one line for its region saying so."""

    def raw(text: str) -> bool:
        return bool(_DIGEST.search(text)) or any(p and p in text for p in paths)

    lines = []
    for d in differences:
        if d.markup_only:
            lines.append(f"    {d.region}: same text, other markup (a tag, attribute or style)")
        hidden = False
        for shown, rendered in d.changes:
            if not verbose and (raw(shown) or raw(rendered)):
                hidden = True
            elif shown and rendered:
                lines.append(f'    {d.region}: shows "{shown}" where relidash renders "{rendered}"')
            elif shown:
                lines.append(f'    {d.region}: shows "{shown}", which relidash does not render')
            else:
                lines.append(f'    {d.region}: leaves out "{rendered}"')
        if hidden:
            lines.append(f"    {d.region}: other file paths or digests (--verbose shows them)")
    return lines


def verify_lines(
    v: Verification,
    differences: Sequence[VisibleDifference],
    *,
    source: str,
    reviews_dir: str,
    verbose: bool = False,
    raw_moved: Sequence[str] = (),
) -> list[str]:
    """The report printed on stdout."""
    against = f" against {v.base}" if v.base else " (first release)"
    lines = [f"{v.suite} {v.release}{against}; packet written {v.generated_at}"]
    holds = v.holds(bool(differences))
    if v.verdict_now is None:
        lines.append(
            f"Verdict: {v.verdict_then} when written; it cannot be recomputed now: {v.cannot_review}"
        )
    elif v.verdict_flipped and "numbers" in v.edits(bool(differences)):
        lines.append(
            f"Verdict: the packet says {v.verdict_then}; relidash computes {v.verdict_now} "
            "from the same report bytes."
        )
    elif v.verdict_flipped:
        lines.append(f"Verdict: FLIPPED, {v.verdict_then} when written, {v.verdict_now} now.")
    else:
        lines.append(f"Verdict: {v.verdict_now}, as when written (held).")

    if v.evidence.changed:
        roles = ", ".join(f"the {c.get('role') or 'other'}'s" for c in v.evidence.changed)
        lines.append(
            f"The reports changed since: {len(v.evidence.changed)} of the packet's "
            f"{len(v.evidence.shown)} report files ({roles}) now hold other bytes or are gone."
        )
    if v.policy_changed:
        lines.append("The policy changed since: its file now holds other bytes.")
    edits = v.edits(bool(differences))
    if edits:
        lines.append("The packet was changed after relidash wrote it:")
        lines += [f"    {_EDIT_WORDS[e]}" for e in edits]
        if edits == ["visible"] and {d.region for d in differences} <= _OTHER_FILES_REGIONS:
            lines.append(
                "    (or a report of another release changed: the chart and the lottery "
                "streaks draw on them as well)"
            )
    if v.other_program and not holds:
        lines.append(
            f"It was written by relidash {v.version_then}; this is relidash {v.version_now}, "
            "whose numbers or layout may differ."
        )

    if v.moved:
        lines.append(f"Moved numbers ({len(v.moved)}), the packet's → now:")
        lines += _more([_moved_line(m) for m in v.moved])
    if differences:
        explained = v.reports_changed or v.policy_changed or v.moved
        if explained and not verbose:
            lines.append(
                f"The visible packet differs from what relidash renders now in "
                f"{len(differences)} place(s), as the moved numbers make it (--verbose lists them)."
            )
        else:
            lines.append("What the packet shows, against what relidash renders from its data:")
            paths = [str(x.get("path")) for x in v.evidence.shown] + list(v.evidence.left_out)
            lines += _more(_difference_lines(differences, paths, verbose))

    e = v.evidence
    parts = []
    if e.not_theirs:
        parts.append(
            f"{len(e.not_theirs)} of its files are not the reviewed release's or its base's"
        )
    if e.left_out:
        parts.append(f"{len(e.left_out)} of the reviewed release's files are not listed")
    if e.misdescribed:
        parts.append(f"{len(e.misdescribed)} are described otherwise (role, size or format)")
    if parts:
        lines.append(f"Evidence: {'; '.join(parts)}.")

    s = v.signoffs
    for record in s.unrecorded:
        lines.append(f"Sign-off shown but not recorded: {_signoff(record)}.")
    for record in s.left_out:
        lines.append(f"Sign-off recorded but left out of the packet: {_signoff(record)}.")
    if s.touched:
        lines.append("Sign-offs this touches (made on report bytes that have changed since):")
        lines += [f"    {_signoff(r)}" for r in s.touched]
    if s.later:
        lines.append(f"{len(s.later)} sign-off(s) recorded after the packet was written.")
    if holds:
        lines.append(
            f"Holds: the verdict, every number, the {len(e.shown)} evidence file(s) and the "
            f"{len(s.shown)} sign-off(s) shown match the reports and the reviews directory."
        )
    else:
        lines += _todo(v, edits, source)
    if verbose:
        lines += _verbose_lines(v, reviews_dir)
        lines += [f"moved: {line}" for line in raw_moved]
    return lines


def _todo(v: Verification, edits: Sequence[str], source: str) -> list[str]:
    base = f" --base {shlex.quote(v.base)}" if v.base else ""
    again = (
        f"relidash review {shlex.quote(source)} --suite {shlex.quote(v.suite)} "
        f"--release {shlex.quote(v.release)}{base} --out NEW.html"
    )
    lines = ["What to do:"]
    if edits:
        lines.append(
            "    Do not rely on this file. Write a fresh packet from the reports and read that: "
            + again
        )
    if v.reports_changed or v.policy_changed:
        lines.append(
            "    Review the release again on the reports as they are now ("
            + again
            + "), then record a new decision with relidash signoff; the earlier sign-offs "
            "stay as records of what was decided on the old bytes."
        )
    if v.signoffs.unrecorded or v.signoffs.left_out:
        lines.append(
            "    If this release's sign-offs are kept in another reviews directory, "
            "verify again with --reviews RDIR."
        )
    if v.other_program:
        lines.append(f"    To check what it shows, verify it with relidash {v.version_then}.")
    if len(lines) == 1:
        lines.append(f"    Write a fresh packet: {again}")
    return lines


def _verbose_lines(v: Verification, reviews_dir: str) -> list[str]:
    lines = [f"reviews directory: {reviews_dir}"]
    for entry in v.evidence.shown:
        lines.append(f"evidence: {entry.get('role')}: {entry.get('path')}: {entry.get('sha256')}")
    for c in v.evidence.changed:
        lines.append(f"changed: {c['path']}: {c['old']} -> {c['new'] or 'missing'}")
    for path in v.evidence.not_theirs:
        lines.append(f"not the reviewed release's file: {path}")
    for path in v.evidence.left_out:
        lines.append(f"the reviewed release's file, not listed: {path}")
    return lines


def conclusion(v: Verification, differences: Sequence[VisibleDifference]) -> str:
    """The one line printed on stderr last."""
    if v.holds(bool(differences)):
        return "relidash verify: the packet holds"
    causes = []
    if v.reports_changed:
        causes.append("the reports changed")
    if v.policy_changed:
        causes.append("the policy changed")
    if v.edits(bool(differences)):
        causes.append("the packet was changed")
    if not causes:
        causes.append(f"relidash {v.version_now} computes or renders it otherwise")
    return f"relidash verify: the packet does NOT hold: {'; '.join(causes)}"
