"""`relidash compare`: matching, the case ledger, paired deltas, and the command.

The fixture suite `svc` has two releases with 5 runs per case (passes/runs):

    case  v1 (base)      v2 (head)      ledger
    A     5/5            5/5            still passing
    B     5/5            0/5            regressed
    C     0/5            5/5            fixed           (tagged risk_tier:safety in v2 only)
    D     2/5            5/5            stabilised
    E     3/5            2/5            still flaky
    F     0/5            0/5            still failing
    G     5/5            3/5            newly flaky
    K     5/5            4/5            newly flaky     (same case_id, input reworded)
    M     0/5            2/5            started passing sometimes (failing -> flaky)
    I     model error    5/5            not evaluated
    H     4/5            —              removed
    L     —              4/5            added

Pairs (evaluated in both): A B C D E F G K M, 9 cases.
    pass@1: base (1+1+0+.4+.6+0+1+1+0)/9 = 5.0/9, head (1+0+1+1+.4+0+.6+.8+.4)/9 = 5.2/9
    pass^5 = 1 only at 5/5: base A B G K = 4/9, head A C D = 3/9
    pass@5 = 1 when any run passed: base A B D E G K = 6/9, head A C D E G K M = 7/9
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from cli_run import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from report_files import case, write_report

from dashboard.analysis import comparing
from dashboard.analysis.loading import refresh_catalog
from dashboard.data.catalog import open_catalog
from dashboard.stats import pass_hat_k
from dashboard.stats.paired import paired_bootstrap_ci

SAFETY = ("risk_tier:safety",)
BASE = [
    case("A", 5, tags=SAFETY),
    case("B", 5, tags=SAFETY),
    case("C", 0),
    case("D", 2),
    case("E", 3),
    case("F", 0),
    case("G", 5),
    case("H", 4),
    case("I", 0, model_error="provider timeout"),
    case("K old wording", 5, case_id="case-k"),
    case("M", 0),
]
HEAD = [
    case("A", 5, tags=SAFETY),
    case("B", 0, tags=SAFETY),
    case("C", 5, tags=SAFETY),
    case("D", 5),
    case("E", 2),
    case("F", 0),
    case("G", 3),
    case("I", 5),
    case("K new wording", 4, case_id="case-k"),
    case("L", 4),
    case("M", 2),
]
EXPECTED_LEDGER = {
    "regressed": ["B"],
    "fixed": ["C"],
    "newly flaky": ["G", "K new wording"],
    "started passing sometimes": ["M"],
    "stabilised": ["D"],
    "still failing": ["F"],
    "still flaky": ["E"],
    "still passing": ["A"],
    "not evaluated": ["I"],
}


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    root = tmp_path / "reports"
    write_report(root, "svc", "v1", BASE)
    write_report(root, "svc", "v2", HEAD)
    # fewer runs in base: the default k is the most runs every pair has in both (3)
    write_report(root, "mixed", "v1", [case("x", 3, runs=3), case("y", 1, runs=3)])
    write_report(root, "mixed", "v2", [case("x", 5, runs=8), case("y", 2, runs=5)])
    return root


@pytest.fixture
def con(reports: Path) -> Iterator[Any]:
    connection = open_catalog(":memory:")
    refresh_catalog(connection, reports)
    yield connection
    connection.close()


# ---- the ledger --------------------------------------------------------------------------


def test_ledger_buckets_by_hand(con: Any) -> None:
    result = comparing.compare_releases(con, "svc", "v1", "v2")
    buckets = {b: [e.input for e in entries] for b, entries in result.buckets().items()}
    assert buckets == EXPECTED_LEDGER
    assert [e.input for e in result.added] == ["L"]
    assert [e.input for e in result.removed] == ["H"]
    assert result.n_pairs == 9 and len(result.ledger) == 10


def test_ledger_partitions_the_matched_cases(con: Any) -> None:
    result = comparing.compare_releases(con, "svc", "v1", "v2")
    keys = [e.key for entries in result.buckets().values() for e in entries]
    assert sorted(keys) == sorted(e.key for e in result.ledger)  # each exactly once
    assert len(set(keys)) == len(keys)
    unmatched = {e.key for e in (*result.added, *result.removed)}
    assert not unmatched & set(keys)
    # nothing dropped: every case of either release is matched, added or removed
    assert len(result.ledger) + len(result.removed) == len(BASE)
    assert len(result.ledger) + len(result.added) == len(HEAD)


def test_cases_match_by_case_id_when_the_input_changed(con: Any) -> None:
    result = comparing.compare_releases(con, "svc", "v1", "v2")
    (k,) = [e for e in result.ledger if e.case_id == "case-k"]
    assert k.input == "K new wording"
    assert (k.base and k.base.cell(), k.head and k.head.cell()) == ("5/5", "4/5")


# ---- deltas ------------------------------------------------------------------------------


def test_deltas_by_hand(con: Any) -> None:
    result = comparing.compare_releases(con, "svc", "v1", "v2")
    assert result.k == 5
    at1, at_k, hat_k = result.deltas
    assert (at1.name, at_k.name, hat_k.name) == ("pass@1", "pass@5", "pass^5")
    for d, base, head in ((at1, 5.0 / 9, 5.2 / 9), (at_k, 6 / 9, 7 / 9), (hat_k, 4 / 9, 3 / 9)):
        assert d.delta is not None
        assert d.base == pytest.approx(base) and d.head == pytest.approx(head)
        assert d.delta.delta == pytest.approx(head - base)
        assert d.delta.ci_low <= d.delta.delta <= d.delta.ci_high
        assert d.delta.n_pairs == 9


def test_delta_interval_is_the_paired_bootstrap_over_pairs_in_head_order(con: Any) -> None:
    result = comparing.compare_releases(con, "svc", "v1", "v2")
    pairs = [e for e in result.ledger if e.bucket != "not evaluated"]
    assert [e.input for e in pairs] == ["A", "B", "C", "D", "E", "F", "G", "K new wording", "M"]
    base = pass_hat_k([e.base.runs for e in pairs], [e.base.passes for e in pairs], 5)  # type: ignore[union-attr]
    head = pass_hat_k([e.head.runs for e in pairs], [e.head.passes for e in pairs], 5)  # type: ignore[union-attr]
    assert result.deltas[2].delta == paired_bootstrap_ci(base, head)


def test_k_beyond_the_shortest_pair_is_unknown(con: Any) -> None:
    result = comparing.compare_releases(con, "svc", "v1", "v2", k=6)
    at1, at_k, hat_k = result.deltas
    assert at1.delta is not None
    assert at_k.delta is None and hat_k.delta is None
    assert hat_k.unknown_reason.startswith(
        "UNKNOWN — k=6 exceeds the 5 trials of the shortest-run matched case"
    )


def test_default_k_is_the_most_runs_every_pair_has(con: Any) -> None:
    result = comparing.compare_releases(con, "mixed", "v1", "v2")
    assert result.k == 3 and result.k_source.startswith("the largest k")


def test_slice_keeps_cases_tagged_in_either_release(con: Any) -> None:
    # C gained the safety tag in v2; it is still compared, not mistaken for an added case
    result = comparing.compare_releases(con, "svc", "v1", "v2", tag="risk_tier:safety")
    assert {b: [e.input for e in es] for b, es in result.buckets().items() if es} == {
        "regressed": ["B"],
        "fixed": ["C"],
        "still passing": ["A"],
    }
    assert result.added == () and result.removed == ()


def test_unknown_names_are_refused(con: Any) -> None:
    from dashboard.analysis.releases import UnknownName

    with pytest.raises(UnknownName, match="no release 'v3'"):
        comparing.compare_releases(con, "svc", "v1", "v3")
    with pytest.raises(UnknownName, match="carries the tag 'nope'"):
        comparing.compare_releases(con, "svc", "v1", "v2", tag="nope")


# ---- matching, as a property -------------------------------------------------------------


def _frame(cases: list[tuple[str | None, str, int | None]], report_id: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "report_id": report_id,
            "case_idx": range(1, len(cases) + 1),
            "case_id": [cid for cid, _, _ in cases],
            "input": [text for _, text, _ in cases],
            "status": ["model_error" if c is None else "passed" for _, _, c in cases],
            "tags": [[] for _ in cases],
            "n": pd.array([None if c is None else 4 for _, _, c in cases], dtype="Int64"),
            "c": pd.array([c for _, _, c in cases], dtype="Int64"),
        }
    )


one_case = st.tuples(
    st.one_of(st.none(), st.sampled_from(["id-1", "id-2", "id-3"])),
    st.sampled_from(["p", "q", "r", "s"]),
    st.one_of(st.none(), st.integers(0, 4)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(one_case, max_size=8), st.lists(one_case, max_size=8))
def test_every_case_is_matched_added_or_removed_once(
    base: list[tuple[str | None, str, int | None]], head: list[tuple[str | None, str, int | None]]
) -> None:
    _, _, deltas, matched, added, removed = comparing.compare_cases(
        _frame(base, 1), _frame(head, 2)
    )
    assert len(matched) + len(removed) == len(base)
    assert len(matched) + len(added) == len(head)
    assert {e.bucket for e in matched} <= set(comparing.LEDGER_BUCKETS)
    pairs = [e for e in matched if e.base.passes is not None and e.head.passes is not None]  # type: ignore[union-attr]
    assert [e.bucket != "not evaluated" for e in matched] == [e in pairs for e in matched]
    for d in deltas:
        if d.delta is not None:
            assert d.delta.n_pairs == len(pairs)
            assert d.delta.ci_low <= d.delta.delta <= d.delta.ci_high
            assert np.isclose(d.delta.delta, (d.head or 0) - (d.base or 0))


def test_duplicate_inputs_pair_in_file_order() -> None:
    # two indistinguishable cases (same input, no id) in both releases: paired in order
    _, _, _, matched, added, removed = comparing.compare_cases(
        _frame([(None, "dup", 4), (None, "dup", 0)], 1),
        _frame([(None, "dup", 4), (None, "dup", 4)], 2),
    )
    assert [e.bucket for e in matched] == ["still passing", "fixed"]
    assert added == [] and removed == []


# ---- the command -------------------------------------------------------------------------


def test_cli_text(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        [
            "compare",
            str(reports),
            "--suite",
            "svc",
            "--base",
            "v1",
            "--head",
            "v2",
            "--catalog",
            ":memory:",
        ],
        capsys,
    )
    assert code == 0
    assert out.startswith("relidash compare: suite svc, v1 → v2 (all cases; agent errors excluded)")
    assert "10 cases matched, 9 evaluated in both; 1 added, 1 removed; k = 5" in out
    assert "  pass^5     44.4%   33.3%   -11.1" in out
    assert "  regressed: 1\n" in out and "  added (head only): 1\n" in out


def test_cli_json(reports: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        [
            "compare",
            str(reports),
            "--suite",
            "svc",
            "--base",
            "v1",
            "--head",
            "latest",
            "--k",
            "2",
            "--json",
            "--catalog",
            ":memory:",
        ],
        capsys,
    )
    assert code == 0
    document = json.loads(out)
    assert document["head"]["release"] == "v2" and document["k"] == 2
    assert document["pairs"] == 9 and document["matched"] == 10
    assert set(document["deltas"]) == {"pass_at_1", "pass_at_k", "pass_hat_k"}
    hat = document["deltas"]["pass_hat_k"]
    assert hat["ci_low"] <= hat["delta"] <= hat["ci_high"]
    assert [c["input"] for c in document["ledger"]["regressed"]] == ["B"]
    assert document["removed"][0]["base"] == {
        "case_idx": 8,
        "status": "failed_quality",
        "passes": 4,
        "runs": 5,
    }


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--suite", "nope", "--base", "v1", "--head", "v2"], "no suite named 'nope'"),
        (["--suite", "svc", "--base", "v0", "--head", "v2"], "no release 'v0'"),
        (["--suite", "svc", "--base", "v1", "--head", "v2", "--k", "0"], "--k must be at least 1"),
        (["--suite", "svc", "--base", "v1"], "required: --head"),
    ],
)
def test_cli_usage_errors_exit_2(
    reports: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    code, out, err = run_cli(["compare", str(reports), *extra, "--catalog", ":memory:"], capsys)
    assert code == 2 and message in err and out == ""
