"""Pure page helpers: transcript diff, CSV neutralising, case matching, change classes, calculator."""

from __future__ import annotations

import html as htmllib
import io
import re

import pandas as pd
import pytest

from dashboard.analysis import (
    calculator,
    cases,
    comparing,
    estimates,
    gating,
    loading,
    matching,
    releases,
    summary,
)
from dashboard.analysis.diffing import diff_lines, first_divergence, word_spans
from dashboard.render import gate_report
from dashboard.render.diff import diff_html
from dashboard.render.export import csv_bytes


def test_diff_marks_first_divergence_and_changed_words() -> None:
    a = "[user] hi\n[assistant] The refund is approved.\n[assistant] bye"
    b = "[user] hi\n[assistant] The refund is denied.\n[assistant] bye"
    rows = diff_lines(a, b)
    assert [r.kind for r in rows] == ["equal", "replace", "equal"]
    assert first_divergence(rows) == 1
    left, right = word_spans(rows[1].left, rows[1].right)
    assert [t for t, changed in left if changed] == ["approved"]
    assert [t for t, changed in right if changed] == ["denied"]


def test_diff_of_identical_transcripts_has_no_divergence() -> None:
    assert first_divergence(diff_lines("a\nb", "a\nb")) is None


def test_diff_insertions_and_deletions_keep_line_numbers() -> None:
    rows = diff_lines("a\nb\nc", "a\nc\nd")
    assert [(r.kind, r.left_no, r.right_no) for r in rows] == [
        ("equal", 1, 1),
        ("delete", 2, None),
        ("equal", 3, 2),
        ("insert", None, 3),
    ]


def test_diff_html_escapes_report_text() -> None:
    hostile = '<script>alert(1)</script> <img src=x onerror="x()"> [a](javascript:alert(1))'
    html = diff_html(diff_lines(hostile, "safe"), "<b>left</b>", "right")
    assert "<script>" not in html and "<img" not in html and "<b>left" not in html
    shown = htmllib.unescape(re.sub(r"<[^>]+>", "", html.split("</style>", 1)[1]))
    assert hostile in shown and "<b>left</b>" in shown


@pytest.mark.parametrize("cell", ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\t=x"])
def test_csv_neutralises_formulas(cell: str) -> None:
    text = csv_bytes(pd.DataFrame({"input": [cell], "value": [-0.5]})).decode()
    frame = pd.read_csv(io.StringIO(text))
    assert frame["input"][0] == "'" + cell
    assert frame["value"][0] == -0.5  # numbers stay numbers


def test_case_keys_match_by_id_else_input() -> None:
    cases = pd.DataFrame(
        {
            "case_id": [None, "id-1", "id-1", None, "id-2"],
            "input": ["refund?", "refund?", "refund (edited)?", "other", "other"],
        }
    )
    keys = matching.case_keys(cases)
    assert keys[0] == keys[1] == keys[2]  # old input-only, new id+input, edited input same id
    assert keys[3] == keys[4]
    assert keys[0] != keys[3]


def test_case_keys_never_merge_two_case_ids() -> None:
    cases = pd.DataFrame({"case_id": ["id-X", "id-Y", None], "input": ["same", "same", "same"]})
    keys = matching.case_keys(cases)
    assert keys[0] != keys[1]
    assert keys[2] not in (keys[0], keys[1])  # ambiguous: matched by input only


def test_gate_line_shows_enough_digits_to_be_true() -> None:
    import numpy as np

    verdict = gating.gate_verdict(np.array([5, 5, 5, 5]), np.array([5, 5, 5, 2]), 1, 0.5)
    # verdicts are three-way: a CI whose lower bound is just under the threshold straddles
    # it (UNDECIDED), and FAILED says the whole CI is below, so its top is the number compared
    line = gate_report.verdict_line(
        gating.GateVerdict("UNDECIDED", "pass^k", 4, 0.6, 0.49952, 0.8, 20, 0.5, "ci_low", "")
    )
    assert "CI [0.4995, 0.8000] straddles the required 0.5000" in line
    line = gate_report.verdict_line(
        gating.GateVerdict("FAILED", "pass^k", 4, 0.45, 0.4, 0.49952, 20, 0.5, "ci_low", "")
    )
    assert "the whole CI is below the required 0.5000" in line
    assert "CI [0.4000, 0.4995]" in line
    line = gate_report.verdict_line(
        gating.GateVerdict("FAILED", "pass^k", 4, 0.99996, 0.9, 1.0, 20, 1.0, "ci_low", "")
    )
    assert "pass^4 = 0.99996 < 1.00000" in line
    # pass^1 per case is 1, 1, 1, 0.4: value 0.85, and the bootstrap's lower bound 0.55;
    # at 4 cases the verdict reads the widened interval, which reaches below 0.5
    assert (verdict.value, verdict.method) == (0.85, estimates.METHOD_WIDENED)
    assert verdict.ci_low is not None and verdict.ci_low < 0.5
    assert verdict.verdict == "UNDECIDED"


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("5/5", "3/5", "became flaky"),
        ("3/5", "5/5", "stabilised"),
        ("0/5", "5/5", "fixed"),
        ("5/5", "0/5", "regressed"),
        ("2/5", "0/5", "regressed"),
        ("0/5", "0/5", "still failing"),
        ("0/5", "2/5", "started passing sometimes"),
        (None, "1/5", "added"),
        ("1/5", None, "removed"),
        ("1/5", "model_error", "now model_error"),
        ("model_error", "3/5", "back from model_error"),
        ("skipped", "skipped", "still skipped"),
        (None, None, ""),
    ],
)
def test_classify_change(before: str | None, after: str | None, expected: str) -> None:
    assert cases.classify_change(before, after) == expected


@pytest.mark.parametrize(
    ("p", "k", "hat"),
    [(0.99, 5, 0.951), (0.99, 10, 0.904), (0.90, 5, 0.590), (0.90, 10, 0.349)],
)
def test_rate_curves_match_published_figures(p: float, k: int, hat: float) -> None:
    row = calculator.rate_curves(p, 10).set_index("k").loc[k]
    assert round(row["pass_hat_k"], 3) == hat
    assert row["pass_at_k"] == pytest.approx(1 - (1 - p) ** k)


def test_runs_estimates_unbiased_against_plug_in() -> None:
    table = calculator.runs_estimates(20, 17, 20).set_index("k")
    assert table.loc[5, "pass_hat_k"] == pytest.approx(6188 / 15504)  # C(17,5)/C(20,5) ≈ 0.399
    assert round(table.loc[5, "plug_in_pass_hat_k"], 3) == 0.444
    assert (table.loc[18:, "pass_hat_k"] == 0).all()
    assert table.loc[17, "pass_hat_k"] > 0


@pytest.mark.parametrize(
    ("width", "reading"), [(60.0, "gambler"), (10.0, "steady"), (35.0, "in between")]
)
def test_envelope_reading(width: float, reading: str) -> None:
    assert estimates.envelope_reading(width).startswith(reading)


@pytest.mark.parametrize("count_agent_errors", [False, True])
def test_release_table_agrees_with_estimates_and_comparisons(count_agent_errors: bool) -> None:
    """The Releases page's numbers: each release's estimates equal suite_pass_k over its
    cases (stored under the default policy, estimated under the other), and each change
    equals `relidash compare` of the two releases."""
    from pathlib import Path

    import numpy as np

    from dashboard.data.catalog import open_catalog
    from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K, suite_pass_k

    con = open_catalog(":memory:")
    loading.refresh_catalog(con, Path(__file__).resolve().parents[2] / "sample_reports")
    overview = summary.report_overview(con)
    checked = 0
    for suite in releases.suite_names(overview):
        k = 2
        table = releases.release_table(con, overview, suite, k, count_agent_errors)
        _, cases = releases.shown_cases(con, overview, suite, count_agent_errors)
        for row in table.itertuples():
            mine = cases[(cases["report_id"] == row.report_id) & cases["n"].notna()]
            n, c = mine["n"].to_numpy(np.int64), mine["c"].to_numpy(np.int64)
            for column, metric, kk in (
                ("pass_at_1", METRIC_PASS_AT_K, 1),
                ("pass_at_k", METRIC_PASS_AT_K, k),
                ("pass_hat_k", METRIC_PASS_HAT_K, k),
            ):
                want = suite_pass_k(n, c, [kk], metric)[0]
                got = (getattr(row, column), getattr(row, f"{column}_ci_low"))
                if want.value is None:
                    assert pd.isna(got[0]), (suite, row.release, column)
                else:  # stored rows were one matrix product for every k: the last bit may differ
                    assert got == pytest.approx((want.value, want.ci_low), abs=1e-12), (
                        suite,
                        row.release,
                        column,
                    )
            if row.Index == 0:
                assert pd.isna(row.pass_hat_k_change)
                continue
            base = table.iloc[row.Index - 1]["release"]
            delta = comparing.compare_releases(
                con, suite, base, row.release, k=k, count_agent_errors=count_agent_errors
            ).deltas[2]
            assert delta.key == "pass_hat_k"
            if delta.delta is None:
                assert pd.isna(row.pass_hat_k_change)
            else:
                assert (row.pass_hat_k_change, row.pass_hat_k_change_ci_low) == (
                    delta.delta.delta,
                    delta.delta.ci_low,
                )
                checked += 1
    assert checked >= 5
