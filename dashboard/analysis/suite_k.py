"""The suite's k: the one k at which every page, the first page's headline, the review and
`relidash summary` show a suite, unless a link names another.

The policy's k when a chosen policy (a `--policy` file or relidash.toml's rules) judges
the suite at one k: the numbers shown are then the numbers judged. Otherwise the largest
k every release in the window (the latest WINDOW releases, as the pages show by default)
supports: the fewest trials of any evaluated case of any of them, so that no release
shown is UNKNOWN for want of trials and every Δ between them can be computed.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import duckdb
import pandas as pd

from dashboard.analysis.policy import DEFAULT_POLICY_SOURCE, Policy, PolicyError, resolve_policy
from dashboard.analysis.releases import suite_releases
from dashboard.analysis.summary import report_overview
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.sources.reports import ReportSource

WINDOW: Final = 30  # releases a page shows by default over a long history
FROM_POLICY: Final = "policy"
FROM_RELEASES: Final = "releases"


@dataclass(frozen=True)
class SuiteK:
    """The suite's k and why it is that k."""

    k: int
    source: str  # FROM_POLICY | FROM_RELEASES
    reason: str  # one sentence a page or a terminal can show
    limited_by: str | None = None  # the release with the fewest trials (FROM_RELEASES)


def policy_k(policy: Policy | None) -> int | None:
    """The one k a chosen policy judges at, or None: no policy, the default rule (a
    placeholder, not a choice), or rules at several k."""
    if policy is None or policy.source == DEFAULT_POLICY_SOURCE:
        return None
    ks = {rule.k for rule in policy.rules}
    return ks.pop() if len(ks) == 1 else None


def choose_k(
    shortest: Sequence[tuple[str, int | None]],
    policy: Policy | None = None,
    *,
    of_more: bool = False,
) -> SuiteK:
    """The suite's k from each release's fewest trials, (release, trials) in release
    order (None: a release with no evaluated case, which supports no k and limits none),
    and the policy; `of_more`: the releases are the latest of a longer history."""
    judged = policy_k(policy)
    if judged is not None:
        return SuiteK(judged, FROM_POLICY, f"the k the policy judges at ({policy_source(policy)})")
    known = [(release, int(n)) for release, n in shortest if n is not None and n >= 1]
    if not known:
        return SuiteK(1, FROM_RELEASES, "no release has an evaluated case")
    fewest = min(n for _, n in known)
    # the latest release with the fewest trials: the one a reader is most likely to rerun
    limiting = [release for release, n in known if n == fewest][-1]
    if len(known) == 1:
        return SuiteK(fewest, FROM_RELEASES, f"{limiting} has {fewest} trials per case", limiting)
    return SuiteK(
        fewest,
        FROM_RELEASES,
        f"the largest k every release{f' of the latest {len(shortest)}' if of_more else ''} "
        "supports "
        f"(the fewest trials of a case: {fewest}, in {limiting})",
        limiting,
    )


def policy_source(policy: Policy | None) -> str:
    if policy is None:
        return "no policy"
    return policy.source.replace("\\", "/").rsplit("/", 1)[-1]


def window_releases(releases: pd.DataFrame) -> pd.DataFrame:
    """The releases the suite's k is over: the latest WINDOW, in release order."""
    return releases.iloc[-WINDOW:]


def shortest_runs(
    con: duckdb.DuckDBPyConnection, report_ids: Sequence[int], count_agent_errors: bool
) -> dict[int, int]:
    """The fewest trials of an evaluated case of each report (those with one)."""
    if not report_ids:
        return {}
    rows = fetch_rows(
        con,
        "read/report_shortest_runs",
        report_ids=[int(r) for r in report_ids],
        count_agent_errors=count_agent_errors,
    )
    return {int(r["report_id"]): int(r["shortest"]) for r in rows}


def suite_k(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    count_agent_errors: bool = False,
    policy: Policy | None = None,
) -> SuiteK:
    """The suite's k (see the module's docstring); `overview` holds at least the suite's
    report_overview rows."""
    releases = suite_releases(overview, suite)
    shown = window_releases(releases)
    trials = shortest_runs(con, list(shown["report_id"]), count_agent_errors)
    return choose_k(
        [(str(r.release), trials.get(int(r.report_id))) for r in shown.itertuples(index=False)],
        policy,
        of_more=len(shown) < len(releases),
    )


def suite_ks(
    con: duckdb.DuckDBPyConnection,
    suites: Sequence[str],
    reports: Path | ReportSource | None,
    count_agent_errors: bool = False,
) -> dict[str, SuiteK]:
    """Each suite's k, its policy resolved from the reports' relidash.toml as a server
    without `--policy` resolves it (an unusable one sets no k): `relidash summary`'s."""
    chosen = {}
    for suite in suites:
        try:
            policy: Policy | None = resolve_policy(suite, None, reports)
        except PolicyError:
            policy = None
        chosen[suite] = suite_k(
            con, report_overview(con, [suite]), suite, count_agent_errors, policy
        )
    return chosen
