"""Golden tests for Inspect AI logs: real logs written by inspect-ai (tools/
make_inspect_fixtures.py, offline on the mock model), and the numbers Inspect's own
`pass_at(k)` / `pass_k(k)` reducers give for them (tests/expected/inspect.json, computed
in the throwaway venv with `inspect_ai.log.read_eval_log`).

For every log under tests/fixtures/inspect/ and sample_reports/ticket_triage/:
relidash's suite pass@k and pass^k equal the mean of Inspect's per-sample reducer values,
to 1e-9, for every k up to the shortest sample's scored epochs, and are UNKNOWN beyond it
with a reason that counts the samples falling short; its per-sample values equal
Inspect's reducers' and the log's stored `pass_at_<k>` / `pass_k_<k>` reductions; the
case counts, release, format and completeness follow the log. `[inspect]` in
relidash.toml picks the second scorer and another threshold, with Inspect's numbers for
that choice. The Lottery page diffs an Inspect case's epochs as readable transcripts.
"""

from __future__ import annotations

import html
import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import summaries
from app_env import app_serving
from streamlit.testing.v1 import AppTest

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.formats.inspect.log import case_key
from dashboard.data.load.transcripts import TRIAL_COLUMNS, read_case_trials
from dashboard.stats import pass_at_k, pass_hat_k

REPO = Path(__file__).resolve().parents[2]
EXPECTED = REPO / "tests" / "expected" / "inspect.json"
ROOTS = {
    "fixtures": REPO / "tests" / "fixtures" / "inspect",
    "samples": REPO / "sample_reports" / "ticket_triage",
}
APP = REPO / "dashboard" / "app" / "main.py"
TOLERANCE = 1e-9
METRICS = {"pass_at_k": pass_at_k, "pass_hat_k": pass_hat_k}
SECOND_VIEW = "second_scorer_0.5"


def oracle() -> dict[str, dict[str, Any]]:
    numbers: dict[str, dict[str, Any]] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return numbers


def log_files() -> list[tuple[str, str]]:
    """(root label, path relative to that root) of every Inspect log committed."""
    return [
        (label, p.relative_to(root).as_posix())
        for label, root in ROOTS.items()
        for p in sorted(root.rglob("*"))
        if p.suffix in (".eval", ".json")
    ]


def oracle_key(label: str, rel: str) -> str:
    return (ROOTS[label] / rel).relative_to(REPO).as_posix()


def load(root: Path) -> Any:
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    return con


@pytest.fixture(scope="module")
def catalogs() -> Iterator[dict[str, Any]]:
    opened = {label: load(root) for label, root in ROOTS.items()}
    yield opened
    for con in opened.values():
        con.close()


@pytest.fixture(scope="module")
def documents(catalogs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {label: summaries.summary_json(con) for label, con in catalogs.items()}


@pytest.fixture(scope="module")
def second_view(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The fixtures read with relidash.toml's [inspect] naming the second scorer at 0.5."""
    root = tmp_path_factory.mktemp("second") / "reports"
    shutil.copytree(ROOTS["fixtures"], root)
    (root / "relidash.toml").write_text('[inspect]\nscorer = "tool_use"\npass_threshold = 0.5\n')
    con = load(root)
    yield {"document": summaries.summary_json(con), "con": con}
    con.close()


def record(document: dict[str, Any], rel: str) -> dict[str, Any]:
    (found,) = [r for r in document["reports"] if r["file"] == rel]
    return found


def case_rows(con: Any, rel: str, count_agent_errors: bool = False) -> list[dict[str, Any]]:
    rows = fetch_rows(
        con,
        "read/suite_cases",
        suite="ticket_triage",
        count_agent_errors=count_agent_errors,
        report_ids=None,
    )
    return [r for r in rows if r["file"] == rel]


# ---- the oracle covers what is committed -----------------------------------------------------


def test_every_log_has_inspect_numbers() -> None:
    numbers = oracle()
    keys = {oracle_key(label, rel) for label, rel in log_files()}
    assert keys == set(numbers)
    assert len([k for k in keys if k.startswith("sample_reports/")]) >= 3
    statuses = {v["status"] for v in numbers.values()}
    assert {"success", "cancelled", "error", "started"} <= statuses
    assert {v["epochs"] for v in numbers.values()} >= {3, 8}
    assert any(
        (r["reducer"] or "").startswith("pass_at_")
        for v in numbers.values()
        for r in v["stored_reductions"]
    )
    assert any(n["views"]["default"]["errored_samples"] for n in numbers.values())


# ---- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize(("label", "rel"), log_files())
def test_suite_numbers_equal_the_mean_of_inspects_reducers(
    documents: dict[str, dict[str, Any]], label: str, rel: str
) -> None:
    expected = oracle()[oracle_key(label, rel)]
    view = expected["views"]["default"]
    got = record(documents[label], rel)
    shortest = view["min_scored_epochs"]
    checked = 0
    for metric in METRICS:
        for k, want in view[metric].items():
            cell = got[metric][k]
            if int(k) <= shortest:
                assert want["mean"] is not None
                assert cell["value"] == pytest.approx(want["mean"], abs=TOLERANCE, rel=0), (
                    metric,
                    k,
                )
                assert cell["ci_low"] <= cell["value"] <= cell["ci_high"]
                checked += 1
            else:
                assert cell["value"] is None, (metric, k)
                reason = cell["unknown_reason"]
                assert reason.startswith(f"UNKNOWN — k={k} exceeds the {shortest} scored epoch")
                samples = [expected["samples"][s] for s in view["evaluated_samples"]]
                short = sum(len(s["epochs"]) - len(s["errored_epochs"]) < int(k) for s in samples)
                counted = f"; {short} of {len(samples)} samples have fewer than {k}"
                assert counted in reason or "of each sample" in reason, reason
    assert checked >= 2


@pytest.mark.parametrize(("label", "rel"), log_files())
def test_per_sample_values_equal_inspects_reducers(
    catalogs: dict[str, Any], label: str, rel: str
) -> None:
    expected = oracle()[oracle_key(label, rel)]
    view = expected["views"]["default"]
    rows = {r["case_id"]: r for r in case_rows(catalogs[label], rel)}
    for metric, estimator in METRICS.items():
        for k, want in view[metric].items():
            for sample, value in want["per_sample"].items():
                row = rows[case_key(expected["samples"][sample]["id"])]
                if value is None:  # Inspect: fewer than k scored epochs
                    assert row["n"] < int(k)
                else:
                    mine = float(estimator(row["n"], row["c"], int(k)))
                    assert mine == pytest.approx(value, abs=TOLERANCE, rel=0), (sample, metric, k)


def stored_cases() -> list[tuple[str, str]]:
    return [
        (label, rel)
        for label, rel in log_files()
        if any(r["reducer"] for r in oracle()[oracle_key(label, rel)]["stored_reductions"])
    ]


@pytest.mark.parametrize(("label", "rel"), stored_cases())
def test_per_sample_values_equal_the_stored_reductions(
    catalogs: dict[str, Any], label: str, rel: str
) -> None:
    expected = oracle()[oracle_key(label, rel)]
    scorer = expected["scorers"][0]
    rows = {r["case_id"]: r for r in case_rows(catalogs[label], rel)}
    compared = 0
    for reduction in expected["stored_reductions"]:
        reducer = reduction["reducer"] or ""
        if reduction["scorer"] != scorer or not reducer.startswith(("pass_at_", "pass_k_")):
            continue
        k = int(reducer.rsplit("_", 1)[1])
        estimator = pass_at_k if reducer.startswith("pass_at_") else pass_hat_k
        for sample, value in reduction["samples"].items():
            row = rows[case_key(expected["samples"][sample]["id"])]
            if value != value or row["n"] is None or row["n"] < k:  # NaN: too few epochs
                continue
            assert float(estimator(row["n"], row["c"], k)) == pytest.approx(value, abs=TOLERANCE)
            compared += 1
    assert compared >= 4


@pytest.mark.parametrize(("label", "rel"), [p for p in log_files() if p[0] == "fixtures"])
def test_second_scorer_and_threshold_from_relidash_toml(
    second_view: dict[str, Any], label: str, rel: str
) -> None:
    expected = oracle()[oracle_key(label, rel)]["views"][SECOND_VIEW]
    got = record(second_view["document"], rel)
    for metric in METRICS:
        for k, want in expected[metric].items():
            if int(k) <= expected["min_scored_epochs"]:
                assert got[metric][k]["value"] == pytest.approx(want["mean"], abs=TOLERANCE, rel=0)
    default = oracle()[oracle_key(label, rel)]["views"]["default"]
    assert expected["pass_at_k"]["1"]["mean"] != default["pass_at_k"]["1"]["mean"]


# ---- what a report says about its log ------------------------------------------------------


@pytest.mark.parametrize(("label", "rel"), log_files())
def test_report_fields_follow_the_log(
    documents: dict[str, dict[str, Any]], label: str, rel: str
) -> None:
    expected = oracle()[oracle_key(label, rel)]
    view = expected["views"]["default"]
    got = record(documents[label], rel)
    assert got["harness"] == "inspect-ai"
    assert got["format"] == f"inspect-ai {expected['inspect_ai']} (log v{expected['version']})"
    assert got["suite"] == expected["task"]
    assert got["release"] == expected["release"]
    assert got["upgraded"] is False
    assert got["log_status"] == expected["status"]
    assert got["complete"] is (expected["status"] == "success")
    assert got["cases"] == {
        "total": len(expected["samples"]),
        "evaluated": len(view["evaluated_samples"]),
        "errored": len(view["errored_samples"]),
        "skipped": 0,
        "excluded": 0,
    }
    runs = [len(s["epochs"]) for s in expected["samples"].values()]
    assert got["runs"] == {"min": min(runs), "max": max(runs)}


@pytest.mark.parametrize("label", list(ROOTS))
def test_real_logs_raise_no_problem(documents: dict[str, dict[str, Any]], label: str) -> None:
    """Incomplete logs (cancelled, error, interrupted) load what they hold: never a problem."""
    assert documents[label]["problems"] == []
    assert len(documents[label]["reports"]) == len([p for p in log_files() if p[0] == label])


def test_releases_follow_eval_created_and_metadata_release(catalogs: dict[str, Any]) -> None:
    rows = fetch_rows(catalogs["samples"], "read/report_overview", suites=None, release=None)
    assert [r["release"] for r in rows] == ["v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0"]
    assert [r["release_rank"] for r in rows] == [1, 2, 3, 4]
    assert {r["release_source"] for r in rows} == {"metadata:release"}
    assert [r["file"][:10] for r in rows] == sorted(r["file"][:10] for r in rows)


def test_release_key_metadata_name(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    shutil.copytree(ROOTS["samples"], root)
    (root / "relidash.toml").write_text('[releases]\nkey = "metadata:agent"\n')
    con = load(root)
    rows = fetch_rows(con, "read/report_overview", suites=None, release=None)
    assert {(r["release"], r["release_source"]) for r in rows} == {("triage-bot", "metadata:agent")}
    (root / "relidash.toml").write_text('[releases]\nkey = "metadata:no_such_key"\n')
    loading.refresh_catalog(con, root)
    rows = fetch_rows(con, "read/report_overview", suites=None, release=None)
    assert {(r["release"], r["release_source"]) for r in rows} == {
        (Path(r["file"]).stem, "file_stem") for r in rows
    }
    assert summaries.summary_json(con)["problems"] == []


def test_counting_agent_errors_makes_errored_epochs_failed_trials(catalogs: dict[str, Any]) -> None:
    rel = "ticket_triage/v2.2.0_epochs8_reducers.eval"
    expected = oracle()[oracle_key("fixtures", rel)]
    default = {r["case_id"]: r for r in case_rows(catalogs["fixtures"], rel)}
    counted = {r["case_id"]: r for r in case_rows(catalogs["fixtures"], rel, True)}
    errored_somewhere = 0
    for sample in expected["samples"].values():
        key = case_key(sample["id"])
        errored = len(sample["errored_epochs"])
        scored = len(sample["epochs"]) - errored
        assert counted[key]["n"] == len(sample["epochs"])
        if scored:
            assert default[key]["n"] == scored
            assert counted[key]["c"] == default[key]["c"]
        else:  # every epoch errored: an errored case, 0 of its epochs when errors count
            assert default[key]["n"] is None and default[key]["status"] == "model_error"
            assert counted[key]["c"] == 0
        errored_somewhere += errored > 0
    assert errored_somewhere >= 3


def test_a_changed_inspect_table_reads_the_logs_again(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    shutil.copytree(ROOTS["fixtures"], root)
    con = load(root)
    rel = "ticket_triage/v2.0.0_epochs3.eval"
    before = record(summaries.summary_json(con), rel)["pass_at_k"]["1"]["value"]
    (root / "relidash.toml").write_text('[inspect]\nscorer = "tool_use"\npass_threshold = 0.5\n')
    result = loading.refresh_catalog(con, root)
    assert result.parsed == len(list(root.rglob("*.eval"))) + len(list(root.rglob("*.json")))
    after = record(summaries.summary_json(con), rel)["pass_at_k"]["1"]["value"]
    want = oracle()[oracle_key("fixtures", rel)]["views"][SECOND_VIEW]["pass_at_k"]["1"]["mean"]
    assert after == pytest.approx(want, abs=TOLERANCE) and after != before
    assert loading.refresh_catalog(con, root).parsed == 0  # unchanged table: nothing read again
    (root / "relidash.toml").write_text('[inspect]\nscorer = "no_such_scorer"\n')
    loading.refresh_catalog(con, root)
    problems = summaries.summary_json(con)["problems"]
    fixture_logs = [rel for label, rel in log_files() if label == "fixtures"]
    assert len(problems) == len(fixture_logs)  # one per log
    assert all("no scorer 'no_such_scorer'" in p["reason"] for p in problems)
    assert all("resolution, tool_use" in p["reason"] for p in problems)
    (root / "relidash.toml").write_text('[inspect]\npass_threshold = "high"\n')
    loading.refresh_catalog(con, root)
    problems = summaries.summary_json(con)["problems"]
    assert [(p["file"], p["scope"]) for p in problems] == [("relidash.toml", "report")]
    assert problems[0]["reason"].startswith("[inspect] scorer must be")


def test_a_warm_load_reads_nothing(catalogs: dict[str, Any]) -> None:
    con = catalogs["samples"]
    before = summaries.summary_json(con)
    result = loading.refresh_catalog(con, ROOTS["samples"])
    assert (result.parsed, result.unchanged) == (0, result.files)
    assert summaries.summary_json(con) == before


# ---- transcripts on demand -----------------------------------------------------------------


def lottery_case(con: Any, rel: str) -> tuple[int, int]:
    (report_id,) = [
        r["report_id"]
        for r in fetch_rows(con, "read/report_overview", suites=None, release=None)
        if r["file"] == rel
    ]
    rows = con.execute(
        "SELECT case_idx FROM cases WHERE report_id = $r AND c > 0 AND c < n ORDER BY case_idx",
        {"r": report_id},
    ).fetchall()
    return report_id, int(rows[0][0])


@pytest.mark.parametrize(
    "rel", ["ticket_triage/v2.2.0_epochs8_reducers.eval", "ticket_triage/v2.1.0_epochs5_json.json"]
)
def test_case_trials_are_the_epochs_as_readable_transcripts(
    catalogs: dict[str, Any], rel: str
) -> None:
    con = catalogs["fixtures"]
    report_id, case_idx = lottery_case(con, rel)
    trials = read_case_trials(con, report_id, case_idx)
    assert list(trials.columns) == list(TRIAL_COLUMNS)
    assert list(trials["run_index"]) == sorted(trials["run_index"])
    assert {"passed", "failed_quality"} <= set(trials["status"])
    passing = trials[trials["status"] == "passed"].iloc[0]
    text = passing["output"]
    assert text.startswith("[user]\n")
    assert "[assistant]\nStep 1: calling search_kb.\n-> tool call search_kb(query=" in text
    assert "[tool result: search_kb]\n3 articles match" in text
    assert "[assistant: final answer]\nResolution: " in text
    assert "[score resolution: C, passed]\nanswer: Resolution: " in text
    assert "explanation: right resolution and team" in text
    assert "[score tool_use: " in text
    graders = json.loads(passing["evaluators"])
    assert [g["name"] for g in graders] == ["resolution", "tool_use"]
    assert graders[0]["passed"] is True and graders[0]["score"] == 1.0
    assert graders[1]["passed"] is None  # only the chosen scorer decides a trial
    failing = trials[trials["status"] == "failed_quality"].iloc[0]
    assert "[score resolution: " in failing["output"] and ", failed]" in failing["output"]
    for errored in trials[trials["status"] == "model_error"].itertuples():
        assert "[error]\nRuntimeError(" in errored.output
        assert "connection reset" in errored.model_error


# ---- pages ---------------------------------------------------------------------------------


@pytest.fixture
def app_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "reports"
    shutil.copytree(ROOTS["samples"], root / "ticket_triage")
    shutil.copytree(ROOTS["fixtures"] / "ticket_triage", root / "fixtures")
    with app_serving(root, tmp_path / "reviews", monkeypatch):
        yield root


def test_lottery_page_diffs_two_epochs_of_an_inspect_sample(app_on: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run(timeout=60)
    at.query_params.update({"suite": "ticket_triage", "release": "v2.2.0"})
    at.switch_page("page_scripts/lottery.py")
    at.run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Lottery cases"]
    assert at.selectbox(key="lottery_release").value == "v2.2.0"
    diff = at.html[0].value
    assert "<table class='rd'>" in diff
    # the diff as a reader sees it: changed words are wrapped in <mark>, which splits a
    # line's text in the HTML (the case shown first, the flakiest, has its final answer
    # line changed between the two trials)
    diff = html.unescape(re.sub(r"<[^>]*>", "", diff))
    for shown in ("[assistant: final answer]", "tool call search_kb(query=", "[score resolution: "):
        assert shown in diff, shown
    assert "run " in diff and "(passed)" in diff


def test_data_page_shows_the_harness_and_incomplete_logs(app_on: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run(timeout=60)
    at.switch_page("page_scripts/data.py")
    at.run(timeout=60)
    assert not at.exception, [e.value for e in at.exception]
    files = at.dataframe[0].value.set_index("file")
    assert set(files["harness"]) == {"inspect-ai"}
    assert files.loc["fixtures/v2.3.0_epochs4_cancelled.eval", "log_status"] == "cancelled"
    assert files.loc["fixtures/v2.5.0_epochs4_interrupted.eval", "log_status"] == "started"
    assert files.loc["ticket_triage/2026-01-12_v2.0.0.eval", "log_status"] == "success"
    assert len(at.dataframe) == 1 and at.success  # no problems: incomplete is not a problem


PAGE_TITLES = {
    "releases": "Releases",
    "slices": "Slices",
    "lottery": "Lottery cases",
    "case": "Case",
    "gates": "Gates",
    "calculator": "Calculator",
    "data": "Data",
    "review": "Release review",
    "reviews": "Reviews",
}


def test_every_page_works_on_an_inspect_suite(app_on: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run(timeout=60)
    at.query_params.update({"suite": "ticket_triage"})
    for page, title in PAGE_TITLES.items():
        at.switch_page(f"page_scripts/{page}.py")
        at.run(timeout=60)
        assert not at.exception, (page, [e.value for e in at.exception])
        assert [t.value for t in at.title] == [title], page


# ---- the CLI -------------------------------------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, str]:
    import contextlib
    import io

    from dashboard.cli import main as cli

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    return code, out.getvalue()


def test_gate_and_compare_on_an_inspect_suite() -> None:
    root = str(ROOTS["samples"])
    code, out = run_cli(
        [
            "gate",
            root,
            "--suite",
            "ticket_triage",
            "--release",
            "v2.0.0",
            "--k",
            "2",
            "--min-value",
            "0.0",
            "--catalog",
            MEMORY,
        ]  # fmt: skip
    )
    assert code == 0 and "pass^2 gate PASSED" in out, out
    code, out = run_cli(
        [
            "gate",
            root,
            "--suite",
            "ticket_triage",
            "--release",
            "v2.1.0",
            "--k",
            "5",
            "--min-value",
            "0.0",
            "--catalog",
            MEMORY,
        ]  # fmt: skip
    )
    assert code == 1 and "UNKNOWN" in out, out  # k beyond the shortest sample's scored epochs
    code, out = run_cli(
        [
            "compare",
            root,
            "--suite",
            "ticket_triage",
            "--base",
            "v2.0.0",
            "--head",
            "v2.3.0",
            "--k",
            "2",
            "--json",
            "--catalog",
            MEMORY,
        ]  # fmt: skip
    )
    assert code == 0, out
    document = json.loads(out)
    assert document and "ticket_triage" in out
