"""Frames the pages show, built from the catalog with the stats layer.

Every page table comes from a function here, so the CLI, the pages and the tests share
one path from catalog rows to displayed numbers. No Streamlit, no Altair.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from dashboard import service
from dashboard.data.queries import fetch_rows, run_query
from dashboard.data.transcripts import read_case_text, read_case_trials
from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    PassKResult,
    lottery_mask,
    pass_at_k,
    pass_hat_k,
    rank_lottery,
    suite_pass_k,
)

NOT_IN_RELEASE = "—"  # a case-history cell for a release that does not have the case
ERROR_STATUSES = ("model_error", "judge_error", "evaluator_error", "timeout")
GAMBLER_POINTS = 50.0
STEADY_POINTS = 20.0
INTERVAL_NOTE = {
    "cluster-bootstrap": "cluster bootstrap over cases (2000 resamples, seed 0)",
    "wilson": "Wilson interval (every case has the same value)",
    "": "none (UNKNOWN)",
}


def policy_label(count_agent_errors: bool) -> str:
    if count_agent_errors:
        return (
            "Agent errors count as failures: a trial that ended in a model error or timeout is a "
            "failed trial (the whole case as 0 of its runs where trials were not recorded); "
            "judge and evaluator errors stay excluded."
        )
    return (
        "multivon-eval's rule: only cases that passed or failed on quality count; cases with "
        "model, judge or evaluator errors and skipped cases are left out."
    )


def envelope_reading(width_points: float | None) -> str:
    if width_points is None or np.isnan(width_points):
        return "UNKNOWN"
    if width_points > GAMBLER_POINTS:
        return "gambler: capable but unreliable"
    if width_points < STEADY_POINTS:
        return "steady"
    return "in between"


# ---- releases ----------------------------------------------------------------------------


def suite_names(overview: pd.DataFrame) -> list[str]:
    return sorted({str(s) for s in overview["suite"]})


def suite_releases(overview: pd.DataFrame, suite: str) -> pd.DataFrame:
    """The report shown for each release of a suite (the latest one), in release order."""
    latest = service.latest_per_release(overview)
    return latest[latest["suite"] == suite].sort_values("release_rank").reset_index(drop=True)


def _result_columns(prefix: str, r: PassKResult) -> dict[str, Any]:
    return {
        f"{prefix}": r.value,
        f"{prefix}_ci_low": r.ci_low,
        f"{prefix}_ci_high": r.ci_high,
        f"{prefix}_method": r.method,
        f"{prefix}_unknown": r.unknown_reason,
    }


def _estimate(n: np.ndarray, c: np.ndarray, k: int, metric: str) -> PassKResult:
    return suite_pass_k(n, c, [k], metric)[0]


def shown_cases(
    con: duckdb.DuckDBPyConnection, overview: pd.DataFrame, suite: str, count_agent_errors: bool
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the suite's shown reports in release order, their cases under the policy)."""
    releases = suite_releases(overview, suite)
    cases = run_query(con, "suite_cases", suite=suite, count_agent_errors=count_agent_errors)
    return releases, cases[cases["report_id"].isin(releases["report_id"])]


def release_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    k: int,
    count_agent_errors: bool = False,
) -> pd.DataFrame:
    """One row per release of `suite`: counts, pass@1, pass@k, pass^k with CIs, envelope, change.

    The first page a server shows: plain rows rather than DataFrame work per release, and
    the load's stored estimates under the default policy.
    """
    releases = suite_releases(overview, suite)
    shown = set(releases["report_id"].tolist())
    by_report: dict[Any, list[dict[str, Any]]] = {}
    for case in fetch_rows(con, "suite_cases", suite=suite, count_agent_errors=count_agent_errors):
        if case["report_id"] in shown:
            by_report.setdefault(case["report_id"], []).append(case)
    # the load stored every k of the default policy; other policies are estimated here
    stored = {} if count_agent_errors else service.stored_pass_k(con, sorted(shown))
    rows = []
    for rel in releases.itertuples(index=False):
        rid = int(rel.report_id)
        cases = by_report.get(rel.report_id, [])
        evaluated = [case for case in cases if not service.is_missing(case["n"])]
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
                case["status"] in ERROR_STATUSES and service.is_missing(case["n"]) for case in cases
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
            result = stored.get((rid, metric, kk)) or _estimate(n, c, kk, metric)
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
    return table


def _paired_change(
    by_report: dict[Any, list[dict[str, Any]]], previous: Any, current: Any, k: int
) -> tuple[float | None, float | None, float | None, int]:
    """Δpass^k against the previous release over matched cases, with its paired 95% CI."""
    from dashboard import comparing  # comparing builds on this module

    if previous is None or previous not in by_report or current not in by_report:
        return None, None, None, 0
    counts = comparing.paired_counts(by_report[previous], by_report[current])
    hat = comparing.counts_delta(counts, comparing.DELTA_KEYS[2], METRIC_PASS_HAT_K, k)
    if hat.delta is None:
        return None, None, None, 0
    return hat.delta.delta, hat.delta.ci_low, hat.delta.ci_high, hat.delta.n_pairs


def passk_curve(
    con: duckdb.DuckDBPyConnection, report_id: int, k_max: int, count_agent_errors: bool = False
) -> pd.DataFrame:
    """pass@k and pass^k for k = 1..k_max of one report: the reliability envelope."""
    outcomes = run_query(
        con, "case_outcomes", count_agent_errors=count_agent_errors, report_ids=[report_id]
    )
    n, c = service.evaluated_arrays(outcomes)
    rows = []
    for metric, results in service.pass_k_results(n, c, k_max).items():
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


# ---- case identity across releases ------------------------------------------------------


def case_keys(cases: pd.DataFrame) -> pd.Series:
    """A key per case row that is shared by the same case in every release of a suite.

    Cases are matched by case_id where they have one (0.18+), so a later edit of the input
    under the same id still matches and two ids never merge. A case without an id
    (pre-0.18) matches by input text, and joins the id case with that input when exactly
    one id was ever seen with it.
    """
    keys = case_key_list(list(cases["case_id"]), list(cases["input"]))
    return pd.Series(keys, index=cases.index, dtype=object)


def case_key_list(case_ids: Sequence[Any], inputs: Sequence[Any]) -> list[str]:
    """case_keys over plain lists (the same rule, without a DataFrame)."""
    ids_by_input: dict[str, set[str]] = {}
    for case_id, text in zip(case_ids, inputs, strict=True):
        if isinstance(case_id, str) and case_id:
            ids_by_input.setdefault(text if isinstance(text, str) else "", set()).add(case_id)
    keys = []
    for case_id, text in zip(case_ids, inputs, strict=True):
        if isinstance(case_id, str) and case_id:
            keys.append("id:" + case_id)
            continue
        text = text if isinstance(text, str) else ""
        known = ids_by_input.get(text, set())
        keys.append("id:" + next(iter(known)) if len(known) == 1 else "input:" + text)
    return keys


# ---- slices ------------------------------------------------------------------------------


def split_tag(tag: str) -> tuple[str, str]:
    if ":" in tag:
        dim, value = tag.split(":", 1)
        return dim, value
    return "tag", tag


def tag_dimensions(cases: pd.DataFrame) -> list[str]:
    dims = {
        split_tag(str(t))[0] for tags in cases["tags"] for t in (tags if tags is not None else [])
    }
    return sorted(dims)


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


def slice_metrics(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    dim: str,
    k: int,
    count_agent_errors: bool = False,
) -> pd.DataFrame:
    """pass^k with CI per (slice value, release) of a suite, plus per-slice counts."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors)
    cases = cases.assign(slice=slice_membership(cases, dim))
    rows = []
    for (value, report_id), group in cases.groupby(["slice", "report_id"], sort=False):
        n, c = service.evaluated_arrays(group)
        r = _estimate(n, c, k, METRIC_PASS_HAT_K)
        rel = releases[releases["report_id"] == report_id].iloc[0]
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


def case_history(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    tag: str | None = None,
    count_agent_errors: bool = False,
) -> pd.DataFrame:
    """Passes/runs of each case in each release (columns in release order) and what changed."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors)
    cases = cases.assign(key=case_keys(cases))
    cases = cases[in_slice(cases, tag)]
    order = list(releases["release"])
    cells = cases.assign(
        cell=[
            f"{int(c)}/{int(n)}" if pd.notna(n) else str(s)
            for n, c, s in zip(cases["n"], cases["c"], cases["status"], strict=True)
        ]
    )
    table = cells.pivot_table(index="key", columns="release", values="cell", aggfunc="first")
    table = table.reindex(columns=[r for r in order if r in table.columns])
    inputs = cases.groupby("key")["input"].last()
    ids = cases.groupby("key")["case_id"].last()
    table.insert(0, "case_id", ids.reindex(table.index))
    table.insert(1, "input", inputs.reindex(table.index))
    release_cols = [r for r in order if r in table.columns]
    table["latest_change"] = [
        classify_change(
            row[release_cols[-2]] if len(release_cols) > 1 else None, row[release_cols[-1]]
        )
        if release_cols
        else ""
        for _, row in table.iterrows()
    ]
    table[release_cols] = table[release_cols].fillna(NOT_IN_RELEASE)
    return table.reset_index(drop=True)


def _fraction(cell: Any) -> tuple[int, int] | None:
    if not isinstance(cell, str) or "/" not in cell:
        return None
    c, n = cell.split("/", 1)
    return (int(c), int(n)) if c.isdigit() and n.isdigit() else None


def classify_change(before: Any, after: Any) -> str:
    """How a case moved between two releases: reliable / flaky / failing transitions.

    A cell is "c/n" when the case was evaluated, a status ("model_error", "skipped") when it
    was not, and missing when the release does not have the case.
    """
    a, b = _fraction(before), _fraction(after)
    missing_before = not isinstance(before, str)
    missing_after = not isinstance(after, str)
    if missing_after:
        return "" if missing_before else "removed"
    if missing_before:
        return "added"
    if a is None and b is None:
        return f"still {after}" if before == after else f"now {after}"
    if a is None:
        return f"back from {before}"
    if b is None:
        return f"now {after}"

    def kind(x: tuple[int, int]) -> str:
        c, n = x
        return "reliable" if c == n else ("failing" if c == 0 else "flaky")

    ka, kb = kind(a), kind(b)
    if ka == kb:
        return {"reliable": "still reliable", "failing": "still failing", "flaky": "still flaky"}[
            ka
        ]
    if kb == "flaky":
        return "became flaky" if ka == "reliable" else "partly fixed"
    if kb == "reliable":
        return "stabilised" if ka == "flaky" else "fixed"
    return "regressed"


# ---- lottery -----------------------------------------------------------------------------


def lottery_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    report_id: int,
    k: int,
    count_agent_errors: bool = False,
) -> pd.DataFrame:
    """Ranked lottery cases of one release at k, with how many releases in a row they have been."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors)
    cases = cases.assign(key=case_keys(cases))
    flags = {}
    for rid, group in cases.groupby("report_id", sort=False):
        counted = group[group["n"].notna()]
        n = counted["n"].to_numpy(dtype=np.int64)
        c = counted["c"].to_numpy(dtype=np.int64)
        flags[rid] = set(counted["key"][lottery_mask(n, c, min(k, int(n.max()) if len(n) else k))])
    this = cases[(cases["report_id"] == report_id) & cases["n"].notna()].reset_index(drop=True)
    n = this["n"].to_numpy(dtype=np.int64)
    c = this["c"].to_numpy(dtype=np.int64)
    order = rank_lottery(n, c, k)
    rank_of_release = dict(zip(releases["report_id"], releases["release_rank"], strict=True))
    history = [
        rid
        for rid in releases.sort_values("release_rank")["report_id"]
        if rank_of_release[rid] <= rank_of_release[report_id]
    ]
    rows = []
    for rank, idx in enumerate(order, start=1):
        case = this.iloc[int(idx)]
        streak = 0
        for rid in reversed(history):
            if case["key"] in flags.get(rid, set()):
                streak += 1
            else:
                break
        rows.append(
            {
                "rank": rank,
                "case_idx": int(case["case_idx"]),
                "case_id": case["case_id"],
                "input": case["input"],
                "passes": int(case["c"]),
                "runs": int(case["n"]),
                "pass_rate": case["c"] / case["n"],
                "pass_at_k": float(pass_at_k(int(case["n"]), int(case["c"]), k)),
                "pass_hat_k": float(pass_hat_k(int(case["n"]), int(case["c"]), k)),
                "releases_as_lottery": streak,
            }
        )
    return pd.DataFrame(rows)


def case_detail(
    con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int
) -> dict[str, Any] | None:
    frame = run_query(con, "case_detail", report_id=report_id, case_idx=case_idx)
    return None if frame.empty else frame.iloc[0].to_dict()


def case_trials(con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int) -> pd.DataFrame:
    """The case's trials, read from its report file (TranscriptUnavailable if it changed)."""
    return read_case_trials(con, report_id, case_idx)


def case_text(con: duckdb.DuckDBPyConnection, report_id: int, case_idx: int) -> dict[str, Any]:
    """The case's last output and graders (JSON text), read from its report file."""
    return read_case_text(con, report_id, case_idx)


def case_link_key(case_id: Any, case_idx: int) -> str:
    """How a deep link names a case: its case_id (0.18+), else its position in the file."""
    return case_id if isinstance(case_id, str) and case_id else str(int(case_idx))


def find_case(cases: pd.DataFrame, wanted: str) -> pd.DataFrame:
    """Rows whose case_id equals `wanted`, else whose input equals it, else whose case_idx does."""
    by_id = cases[cases["case_id"] == wanted]
    if not by_id.empty:
        return by_id
    by_input = cases[cases["input"] == wanted]
    if not by_input.empty:
        return by_input
    if wanted.isdigit():
        return cases[cases["case_idx"] == int(wanted)]
    return cases.iloc[0:0]


# ---- gates -------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateVerdict:
    verdict: str  # PASSED | FAILED | UNKNOWN
    metric: str
    k: int
    value: float | None
    ci_low: float | None
    ci_high: float | None
    n_cases: int
    threshold: float
    uses: str  # "ci_low" | "value"
    reason: str
    method: str = ""  # the interval's method (cluster-bootstrap | wilson | "" for UNKNOWN)

    def line(self) -> str:
        name = self.metric.replace("k", str(self.k))
        if self.verdict == "UNKNOWN":
            return f"{name} gate UNKNOWN (fails): {self.reason}"
        bound = "CI lower bound" if self.uses == "ci_low" else "value"
        observed = self.ci_low if self.uses == "ci_low" else self.value
        assert observed is not None and self.value is not None
        op = ">=" if self.verdict == "PASSED" else "<"
        digits = _digits_to_show(observed, self.threshold)
        return (
            f"{name} gate {self.verdict}: {bound} {observed:.{digits}f} {op} required "
            f"{self.threshold:.{digits}f} ({name} = {self.value:.3f}, CI [{self.ci_low:.3f}, "
            f"{self.ci_high:.3f}], {self.n_cases} cases)"
        )


def _digits_to_show(observed: float, threshold: float) -> int:
    """3 decimals, or as many more as it takes for the printed comparison to read true."""
    for digits in range(3, 10):
        if observed == threshold or f"{observed:.{digits}f}" != f"{threshold:.{digits}f}":
            return digits
    return 10


def gate_verdict(
    n: np.ndarray,
    c: np.ndarray,
    k: int,
    threshold: float,
    metric: str = METRIC_PASS_HAT_K,
    uses: str = "ci_low",
) -> GateVerdict:
    """multivon-eval's assert_pass_hat_k(k, min_ci_low): UNKNOWN never passes."""
    r = _estimate(n, c, k, metric)
    if r.value is None:
        return GateVerdict(
            "UNKNOWN", metric, k, None, None, None, r.n_cases, threshold, uses, r.unknown_reason
        )
    observed = r.ci_low if uses == "ci_low" else r.value
    assert observed is not None
    verdict = "PASSED" if observed >= threshold else "FAILED"
    return GateVerdict(
        verdict, metric, k, r.value, r.ci_low, r.ci_high, r.n_cases, threshold, uses, "", r.method
    )


def gate_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    k: int,
    rules: Sequence[tuple[str | None, float]],
    count_agent_errors: bool = False,
) -> pd.DataFrame:
    """Verdict of each (slice tag or None, min CI low) rule on pass^k for every release."""
    releases, cases = shown_cases(con, overview, suite, count_agent_errors)
    rows = []
    for rel in releases.itertuples(index=False):
        group = cases[cases["report_id"] == rel.report_id]
        for tag, threshold in rules:
            n, c = service.evaluated_arrays(group[in_slice(group, tag)])
            v = gate_verdict(n, c, k, threshold)
            rows.append(
                {
                    "release": rel.release,
                    "release_rank": int(rel.release_rank),
                    "slice": tag or "(all cases)",
                    "threshold": threshold,
                    "verdict": v.verdict,
                    "pass_hat_k": v.value,
                    "ci_low": v.ci_low,
                    "ci_high": v.ci_high,
                    "n_cases": v.n_cases,
                    "k": k,
                    "interval": INTERVAL_NOTE[v.method],
                    "detail": v.line(),
                }
            )
    return pd.DataFrame(rows)


# ---- calculator --------------------------------------------------------------------------


def rate_curves(p: float, k_max: int) -> pd.DataFrame:
    """True pass@k = 1-(1-p)^k and pass^k = p^k for a known per-attempt success rate p."""
    ks = np.arange(1, k_max + 1)
    at = 1 - (1 - p) ** ks
    hat = p**ks
    return pd.DataFrame(
        {
            "k": ks,
            "pass_at_k": at,
            "pass_hat_k": hat,
            "envelope_points": (at - hat) * 100,
            "reading": [envelope_reading(w) for w in (at - hat) * 100],
        }
    )


def runs_estimates(n: int, c: int, k_max: int) -> pd.DataFrame:
    """From n trials with c passes: unbiased estimators beside the plug-in closed forms."""
    rows = []
    for k in range(1, min(k_max, n) + 1):
        rate = c / n
        rows.append(
            {
                "k": k,
                "pass_at_k": float(pass_at_k(n, c, k)),
                "plug_in_pass_at_k": 1 - (1 - rate) ** k,
                "pass_hat_k": float(pass_hat_k(n, c, k)),
                "plug_in_pass_hat_k": rate**k,
            }
        )
    return pd.DataFrame(rows)


# ---- display formatting ------------------------------------------------------------------


def pct(value: Any) -> str:
    return "UNKNOWN" if value is None or pd.isna(value) else f"{100 * float(value):.1f}%"


def pct_ci(value: Any, low: Any, high: Any) -> str:
    if value is None or pd.isna(value):
        return "UNKNOWN"
    return f"{pct(value)} [{100 * float(low):.1f}–{100 * float(high):.1f}]"


def display_release_table(table: pd.DataFrame) -> pd.DataFrame:
    """The release table as the page shows it: text cells, UNKNOWN spelled out."""
    k = int(table["k"].iloc[0]) if not table.empty else 0
    rows = []
    for r in table.itertuples(index=False):
        change = "—"
        if r.pass_hat_k_change is not None and pd.notna(r.pass_hat_k_change):
            change = (
                f"{100 * r.pass_hat_k_change:+.1f} pts [{100 * r.pass_hat_k_change_ci_low:+.1f}, "
                f"{100 * r.pass_hat_k_change_ci_high:+.1f}] over {r.pass_hat_k_change_pairs} cases"
                + (" ◆" if r.pass_hat_k_change_significant else "")
            )
        runs = (
            "—"
            if r.runs_max is None
            else (str(r.runs_max) if r.runs_min == r.runs_max else f"{r.runs_min}–{r.runs_max}")
        )
        rows.append(
            {
                "release": r.release,
                "cases (evaluated / errored / skipped)": f"{r.cases_evaluated} / {r.cases_errored} / {r.cases_skipped}",
                "runs": runs,
                "pass@1": pct_ci(r.pass_at_1, r.pass_at_1_ci_low, r.pass_at_1_ci_high),
                f"pass@{k}": pct_ci(r.pass_at_k, r.pass_at_k_ci_low, r.pass_at_k_ci_high),
                f"pass^{k}": pct_ci(r.pass_hat_k, r.pass_hat_k_ci_low, r.pass_hat_k_ci_high),
                "envelope": "UNKNOWN"
                if pd.isna(r.envelope_points)
                else f"{r.envelope_points:.1f} pts ({r.envelope_reading})",
                f"Δ pass^{k}": change,
                "format": r.format + (" (upgraded)" if r.upgraded else ""),
            }
        )
    return pd.DataFrame(rows)


def unknown_notes(table: pd.DataFrame) -> list[str]:
    notes = []
    for r in table.itertuples(index=False):
        for reason in (r.pass_at_1_unknown, r.pass_at_k_unknown, r.pass_hat_k_unknown):
            if reason:
                notes.append(f"{r.release}: {reason}")
                break
    return notes
