"""Lottery cases of a release: pass sometimes, never reliably; ranked closest to
reliable first (or flakiest first: pass rate nearest 1/2), with how many releases in a
row each has been one.

Must not: import Streamlit or Altair, hold SQL text, or format numbers for display.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd

from dashboard.analysis.matching import case_keys, story_link_key
from dashboard.analysis.releases import shown_cases
from dashboard.stats import lottery_mask, pass_at_k, pass_hat_k, rank_flakiest, rank_lottery

# how a lottery table may be ordered: the ranking behind each name
ORDERS = {"reliable": rank_lottery, "flakiest": rank_flakiest}


def lottery_table(
    con: duckdb.DuckDBPyConnection,
    overview: pd.DataFrame,
    suite: str,
    report_id: int,
    k: int,
    count_agent_errors: bool = False,
    order: str = "reliable",
) -> pd.DataFrame:
    """Ranked lottery cases of one release at k, with how many releases in a row they
    have been; `order` is a key of ORDERS (closest to reliable first, or flakiest first)."""
    rank = ORDERS[order]
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
    ranked = rank(n, c, k)
    rank_of_release = dict(zip(releases["report_id"], releases["release_rank"], strict=True))
    history = [
        rid
        for rid in releases.sort_values("release_rank")["report_id"]
        if rank_of_release[rid] <= rank_of_release[report_id]
    ]
    rows = []
    for position, idx in enumerate(ranked, start=1):
        case = this.iloc[int(idx)]
        streak = 0
        for rid in reversed(history):
            if case["key"] in flags.get(rid, set()):
                streak += 1
            else:
                break
        rows.append(
            {
                "rank": position,
                "case_idx": int(case["case_idx"]),
                "case_id": case["case_id"],
                "input": case["input"],
                "passes": int(case["c"]),
                "runs": int(case["n"]),
                "pass_rate": case["c"] / case["n"],
                "pass_at_k": float(pass_at_k(int(case["n"]), int(case["c"]), k)),
                "pass_hat_k": float(pass_hat_k(int(case["n"]), int(case["c"]), k)),
                "releases_as_lottery": streak,
                "link_key": story_link_key(str(case["key"])),
            }
        )
    return pd.DataFrame(rows)
