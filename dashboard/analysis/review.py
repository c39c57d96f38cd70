"""A release review: everything a ship / no-ship meeting decides on, for one release of
one suite against a base, and the machine-readable form a sign-off and a review packet
bind to their evidence.

One `build_review` serves the Review page, `relidash review`, `relidash signoff` and
`relidash verify`, so the numbers signed are the numbers shown. Its parts come from the
subjects that own them: the verdict from gating (rules from analysis/policy.py), the
headline from the release table, the paired Δ and the ledger from comparing, the lottery
list from lottery, the evidence from the catalog's record of each file's bytes.

Must not: import Streamlit or Altair, hold SQL text, format numbers for display, or
write anything (dashboard/data/records/signoffs.py stores sign-offs).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import duckdb
import pandas as pd

from dashboard.analysis.comparing import Comparison, compare_cases, compare_releases
from dashboard.analysis.deltas import MetricDelta
from dashboard.analysis.estimates import (
    ENVELOPE_MEANING,
    number_or_none,
    policy_label,
)
from dashboard.analysis.gating import GateReport, run_gate
from dashboard.analysis.lottery import lottery_table
from dashboard.analysis.policy import Policy, resolve_policy
from dashboard.analysis.releases import (
    LATEST,
    UnknownName,
    find_release,
    find_suite_releases,
    release_table,
)
from dashboard.analysis.review_base import default_base, newer_base_note
from dashboard.analysis.slices import suite_tags
from dashboard.analysis.suite_k import suite_k
from dashboard.analysis.summary import load_problems, report_overview
from dashboard.data.catalog import relidash_version
from dashboard.data.catalog.queries import fetch_rows, run_query
from dashboard.data.load.freshness import meta_value
from dashboard.data.records.signoffs import DECISIONS
from dashboard.data.sources.digests import directory_stat, file_digests
from dashboard.data.sources.reports import ReportSource, as_source
from dashboard.stats.covering import paired_verdict_p_value
from dashboard.stats.paired import holm_adjusted

REVIEW_SCHEMA: Final = "relidash.review/v1"
SIGNOFF_SCHEMA: Final = "relidash.signoff/v1"
LOTTERY_SHOWN: Final = 10
# evidence status of a sign-off, computed now against the reports directory
UNCHANGED: Final = "unchanged"
CHANGED: Final = "changed"
MISSING: Final = "missing"
NOT_CHECKED: Final = "not checked"  # listed without the reports to hash
APPROVED: Final = "approved"  # the decision whose evidence changing is flagged
NUMBER_TOLERANCE: Final = 1e-9


@dataclass(frozen=True)
class EvidenceFile:
    """One report file the review's numbers came from, as the load read it."""

    role: str  # "release" | "base"
    path: str  # relative to the reports directory
    bytes: int
    sha256: str
    format: str
    upgraded: bool


@dataclass(frozen=True)
class SliceDelta:
    """Δpass^k of one slice (a case tag) over the cases both releases evaluated."""

    tag: str
    pairs: int
    base: float | None
    head: float | None
    delta: float | None
    ci_low: float | None
    ci_high: float | None
    unknown_reason: str
    p_value: float | None = None  # of "no change": max(paired bootstrap's, t-test's)
    p_holm: float | None = None  # Holm-adjusted over the slices with a known Δ
    flag: str = ""  # SLICE_REGRESSION | SLICE_IMPROVEMENT after the adjustment, else ""


SLICE_REGRESSION: Final = "regression"
SLICE_IMPROVEMENT: Final = "improvement"
FAMILY_LEVEL: Final = 0.05  # family-wise error rate over the slices shown


@dataclass(frozen=True)
class Review:
    suite: str
    release: str
    base: str | None
    k: int
    k_max: int
    count_agent_errors: bool
    policy: Policy
    gate: GateReport
    headline: Mapping[str, Any]  # the release's row of releases.release_table at k
    comparison: Comparison | None
    slices: tuple[SliceDelta, ...]
    lottery: pd.DataFrame  # lottery.lottery_table, the top LOTTERY_SHOWN
    problems: tuple[tuple[str, str, str], ...]  # (file, scope, reason) of the two files
    evidence: tuple[EvidenceFile, ...]
    relidash_version: str
    releases: tuple[str, ...]  # every release of the suite, in order
    base_note: str = ""  # why this base (review_base), or that it is newer than the release
    base_newer: bool = False  # the base comes after the release in release order

    @property
    def verdict(self) -> str:
        """The gate's verdict: FAILED, UNKNOWN, UNDECIDED or PASSED (GateReport.verdict)."""
        return self.gate.verdict

    @property
    def policy_text(self) -> str:
        return policy_label(self.count_agent_errors)


def build_review(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    release: str = LATEST,
    base: str | None = None,
    k: int | None = None,
    *,
    policy_file: Path | None = None,
    reports_dir: Path | ReportSource | None = None,
    count_agent_errors: bool = False,
) -> Review:
    """The review of `release` (default the latest) against `base` (default the latest
    earlier release with a computable Δ at k, review_base.default_base; none for a suite's
    first release), at k (default the suite's k, analysis/suite_k.py).

    UnknownName for a suite or release the catalog lacks; PolicyError for an unusable
    policy; ValueError for k outside 1..k_max.
    """
    overview = report_overview(con)
    releases = find_suite_releases(overview, suite)
    head_row = find_release(releases, release)
    policy = resolve_policy(suite, policy_file, reports_dir)
    runs = head_row["runs_max"]
    k_max = max(8, int(runs) if not pd.isna(runs) else 1)
    # the suite's k: the k every page shows the suite at
    k = k if k is not None else suite_k(con, overview, suite, count_agent_errors, policy).k
    if not 1 <= k <= k_max:
        raise ValueError(f"k must be in 1..{k_max} for release {head_row['release']}, got {k}")
    if base is None:
        choice = default_base(con, releases, str(head_row["release"]), k, count_agent_errors)
        base_row = None if choice.release is None else find_release(releases, choice.release)
        base_note = choice.note
    else:
        base_row = find_release(releases, base)
        if str(base_row["release"]) == str(head_row["release"]):
            raise UnknownName(f"the base and the release are both {base!r}; pick another base")
        base_note = newer_base_note(releases, str(head_row["release"]), str(base_row["release"]))

    name = str(head_row["release"])
    gate = run_gate(con, suite, name, policy.rules, count_agent_errors=count_agent_errors)
    table = release_table(con, overview, suite, k, count_agent_errors)
    headline = table[table["release"] == name].iloc[0].to_dict()
    comparison = None
    slices: tuple[SliceDelta, ...] = ()
    if base_row is not None:
        comparison = compare_releases(
            con, suite, str(base_row["release"]), name, k=k, count_agent_errors=count_agent_errors
        )
        slices = _slice_deltas(con, suite, base_row, head_row, k, count_agent_errors)
    lottery = lottery_table(
        con, overview, suite, int(head_row["report_id"]), max(k, 2), count_agent_errors
    ).head(LOTTERY_SHOWN)
    rows = [head_row] if base_row is None else [head_row, base_row]
    files = {str(r["file"]) for r in rows}
    problems = load_problems(con)
    return Review(
        suite=suite,
        release=name,
        base=None if base_row is None else str(base_row["release"]),
        k=k,
        k_max=k_max,
        count_agent_errors=count_agent_errors,
        policy=policy,
        gate=gate,
        headline=headline,
        comparison=comparison,
        slices=slices,
        lottery=lottery,
        problems=tuple(
            (str(p.file), str(p.scope), str(p.reason))
            for p in problems[problems["file"].isin(files)].itertuples(index=False)
        ),
        evidence=_evidence(con, rows, reports_dir),
        relidash_version=relidash_version(),
        releases=tuple(str(r) for r in releases["release"]),
        base_note=base_note,
        base_newer=base_row is not None
        and int(base_row["release_rank"]) > int(head_row["release_rank"]),
    )


class EvidenceChanged(ValueError):
    """An evidence file's bytes are no longer the ones the catalog was loaded from."""


def _evidence(
    con: duckdb.DuckDBPyConnection,
    rows: Sequence[Any],
    reports_dir: Path | ReportSource | None,
) -> tuple[EvidenceFile, ...]:
    ids = [int(r["report_id"]) for r in rows]
    found = {r["report_id"]: r for r in fetch_rows(con, "read/report_evidence", report_ids=ids)}
    source = as_source(
        reports_dir if reports_dir is not None else Path(meta_value(con, "reports_dir") or ".")
    )
    return tuple(
        EvidenceFile(
            role=role,
            path=str(found[rid]["file"]),
            bytes=int(found[rid]["size"]),
            sha256=evidence_sha256(source, str(found[rid]["file"]), str(found[rid]["digest"])),
            format=str(found[rid]["format"]),
            upgraded=bool(found[rid]["upgraded"]),
        )
        for role, rid in zip(("release", "base"), ids, strict=False)
    )


def evidence_sha256(source: ReportSource, path: str, loaded: str) -> str:
    """SHA-256 of the report file `path` as the catalog loaded it (`loaded`: its digest
    then, dashboard/data/load/facts.py file_facts). The catalog keeps only a fast digest; the
    one a review publishes is computed here, once per version of the file.

    EvidenceChanged when the file is gone or its bytes changed since the load.
    """
    try:
        target = source.open_file(path)
        stat = target.stat()
    except FileNotFoundError as exc:
        raise EvidenceChanged(f"{path} is gone since the catalog was loaded: load again") from exc
    # a directory report (a Harbor job) by its files' stats, which a rewrite moves
    key = (
        directory_stat(str(target))
        if target.is_dir()
        else (stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
    )
    return _sha256_as_loaded(str(target), key, loaded, path)


@lru_cache(maxsize=256)
def _sha256_as_loaded(abspath: str, stat: tuple[int, int, int], loaded: str, path: str) -> str:
    """Keyed by the file's size, mtime and ctime as well: a rewritten file is read again,
    even one whose writer kept its size and set its mtime back.

    The SHA-256 and the fast digest come from one read, and the fast digest must be the
    one the catalog's numbers were parsed with: a catalog whose load could not tell which
    bytes it parsed keeps no digest (dashboard/data/load/ingest.py), and binds nothing."""
    fast, sha256 = file_digests(abspath)
    if not loaded or fast != loaded:
        raise EvidenceChanged(f"{path} changed since the catalog was loaded: load again")
    return sha256


def _slice_deltas(
    con: duckdb.DuckDBPyConnection,
    suite: str,
    base_row: Any,
    head_row: Any,
    k: int,
    count_agent_errors: bool,
) -> tuple[SliceDelta, ...]:
    """Δpass^k per case tag carried in either release, matched as `compare` matches."""
    cases = run_query(
        con,
        "read/suite_cases",
        suite=suite,
        count_agent_errors=count_agent_errors,
        report_ids=[int(base_row["report_id"]), int(head_row["report_id"])],
    )
    base_cases = cases[cases["report_id"] == base_row["report_id"]]
    head_cases = cases[cases["report_id"] == head_row["report_id"]]
    both = pd.concat([base_cases, head_cases])
    tags = sorted(suite_tags(both))
    out = []
    for tag in tags:
        _, _, deltas, matched, _, _ = compare_cases(
            base_cases, head_cases, k, tag, str(head_row["harness"])
        )
        out.append(slice_delta(tag, deltas[2]))
    return holm_flagged(out)


def slice_delta(tag: str, hat: MetricDelta) -> SliceDelta:
    """One slice's row from its Δpass^k, unflagged. Its p-value is the one a verdict reads
    (stats/covering.paired_verdict_p_value): the paired bootstrap's alone is too small too
    often for Holm's adjustment, which reads it far in the tail."""
    d = hat.delta
    return SliceDelta(
        tag=tag,
        pairs=d.n_pairs if d else 0,
        base=hat.base,
        head=hat.head,
        delta=d.delta if d else None,
        ci_low=d.ci_low if d else None,
        ci_high=d.ci_high if d else None,
        unknown_reason=hat.unknown_reason,
        p_value=paired_verdict_p_value(d) if d else None,
    )


def holm_flagged(slices: Sequence[SliceDelta]) -> tuple[SliceDelta, ...]:
    """The slices with Holm-adjusted p-values over those with a known Δ, and a flag
    where the adjusted value is below FAMILY_LEVEL: a meeting that reads one flagged slice
    among many reads a change, not the noise of testing many slices at 95% each."""
    known = [i for i, s in enumerate(slices) if s.p_value is not None]
    adjusted = holm_adjusted([slices[i].p_value for i in known]) if known else []
    out = list(slices)
    for i, p in zip(known, adjusted, strict=True):
        s = out[i]
        flag = ""
        if p < FAMILY_LEVEL and s.delta is not None and s.delta != 0:
            flag = SLICE_REGRESSION if s.delta < 0 else SLICE_IMPROVEMENT
        out[i] = dataclasses.replace(s, p_holm=float(p), flag=flag)
    return tuple(out)


# ---- the machine-readable review ---------------------------------------------------------


def _cell(row: Mapping[str, Any], column: str) -> dict[str, Any]:
    return {
        "value": number_or_none(row[column]),
        "ci_low": number_or_none(row[f"{column}_ci_low"]),
        "ci_high": number_or_none(row[f"{column}_ci_high"]),
        "unknown_reason": row[f"{column}_unknown"] or None,
    }


def review_json(review: Review) -> dict[str, Any]:
    """The review's numbers and digests: what a sign-off binds and a packet carries.

    Plain JSON values only (no NaN): `verify` recomputes this from the reports directory
    and compares it key by key.
    """
    h = review.headline
    envelope = number_or_none(h["envelope_points"])
    doc: dict[str, Any] = {
        "schema": REVIEW_SCHEMA,
        "suite": review.suite,
        "release": review.release,
        "base": review.base,
        "k": review.k,
        "count_agent_errors": review.count_agent_errors,
        "error_policy": review.policy_text,
        "relidash_version": review.relidash_version,
        "policy": {
            "source": review.policy.source,
            "sha256": review.policy.sha256,
        },
        "verdict": review.verdict,
        "rules": [
            {
                "rule": r.rule.label(),
                "verdict": r.verdict.verdict,
                "metric": r.verdict.metric,
                "k": r.verdict.k,
                "threshold": r.verdict.threshold,
                "uses": r.verdict.uses,
                "value": r.verdict.value,
                "ci_low": r.verdict.ci_low,
                "ci_high": r.verdict.ci_high,
                "n_cases": r.verdict.n_cases,
            }
            for r in review.gate.results
        ],
        "headline": {
            "pass_at_1": _cell(h, "pass_at_1"),
            "pass_at_k": _cell(h, "pass_at_k"),
            "pass_hat_k": _cell(h, "pass_hat_k"),
            "cases": {
                "evaluated": int(h["cases_evaluated"]),
                "errored": int(h["cases_errored"]),
                "skipped": int(h["cases_skipped"]),
            },
            "envelope_points": envelope,
            "envelope_reading": h["envelope_reading"],
        },
        "delta": None,
        "ledger": None,
        "slices": [],
        "evidence": [
            {
                "role": e.role,
                "path": e.path,
                "bytes": e.bytes,
                "sha256": e.sha256,
                "format": e.format,
                "upgraded": e.upgraded,
            }
            for e in review.evidence
        ],
    }
    if review.comparison is not None:
        c = review.comparison
        doc["delta"] = {d.key: d.as_json() for d in c.deltas}
        doc["ledger"] = {
            **{bucket: len(entries) for bucket, entries in c.buckets().items()},
            "added": len(c.added),
            "removed": len(c.removed),
        }
        doc["slices"] = [
            {
                "tag": s.tag,
                "pairs": s.pairs,
                "delta": s.delta,
                "ci_low": s.ci_low,
                "ci_high": s.ci_high,
                "unknown_reason": s.unknown_reason or None,
                "p_value": s.p_value,
                "p_holm": s.p_holm,
                "flag": s.flag or None,
            }
            for s in review.slices
        ]
    return doc


def envelope_meaning(reading: str) -> str:
    return ENVELOPE_MEANING.get(reading, "")


# ---- sign-offs ---------------------------------------------------------------------------


def utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def signoff_record(
    review: Review,
    *,
    decision: str,
    by: str,
    comment: str = "",
    identity: Mapping[str, Any] | None = None,
    time: str | None = None,
) -> dict[str, Any]:
    """The record a sign-off stores: who decided what, when, on which bytes and numbers.

    `identity` is the signed-in user's verified claims (issuer, subject, email); without
    it the name was typed and the record says it is unverified. ValueError for a bad
    decision or an empty name.
    """
    if decision not in DECISIONS:
        raise ValueError(f"decision must be one of {', '.join(DECISIONS)}, got {decision!r}")
    if not by.strip():
        raise ValueError("a sign-off needs the reviewer's name")
    numbers = review_json(review)
    return {
        "schema": SIGNOFF_SCHEMA,
        "suite": review.suite,
        "release": review.release,
        "base": review.base,
        "decision": decision,
        "by": by.strip(),
        "identity_verified": identity is not None,
        "identity": dict(identity) if identity is not None else None,
        "comment": comment,
        "time": time or utc_now(),
        "policy_sha256": review.policy.sha256,
        "evidence": [{"path": e["path"], "sha256": e["sha256"]} for e in numbers["evidence"]],
        "review": numbers,
    }


@dataclass(frozen=True)
class EvidenceStatus:
    status: str  # UNCHANGED | CHANGED | MISSING
    changed_files: tuple[dict[str, str | None], ...]  # {path, old, new}; new None if missing


def evidence_status(
    evidence: Sequence[Mapping[str, Any]], digests_now: Mapping[str, str | None]
) -> EvidenceStatus:
    """Whether every file a record names still has the digest it had: `digests_now` maps
    each path to the SHA-256 of its bytes now (None when the file is gone)."""
    changed = []
    missing = False
    for item in evidence:
        path, old = str(item["path"]), str(item["sha256"])
        new = digests_now.get(path)
        if new != old:
            changed.append({"path": path, "old": old, "new": new})
            missing = missing or new is None
    if not changed:
        return EvidenceStatus(UNCHANGED, ())
    return EvidenceStatus(MISSING if missing else CHANGED, tuple(changed))


def changed_after_approval(
    records: Sequence[Mapping[str, Any]], digests_now: Mapping[str, str | None]
) -> dict[tuple[str, str], EvidenceStatus]:
    """(suite, release) of every approved release whose evidence no longer matches."""
    flagged: dict[tuple[str, str], EvidenceStatus] = {}
    for record in records:
        if record.get("decision") != APPROVED:
            continue
        status = evidence_status(record.get("evidence") or [], digests_now)
        if status.status != UNCHANGED:
            flagged[(str(record["suite"]), str(record["release"]))] = status
    return flagged


# ---- verifying a packet --------------------------------------------------------------------


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A JSON document as {dotted.path: leaf}, for a key-by-key comparison."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, list):
        out = {}
        for i, item in enumerate(value):
            out.update(flatten(item, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=NUMBER_TOLERANCE)
    return bool(a == b)


def differs(a: Any, b: Any) -> bool:
    """Whether two JSON values differ beyond float noise, leaf by leaf."""
    old, new = flatten(a), flatten(b)
    return set(old) != set(new) or any(not _same(old[key], new[key]) for key in old)


# keys of review_json that describe the run, not the evidence or its numbers: the policy
# is checked by its digest, not by the path it was read from (a moved directory)
UNCHECKED_KEYS: Final = ("relidash_version", "policy.source")


def moved_numbers(packet: Mapping[str, Any], fresh: Mapping[str, Any]) -> list[str]:
    """Every number or verdict of a packet's review that differs from a fresh review of
    the same release, as 'key: packet -> now' lines (evidence digests are checked apart)."""
    old = {k: v for k, v in flatten(packet).items() if not k.startswith("evidence")}
    new = {k: v for k, v in flatten(fresh).items() if not k.startswith("evidence")}
    lines = []
    for key in sorted(set(old) | set(new)):
        if key in UNCHECKED_KEYS:
            continue
        a, b = old.get(key, "(absent)"), new.get(key, "(absent)")
        if not _same(a, b):
            lines.append(f"{key}: {a} -> {b}")
    return lines
