"""Slices: cases grouped by a tag (`dim:value`), and pass^k per slice and release.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from collections.abc import Iterable

import duckdb
import pandas as pd

from dashboard.analysis.estimates import INTERVAL_NOTE, estimate, evaluated_arrays
from dashboard.analysis.releases import UnknownName, shown_cases
from dashboard.stats import METRIC_PASS_HAT_K


def split_tag(tag: str) -> tuple[str, str]:
    if ":" in tag:
        dim, value = tag.split(":", 1)
        return dim, value
    return "tag", tag


def tag_dimensions(tags: Iterable[str]) -> list[str]:
    """The dimensions of a suite's tags (`risk_tier` of `risk_tier:high`), sorted."""
    return sorted({split_tag(str(t))[0] for t in tags})


def slice_membership(cases: pd.DataFrame, dim: str) -> pd.Series:
    """The slice value of each case for a dimension ('(untagged)' when it has none)."""
    values = []
    for tags in cases["tags"]:
        found = [
            split_tag(str(t))[1]
            for t in (tags if tags is not None else [])
            if split_tag(str(t))[0] == dim
        ]
        values.append(found[0] if found else "(untagged)")
    return pd.Series(values, index=cases.index, dtype=object)


def in_slice(cases: pd.DataFrame, tag: str | None) -> pd.Series:
    """Whether each case carries the tag (`dim:value`, or a plain tag)."""
    if not tag:
        return pd.Series(True, index=cases.index)
    return pd.Series(
        [tag in [str(t) for t in (tags if tags is not None else [])] for tags in cases["tags"]],
        index=cases.index,
    )


def suite_tags(cases: pd.DataFrame) -> set[str]:
    return {str(t) for tags in cases["tags"] for t in (tags if tags is not None else [])}


def check_slices(cases: pd.DataFrame, suite: str, slices: Iterable[str | None]) -> None:
    """UnknownName for a slice tag that no case of the suite carries in any release (a typo)."""
    known = suite_tags(cases)
    for tag in slices:
        if tag and tag not in known:
            shown = ", ".join(sorted(known)) or "none"
            raise UnknownName(f"no case of suite {suite!r} carries the tag {tag!r} (tags: {shown})")


def slice_metrics(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    dim: str,
    k: int,
    count_agent_errors: bool = False,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """pass^k with CI per (slice value, release) of a suite, plus per-slice counts."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors, window)
    cases = cases.assign(slice=slice_membership(cases, dim))
    rows = []
    for (value, report_id), group in cases.groupby(["slice", "report_id"], sort=False):
        n, c = evaluated_arrays(group)
        rel = releases[releases["report_id"] == report_id].iloc[0]
        r = estimate(n, c, k, METRIC_PASS_HAT_K, str(rel["harness"]))
        rows.append(
            {
                "slice": value,
                "release": rel["release"],
                "release_rank": int(rel["release_rank"]),
                "k": k,
                "cases_total": len(group),
                "cases_evaluated": r.n_cases,
                "pass_hat_k": r.value,
                "ci_low": r.ci_low,
                "ci_high": r.ci_high,
                "method": r.method,
                "interval": INTERVAL_NOTE[r.method],
                "unknown_reason": r.unknown_reason,
            }
        )
    return (
        pd.DataFrame(rows).sort_values(["slice", "release_rank"]).reset_index(drop=True)
        if rows
        else pd.DataFrame()
    )
