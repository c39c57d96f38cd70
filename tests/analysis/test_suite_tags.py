"""A suite's tags as the Slices and Gates pages list them (queries/read/suite_tags.sql, from
case_tags) are the tags its cases carry (analysis.slices.suite_tags over suite_cases),
for every format committed: multivon-eval's, Inspect's, the sample reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from dashboard.analysis import loading, slices
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.queries import run_query

REPO = Path(__file__).resolve().parents[2]
ROOTS = [REPO / "sample_reports", REPO / "tests" / "fixtures"]


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: p.name)
def test_suite_tags_are_the_tags_of_the_suites_cases(root: Path) -> None:
    con = open_catalog(MEMORY)
    try:
        loading.refresh_catalog(con, root)
        suites = list(run_query(con, "read/suite_names")["suite"])
        tagged = 0
        for suite in suites:
            cases = run_query(
                con, "read/suite_cases", suite=suite, count_agent_errors=False, report_ids=None
            )
            listed = list(run_query(con, "read/suite_tags", suite=suite)["tag"])
            assert listed == sorted(slices.suite_tags(cases)), suite
            tagged += bool(listed)
        # the comparison covers suites with tags, and more than one suite
        assert len(suites) > 1 and tagged >= 1, (suites, tagged)
    finally:
        con.close()
