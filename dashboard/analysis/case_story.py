"""One case's whole story: its outcome in every release of its suite, how it moved
against the release before (the compare ledger's words), and the release where it last
changed class.

Cases are matched across releases as `relidash compare` matches them
(analysis/matching.py: case_id where there is one, else input text, and ids renamed
between releases joined by input); a deep link names a case by matching.story_link_key.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

from typing import Any, Final

import duckdb
import pandas as pd

from dashboard.analysis.cases import classify_change
from dashboard.analysis.comparing import NOT_EVALUATED, bucket_of_change
from dashboard.analysis.estimates import is_missing
from dashboard.analysis.matching import case_keys, story_link_key
from dashboard.analysis.releases import shown_cases
from dashboard.stats import pass_hat_k

ADDED: Final = "added"
ABSENT: Final = "not in this release"
# ledger classes that say the case kept its kind (reliable, flaky, failing)
KEPT: Final = ("still passing", "still flaky", "still failing", NOT_EVALUATED, ABSENT)


def find_story_key(keys: pd.Series, cases: pd.DataFrame, wanted: str) -> str | None:
    """The match key a link names: an id, an `h:` digest, or (for an old link) the input."""
    known = set(keys)
    if "id:" + wanted in known:
        return "id:" + wanted
    if wanted.startswith("h:"):
        return next((k for k in known if story_link_key(k) == wanted), None)
    by_input = keys[cases["input"] == wanted]
    return str(by_input.iloc[0]) if not by_input.empty else None


def suite_case_keys(
    con: duckdb.DuckDBPyConnection, overview: pd.DataFrame, suite: str, count_agent_errors: bool
) -> pd.DataFrame:
    """Every case of the suite's shown reports with its match key and link key."""
    _, cases = shown_cases(con, overview, suite, count_agent_errors)
    keys = case_keys(cases)
    return cases.assign(key=keys, link_key=[story_link_key(k) for k in keys])


def case_choices(cases: pd.DataFrame) -> dict[str, str]:
    """link key -> label (the latest input seen) of every case of a suite, in file order."""
    latest = cases.sort_values(["release_rank", "case_idx"]).groupby("link_key", sort=False)
    labels = latest["input"].last()
    return {str(k): " ".join(str(v or "").split())[:90] or str(k) for k, v in labels.items()}


def case_story(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    wanted: str,
    k: int,
    count_agent_errors: bool = False,
) -> pd.DataFrame | None:
    """One row per release of the suite: the case's passes/runs, status, pass rate, its
    pass^k at k (None when k exceeds its runs or it is not evaluated), its ledger class
    against the previous release, and `last_change` (the latest release where it changed
    class) repeated on every row. None when no release has the case."""
    releases, _ = shown_cases(con, overview, suite, count_agent_errors)
    cases = suite_case_keys(con, overview, suite, count_agent_errors)
    key = find_story_key(cases["key"], cases, wanted)
    if key is None:
        return None
    mine = cases[cases["key"] == key].sort_values(["release_rank", "case_idx"])
    first_of = mine.groupby("report_id", sort=False).head(1).set_index("report_id")
    rows: list[dict[str, Any]] = []
    previous: str | None = None
    seen = False
    for rel in releases.sort_values("release_rank").itertuples(index=False):
        if rel.report_id not in first_of.index:
            rows.append(_absent_row(rel, k, removed_now=previous is not None))
            previous = None
            continue
        case = first_of.loc[rel.report_id]
        evaluated = not is_missing(case["n"])
        n = int(case["n"]) if evaluated else None
        c = int(case["c"]) if evaluated else None
        cell = f"{c}/{n}" if evaluated else str(case["status"])
        if not seen:
            change = ADDED
        elif previous is None:
            change = "back in this release"
        else:
            change = bucket_of_change(previous, cell)
        rows.append(
            {
                "release": rel.release,
                "release_rank": int(rel.release_rank),
                "report_id": int(rel.report_id),
                "case_idx": int(case["case_idx"]),
                "case_id": case["case_id"] if isinstance(case["case_id"], str) else None,
                "input": case["input"],
                "status": case["status"],
                "passes": c,
                "runs": n,
                "cell": cell,
                "pass_rate": c / n if evaluated and n else None,
                "k": k,
                "pass_hat_k": float(pass_hat_k(n, c, k)) if evaluated and n and k <= n else None,
                "change": change,
                "kind_change": classify_change(previous, cell) if previous else "",
            }
        )
        previous, seen = cell, True
    story = pd.DataFrame(rows)
    moved = story[~story["change"].isin(KEPT)]
    story["last_change"] = str(moved["release"].iloc[-1]) if not moved.empty else None
    return story


def matched_ids_note(story: pd.DataFrame) -> str | None:
    """Say so when the story joins several case ids by the case's input (an id scheme that
    changed between releases, analysis/matching.py), or None when it carries one id."""
    ids = list(dict.fromkeys(str(i) for i in story["case_id"] if isinstance(i, str) and i))
    if len(ids) < 2:
        return None
    return (
        f"Matched by input across {len(ids)} case ids ({', '.join(ids)}): the releases name "
        "this case differently, and its input is the same in each."
    )


def _absent_row(rel: Any, k: int, *, removed_now: bool) -> dict[str, Any]:
    return {
        "release": rel.release,
        "release_rank": int(rel.release_rank),
        "report_id": int(rel.report_id),
        "case_idx": None,
        "case_id": None,
        "input": None,
        "status": None,
        "passes": None,
        "runs": None,
        "cell": "—",
        "pass_rate": None,
        "k": k,
        "pass_hat_k": None,
        "change": "removed" if removed_now else ABSENT,
        "kind_change": "",
    }
