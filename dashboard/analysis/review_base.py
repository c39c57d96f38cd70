"""Which release a review compares against: by default the latest earlier release whose
Δ at the review's k can be computed, and a note when the chosen base is not that one
(none could be computed) or is newer than the release itself.

A Δ at k needs at least one case evaluated in both releases (matched as `compare` matches,
analysis/matching.py) with at least k trials in each; the release just before may have
run fewer trials, or share no case at all, and a review against it would show only
UNKNOWN.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd

from dashboard.analysis.matching import paired_counts
from dashboard.data.catalog.queries import fetch_rows


@dataclass(frozen=True)
class BaseChoice:
    release: str | None  # None: the suite's first release, nothing to compare with
    note: str  # why this base, when it is not simply the release before; else ""


def delta_computable(base: list[dict[str, Any]], head: list[dict[str, Any]], k: int) -> bool:
    """True when the two releases' cases give a Δ at k: a matched evaluated pair, every
    pair with at least k trials on both sides (deltas.counts_delta's rule)."""
    n_base, _, n_head, _ = paired_counts(base, head)
    return bool(n_base.size) and int(min(n_base.min(), n_head.min())) >= k


def default_base(
    con: duckdb.DuckDBPyConnection,
    releases: pd.DataFrame,
    release: str,
    k: int,
    count_agent_errors: bool = False,
) -> BaseChoice:
    """The latest release before `release` (in release order, `releases` as
    analysis.releases.suite_releases gives them) with a computable Δ at k; the release
    just before, with a note, when none has one."""
    names = [str(r) for r in releases["release"]]
    position = names.index(release)
    if position == 0:
        return BaseChoice(None, "")
    earlier = releases.iloc[:position]
    ids = [int(r) for r in earlier["report_id"]] + [int(releases.iloc[position]["report_id"])]
    by_report: dict[int, list[dict[str, Any]]] = {}
    for case in fetch_rows(
        con,
        "read/suite_cases",
        suite=str(releases.iloc[position]["suite"]),
        count_agent_errors=count_agent_errors,
        report_ids=ids,
    ):
        by_report.setdefault(int(case["report_id"]), []).append(case)
    head = by_report.get(ids[-1], [])
    skipped: list[str] = []
    for rel in reversed(list(earlier.itertuples(index=False))):
        if delta_computable(by_report.get(int(rel.report_id), []), head, k):
            note = (
                f"Compared with {rel.release}, the latest earlier release with a computable Δ "
                f"at k={k} ({', '.join(skipped)} {'has' if len(skipped) == 1 else 'have'} "
                f"no case evaluated in both with {k} trials on each side)."
                if skipped
                else ""
            )
            return BaseChoice(str(rel.release), note)
        skipped.append(str(rel.release))
    return BaseChoice(
        names[position - 1],
        f"No earlier release gives a Δ at k={k}: compared with {names[position - 1]}, "
        "the release before, and every Δ is UNKNOWN.",
    )


def newer_base_note(releases: pd.DataFrame, release: str, base: str | None) -> str:
    """A warning when `base` comes after `release` in release order, else ""."""
    names = [str(r) for r in releases["release"]]
    if base is None or base not in names or release not in names:
        return ""
    if names.index(base) <= names.index(release):
        return ""
    return (
        f"The base {base} is newer than the release {release}: every Δ reads backwards "
        f"(what {release} would change from {base})."
    )
