"""Releases of a suite: which report stands for each release, the release table the
Releases page and the review headline show, and one release's pass-k curve.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from typing import Any, Final

import duckdb
import numpy as np
import pandas as pd

from dashboard.analysis.deltas import DELTA_KEYS, counts_delta
from dashboard.analysis.estimates import (
    ERROR_STATUSES,
    INTERVAL_NOTE,
    envelope_reading,
    estimate,
    evaluated_arrays,
    is_missing,
    pass_k_results,
)
from dashboard.analysis.matching import paired_counts
from dashboard.analysis.summary import latest_per_release, stored_pass_k
from dashboard.data.catalog.queries import fetch_rows, run_query
from dashboard.data.formats import MULTIVON
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K, PassKResult

LATEST: Final = "latest"


class UnknownName(LookupError):
    """A suite, release or slice that the catalog does not hold."""


def suite_names(overview: pd.DataFrame) -> list[str]:
    return sorted(str(s) for s in overview["suite"].unique())


def suite_releases(overview: pd.DataFrame, suite: str) -> pd.DataFrame:
    """The report shown for each release of a suite (the latest one), in release order."""
    # the suite's rows first: the latest per release over every suite's reports is slower
    latest = latest_per_release(overview[overview["suite"] == suite])
    return latest.sort_values("release_rank").reset_index(drop=True)


# release_source values that name a release by the model field (data/load/releases.py)
MODEL_SOURCES: Final = ("model", "model@version")


def naming_notes(overview: pd.DataFrame) -> list[str]:
    """What the Data page says about release identity, per suite: when the suite's files
    name releases two ways (a declared target version and the model), and when one release
    has several files (and which one every page uses: the last in report_overview's order,
    as latest_per_release takes it)."""
    notes = []
    for suite in suite_names(overview):
        rows = overview[overview["suite"] == suite]
        sources = list(rows["release_source"])
        declared = sources.count("target_version")
        by_model = sum(source in MODEL_SOURCES for source in sources)
        joined = sources.count("model@version")
        if declared and by_model:
            how = (
                f"each model label NAME@VERSION is read as the release VERSION ({joined} of "
                f"them), so a version is one release however its file names it; "
                "`join_model_versions = false` under [releases] in relidash.toml keeps them apart"
                if joined
                else "the two are kept apart (relidash.toml [releases])"
            )
            notes.append(
                f"{suite} names its releases two ways: "
                f"{_files(declared, 'declares', 'declare')} a target version (multivon-eval "
                f"0.19+), {by_model} {'names' if by_model == 1 else 'name'} the model: {how}."
            )
        for release, files in rows.groupby("release", sort=False)["file"]:
            if len(files) > 1:
                used = str(files.iloc[-1])
                notes.append(
                    f"{suite} {release} has {len(files)} files ({', '.join(map(str, files))}); "
                    f"every page uses {used}, the last by recorded time, then file time."
                )
    return notes


def find_suite_releases(overview: pd.DataFrame, suite: str) -> pd.DataFrame:
    """The releases of a suite (suite_releases); UnknownName when it has none."""
    releases = suite_releases(overview, suite)
    if releases.empty:
        known = ", ".join(suite_names(overview)) if not overview.empty else "none loaded"
        raise UnknownName(f"no suite named {suite!r} (suites: {known})")
    return releases


def find_release(releases: pd.DataFrame, wanted: str) -> pd.Series:
    """The report row shown for a release: by exact name, or the newest for 'latest'."""
    exact = releases[releases["release"] == wanted]
    if not exact.empty:
        return exact.iloc[-1]
    if wanted == LATEST:
        return releases.iloc[-1]
    names = ", ".join(repr(str(r)) for r in releases["release"])
    suite = releases["suite"].iloc[0]
    raise UnknownName(f"suite {suite!r} has no release {wanted!r} (releases: {names}, or latest)")


def _result_columns(prefix: str, r: PassKResult) -> dict[str, Any]:
    return {
        f"{prefix}": r.value,
        f"{prefix}_ci_low": r.ci_low,
        f"{prefix}_ci_high": r.ci_high,
        f"{prefix}_method": r.method,
        f"{prefix}_unknown": r.unknown_reason,
    }


def shown_cases(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the suite's shown reports in release order, their cases under the policy), of the
    releases in `window` (first, last) when one is given."""
    releases = in_window(suite_releases(overview, suite), window)
    cases = run_query(
        con,
        "read/suite_cases",
        suite=suite,
        count_agent_errors=count_agent_errors,
        report_ids=[int(rid) for rid in releases["report_id"]],
    )
    return releases, cases


def release_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    k: int,
    count_agent_errors: bool = False,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """One row per release of `suite`: counts, pass@1, pass@k, pass^k with CIs, envelope, change.

    The first page a server shows: plain rows rather than DataFrame work per release, and
    the load's stored estimates under the default policy. `window` (first, last release)
    keeps the releases between the two, inclusive; the change of the first is still
    against the release before it.
    """
    releases = in_window(suite_releases(overview, suite), window, keep_previous=True)
    shown = sorted(int(rid) for rid in releases["report_id"])
    by_report: dict[Any, list[dict[str, Any]]] = {}
    for case in fetch_rows(
        con,
        "read/suite_cases",
        suite=suite,
        count_agent_errors=count_agent_errors,
        report_ids=shown,  # the window's cases only
    ):
        by_report.setdefault(case["report_id"], []).append(case)
    # the load stored every k of the default policy; other policies are estimated here
    stored = {} if count_agent_errors else stored_pass_k(con, shown)
    rows = []
    for rel in releases.itertuples(index=False):
        rid = int(rel.report_id)
        cases = by_report.get(rel.report_id, [])
        evaluated = [case for case in cases if not is_missing(case["n"])]
        n = np.array([case["n"] for case in evaluated], dtype=np.int64)
        c = np.array([case["c"] for case in evaluated], dtype=np.int64)

        row: dict[str, Any] = {
            "release": rel.release,
            "release_rank": int(rel.release_rank),
            "report_id": rid,
            "file": rel.file,
            "format": rel.format,
            "upgraded": bool(rel.upgraded),
            "cases_evaluated": len(evaluated),
            # Under the agent-errors policy an errored case that now counts is evaluated,
            # so it is not counted again as errored.
            "cases_errored": sum(
                case["status"] in ERROR_STATUSES and is_missing(case["n"]) for case in cases
            ),
            "cases_skipped": sum(case["status"] == "skipped" for case in cases),
            "runs_min": None if pd.isna(rel.runs_min) else int(rel.runs_min),
            "runs_max": None if pd.isna(rel.runs_max) else int(rel.runs_max),
            "k": k,
        }
        for column, metric, kk in (
            ("pass_at_1", METRIC_PASS_AT_K, 1),
            ("pass_at_k", METRIC_PASS_AT_K, k),
            ("pass_hat_k", METRIC_PASS_HAT_K, k),
        ):
            result = stored.get((rid, metric, kk)) or estimate(n, c, kk, metric, rel.harness)
            row.update(_result_columns(column, result))
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    width = (table["pass_at_k"].astype(float) - table["pass_hat_k"].astype(float)) * 100
    table["envelope_points"] = width
    table["envelope_reading"] = [envelope_reading(w) for w in width]
    changes = [
        _paired_change(by_report, prev, cur, k)
        for prev, cur in zip([None, *table["report_id"][:-1]], table["report_id"], strict=True)
    ]
    table["pass_hat_k_change"] = [c[0] for c in changes]
    table["pass_hat_k_change_ci_low"] = [c[1] for c in changes]
    table["pass_hat_k_change_ci_high"] = [c[2] for c in changes]
    table["pass_hat_k_change_pairs"] = [c[3] for c in changes]
    table["pass_hat_k_change_significant"] = [
        c[0] is not None and (c[1] > 0 or c[2] < 0) for c in changes
    ]
    if window is not None and len(table) > 1 and table["release"].iloc[0] != window[0]:
        table = table.iloc[1:].reset_index(drop=True)  # the release before, only for Δ
    return table


def in_window(
    releases: pd.DataFrame, window: tuple[str, str] | None, *, keep_previous: bool = False
) -> pd.DataFrame:
    """The releases from window[0] to window[1] in release order (all without a window, or
    when either end is not a release); with `keep_previous`, also the one before the first."""
    if window is None:
        return releases
    names = [str(r) for r in releases["release"]]
    if window[0] not in names or window[1] not in names:
        return releases
    lo, hi = sorted((names.index(window[0]), names.index(window[1])))
    lo = max(0, lo - 1) if keep_previous else lo
    return releases.iloc[lo : hi + 1].reset_index(drop=True)


def _paired_change(
    by_report: dict[Any, list[dict[str, Any]]], previous: Any, current: Any, k: int
) -> tuple[float | None, float | None, float | None, int]:
    """Δpass^k against the previous release over matched cases, with its paired 95% CI."""
    if previous is None or previous not in by_report or current not in by_report:
        return None, None, None, 0
    counts = paired_counts(by_report[previous], by_report[current])
    hat = counts_delta(counts, DELTA_KEYS[2], METRIC_PASS_HAT_K, k)
    if hat.delta is None:
        return None, None, None, 0
    return hat.delta.delta, hat.delta.ci_low, hat.delta.ci_high, hat.delta.n_pairs


def passk_curve(
    con: duckdb.DuckDBPyConnection, report_id: int, k_max: int, count_agent_errors: bool = False
) -> pd.DataFrame:
    """pass@k and pass^k for k = 1..k_max of one report: the reliability envelope."""
    outcomes = run_query(
        con, "read/case_outcomes", count_agent_errors=count_agent_errors, report_ids=[report_id]
    )
    n, c = evaluated_arrays(outcomes)
    harness = fetch_rows(con, "read/report_harness", report_id=report_id)
    rows = []
    words = str(harness[0]["harness"]) if harness else MULTIVON
    for metric, results in pass_k_results(n, c, k_max, words).items():
        for r in results:
            rows.append(
                {
                    "k": r.k,
                    "metric": metric,
                    "value": r.value,
                    "ci_low": r.ci_low,
                    "ci_high": r.ci_high,
                    "n_cases": r.n_cases,
                    "method": r.method,
                    "interval": INTERVAL_NOTE[r.method],
                    "unknown_reason": r.unknown_reason,
                }
            )
    return pd.DataFrame(rows)


def _files(n: int, one: str, many: str) -> str:
    """`1 file declares`, `6 files declare`."""
    return f"1 file {one}" if n == 1 else f"{n} files {many}"
