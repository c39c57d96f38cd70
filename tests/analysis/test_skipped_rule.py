"""A case none of whose graders measured anything is skipped, and left out of every count.

From multivon-eval 0.17 a grader with nothing to check returns a result flagged
`metadata.skipped`; a case whose every grader skipped, with no error, is SKIPPED and
leaves the denominators (0.20.0 result.py:164-178). relidash recomputes the status as
`EvalReport.from_dict` does (formats/multivon/queries/stage_cases.sql).

The package never writes such a case without the case-level flag as well: its to_json
stores `"skipped": status == SKIPPED` (0.17.0 and 0.20.0 alike), so in a file exactly as
written the flag decides before the grader rule is reached, and no real fixture can show
the grader rule at work on its own. The rule is pinned here on the real 0.17.0 fixture
with the flag taken away (removed, or false): upstream's from_dict accepts both and gives
exactly the numbers it gives the untouched file (tests/expected/fixtures.json), since its
own grader rule makes the case skipped again. With RELIDASH_UPSTREAM_PYTHON set (always
under `make test` and CI: tests/support/required_tools.py), upstream is asked again about the
edited files themselves.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from required_tools import upstream_python

from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.load.ingest import ingest_directory

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "mv-0.17.0_skipped-case_runs5.json"
UPSTREAM = json.loads((REPO / "tests" / "expected" / "fixtures.json").read_text())[FIXTURE.name]
TOLERANCE = 1e-9


def without_flag(data: dict[str, Any], index: int) -> dict[str, Any]:
    edited = json.loads(json.dumps(data))
    del edited["cases"][index]["skipped"]
    return edited


def with_flag_false(data: dict[str, Any], index: int) -> dict[str, Any]:
    edited = json.loads(json.dumps(data))
    edited["cases"][index]["skipped"] = False
    return edited


VARIANTS = {
    FIXTURE.name: None,  # as multivon-eval 0.17.0 wrote it: the flag decides
    "flag-removed.json": without_flag,  # the grader rule decides
    "flag-false.json": with_flag_false,
}


def every_grader_skipped(case: dict[str, Any]) -> bool:
    graders = case.get("evaluators") or []
    return bool(graders) and all((g.get("metadata") or {}).get("skipped") for g in graders)


def skipped_case_index() -> int:
    """The fixture's one case whose every grader skipped (0-based, in file order)."""
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    found = [i for i, c in enumerate(data["cases"]) if every_grader_skipped(c)]
    assert len(found) == 1, f"{FIXTURE.name} should hold one all-skipped case, not {found}"
    case = data["cases"][found[0]]
    assert case["model_error"] is None and case["judge_error"] is None
    assert case["evaluator_error"] is None
    return found[0]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reports")
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    index = skipped_case_index()
    for name, edit in VARIANTS.items():
        if edit is None:
            shutil.copyfile(FIXTURE, root / name)
        else:
            (root / name).write_text(json.dumps(edit(data, index), indent=2), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def statuses(reports: Path) -> dict[str, list[tuple[str, int | None]]]:
    """file -> (status, trials counted) of each case, in file order, as the catalog holds them."""
    con = open_catalog(MEMORY)
    try:
        ingest_directory(con, reports)
        rows = con.execute(
            "SELECT r.file, c.status, c.n FROM cases c JOIN reports r USING (report_id) "
            "ORDER BY r.file, c.case_idx"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, list[tuple[str, int | None]]] = {}
    for file, status, n in rows:
        out.setdefault(file, []).append((status, n))
    return out


@pytest.fixture(scope="module")
def records(reports: Path) -> dict[str, Any]:
    """file -> its entry of `relidash summary --json`, and "problems" -> the problems listed."""
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli", "summary", str(reports), "--json"]
        + ["--catalog", MEMORY],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    return {r["file"]: r for r in document["reports"]} | {"problems": document["problems"]}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_the_all_skipped_case_is_skipped_and_counts_nowhere(
    statuses: dict[str, list[tuple[str, int | None]]], name: str
) -> None:
    cases = statuses[name]
    status, counted = cases[skipped_case_index()]
    assert status == "skipped"
    assert counted is None  # no trials of it reach an estimator
    assert sum(s == "skipped" for s, _ in cases) == UPSTREAM["skipped"] == 1


@pytest.mark.parametrize("name", list(VARIANTS))
def test_counts_and_estimates_are_upstreams(records: dict[str, Any], name: str) -> None:
    """Upstream's numbers for the file as written hold for the edited ones too."""
    record = records[name]
    cases = record["cases"]
    assert (cases["total"], cases["evaluated"], cases["errored"], cases["skipped"]) == (
        UPSTREAM["total"],
        UPSTREAM["evaluated"],
        UPSTREAM["errors"],
        UPSTREAM["skipped"],
    )
    for metric in ("pass_at_k", "pass_hat_k"):
        for k, want in UPSTREAM[metric].items():
            got = record[metric][k]
            assert got["unknown_reason"] == want["unknown_reason"], f"{metric} k={k}"
            for field in ("value", "ci_low", "ci_high"):
                expected = (
                    None
                    if want[field] is None
                    else pytest.approx(want[field], abs=TOLERANCE, rel=0)
                )
                assert got[field] == expected, f"{name} {metric} k={k} {field}"


def test_the_stored_estimates_agree_with_the_cases(records: dict[str, Any]) -> None:
    """0.17.0 stored pass@5 / pass^5 computed without the skipped case: no file's cases
    disagree with its summary block."""
    assert records["problems"] == []


@pytest.mark.upstream
def test_upstream_gives_the_edited_files_the_numbers_of_the_original(reports: Path) -> None:
    """The oracle above, checked: multivon-eval itself on the edited files."""
    python = upstream_python()
    out = reports.parent / "upstream.json"
    edited = [reports / name for name, edit in VARIANTS.items() if edit is not None]
    subprocess.run(
        [python, str(REPO / "tools" / "upstream_numbers.py"), "--root", str(reports)]
        + ["--out", str(out), *map(str, edited)],
        cwd=REPO,
        capture_output=True,
        check=True,
        timeout=600,
    )
    for name, numbers in json.loads(out.read_text(encoding="utf-8")).items():
        assert numbers == UPSTREAM, name
