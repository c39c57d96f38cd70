"""The terminal summary (render/terminal.py) from typed rows: a suite's release column fits
its longest release (a Harbor label names agent, version and model), within bounds."""

from __future__ import annotations

from dashboard.analysis.summary import (
    CaseCounts,
    LotteryCase,
    MetricCell,
    ReportHead,
    SummaryRow,
)
from dashboard.render.terminal import (
    RELEASE_WIDEST,
    RELEASE_WIDTH,
    release_width,
    render_summary_lines,
)

HARBOR = "terminus-2@2.0.0 (anthropic/claude-sonnet-4-5)"
CELL = MetricCell(0.5, 0.25, 0.75, None)


def row(suite: str, release: str, lottery: int = 0) -> SummaryRow:
    head = ReportHead(
        report_id=1,
        file=f"{suite}/{release}.json",
        suite=suite,
        release=release,
        release_rank=1,
        harness="harbor",
        format="harbor 0.26.0 (job)",
        upgraded=False,
        complete=True,
        log_status=None,
        cases=CaseCounts(10, 10, 0, 0, 0),
        runs_min=4,
        runs_max=4,
    )
    cells = {k: CELL for k in range(1, 5)}
    cases = [LotteryCase(f"c{i}", f"case {i}", 2, 4) for i in range(lottery)]
    return SummaryRow(head, cells, cells, cases)


def lines_of(rows: list[SummaryRow], releases: dict[str, list[str]] | None) -> list[str]:
    return "".join(render_summary_lines(rows, [], "file", None, releases)).splitlines()


def test_a_long_release_is_shown_whole_and_the_columns_line_up() -> None:
    rows = [row("core", "v1"), row("core", HARBOR)]
    lines = lines_of(rows, {"core": ["v1", HARBOR]})
    header = next(line for line in lines if line.startswith("release"))
    shown = [line for line in lines if line.startswith(("v1 ", HARBOR))]
    assert len(shown) == 2 and shown[1].startswith(HARBOR + " ")
    # the release column is as wide as the longest release: the header's next column and
    # every row's case counts (right-aligned in six) start after it
    assert header.index("cases e/err/skip") == len(HARBOR) + 1
    assert {line.index("10/0/0") for line in shown} == {len(HARBOR) + 1 + 4}


def test_short_releases_keep_the_usual_width_and_a_very_long_one_is_cut() -> None:
    assert release_width(["v1.2.0", "v1.10.0"]) == RELEASE_WIDTH
    assert release_width([]) == RELEASE_WIDTH
    assert release_width([HARBOR]) == len(HARBOR)
    assert release_width(["x" * 200]) == RELEASE_WIDEST
    long_release = "y" * 200
    shown = lines_of([row("s", long_release)], {"s": [long_release]})
    assert any(line.startswith("y" * (RELEASE_WIDEST - 1) + "… ") for line in shown)


def test_without_the_suites_releases_the_column_is_the_usual_width() -> None:
    shown = lines_of([row("core", HARBOR)], None)
    assert any(line.startswith(HARBOR[: RELEASE_WIDTH - 1] + "… ") for line in shown)


def test_the_count_of_lottery_cases_not_shown_agrees_in_number() -> None:
    four, five = (lines_of([row("s", "v1", n)], None) for n in (4, 5))
    assert "    … 1 more lottery case" in four
    assert "    … 2 more lottery cases" in five
