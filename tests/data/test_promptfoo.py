"""promptfoo evals read through the real load path, against promptfoo's own numbers.

The fixtures (tests/fixtures/promptfoo/, written by promptfoo itself) carry expected.json:
per file and per (prompt, provider) pair, promptfoo's own testPassCount, testFailCount
and testErrorCount, and each test's rows. For every file and pair, the catalog's passed,
failed and errored trials equal promptfoo's counts (errors left out of n by default,
failures when agent errors count); each test's n and c are its repeats', and the suite's
pass@k / pass^k are the mean of the unbiased estimators over its tests. Releases, the
reworded and added tests, the export twin, cached replays, the .jsonl problem, the
`[promptfoo]` table and the transcripts of a test's repeats are checked as a user meets
them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from math import comb
from pathlib import Path
from typing import Any

import pytest
import summaries

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.formats import harness_of
from dashboard.data.load.transcripts import TRIAL_COLUMNS, read_case_trials
from dashboard.stats import pass_at_k, pass_hat_k

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "promptfoo"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
EVALS = sorted(name for name in EXPECTED["files"] if name.endswith(".json"))
TOLERANCE = 1e-9


def copy_fixtures(root: Path) -> Path:
    """The eval outputs (not expected.json, which is no report) in a directory of their own."""
    root.mkdir(parents=True)
    for name in EXPECTED["files"]:
        shutil.copy(FIXTURES / name, root / name)
    return root


def load(root: Path) -> Any:
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    return con


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    con = load(copy_fixtures(tmp_path_factory.mktemp("pf") / "reports"))
    yield {"con": con, "document": summaries.summary_json(con)}
    con.close()


def description(name: str) -> str:
    return str(EXPECTED["files"][name]["description"])


def suite_name(name: str, pair: dict[str, Any]) -> str:
    """The suite the issue names: description, prompt label, provider label; one pair alone."""
    if len(EXPECTED["files"][name]["suites"]) == 1:
        return description(name)
    return f"{description(name)} · {pair['prompt']} · {pair['provider']}"


def pairs() -> list[tuple[str, int]]:
    return [(name, i) for name in EVALS for i in range(len(EXPECTED["files"][name]["suites"]))]


def case_key(test: dict[str, Any]) -> str:
    if test["by"] != "vars":
        return str(test["key"])
    canonical = json.dumps(test["key"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "vars:" + hashlib.sha256(canonical.encode()).hexdigest()[:12]


def report_of(con: Any, name: str, suite: str) -> dict[str, Any]:
    rows = fetch_rows(con, "read/report_overview", suites=[suite], release=None)
    (found,) = [r for r in rows if r["file"] == name]
    return found


def cases_of(con: Any, suite: str, name: str, count_agent_errors: bool) -> list[dict[str, Any]]:
    rows = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=count_agent_errors, report_ids=None
    )
    return [r for r in rows if r["file"] == name]


# ---- promptfoo's own counts ----------------------------------------------------------------


@pytest.mark.parametrize(("name", "index"), pairs())
def test_passes_fails_errors_equal_promptfoos_metrics(
    loaded: dict[str, Any], name: str, index: int
) -> None:
    pair = EXPECTED["files"][name]["suites"][index]
    suite = suite_name(name, pair)
    con = loaded["con"]
    report = report_of(con, name, suite)
    assert report["release"] == EXPECTED["files"][name]["tags"]["release"]
    assert report["harness"] == "promptfoo" and report["model"] == pair["provider"]
    left_out = cases_of(con, suite, name, count_agent_errors=False)
    counted = cases_of(con, suite, name, count_agent_errors=True)
    passes = sum(r["c"] or 0 for r in left_out)
    fails = sum(r["n"] or 0 for r in left_out) - passes
    errors = sum(r["n"] or 0 for r in counted) - sum(r["n"] or 0 for r in left_out)
    assert (passes, fails, errors) == (
        pair["testPassCount"],
        pair["testFailCount"],
        pair["testErrorCount"],
    )
    # counting agent errors makes every errored repeat a failed one
    assert sum(r["c"] or 0 for r in counted) == passes
    assert sum(r["n"] or 0 for r in counted) == passes + fails + errors


@pytest.mark.parametrize(("name", "index"), pairs())
def test_each_test_is_a_case_and_its_repeats_its_trials(
    loaded: dict[str, Any], name: str, index: int
) -> None:
    pair = EXPECTED["files"][name]["suites"][index]
    suite = suite_name(name, pair)
    rows = {r["case_id"]: r for r in cases_of(loaded["con"], suite, name, False)}
    assert list(rows) == [case_key(t) for t in pair["tests"]]  # in the order they ran
    shortest = None
    estimates: dict[str, dict[int, list[float]]] = {"pass_at_k": {}, "pass_hat_k": {}}
    for test in pair["tests"]:
        row = rows[case_key(test)]
        graded = [r for r in test["rows"] if r[2] != 2]
        n, c = len(graded), sum(1 for r in graded if r[1])
        assert row["n_trials"] == len(test["rows"])
        assert (row["n"], row["c"]) == ((n, c) if n else (None, None))
        if not n:
            assert row["status"] == "model_error"
            continue
        shortest = n if shortest is None else min(shortest, n)
        for k in range(1, n + 1):
            at = 1.0 - comb(n - c, k) / comb(n, k)
            hat = comb(c, k) / comb(n, k)
            assert float(pass_at_k(row["n"], row["c"], k)) == pytest.approx(at, abs=TOLERANCE)
            assert float(pass_hat_k(row["n"], row["c"], k)) == pytest.approx(hat, abs=TOLERANCE)
            estimates["pass_at_k"].setdefault(k, []).append(at)
            estimates["pass_hat_k"].setdefault(k, []).append(hat)
    (record,) = [
        r for r in loaded["document"]["reports"] if r["file"] == name and r["suite"] == suite
    ]
    assert shortest is not None
    for metric, by_k in estimates.items():
        for k in range(1, shortest + 1):
            want = sum(by_k[k]) / len(by_k[k])
            assert record[metric][str(k)]["value"] == pytest.approx(want, abs=TOLERANCE)


def test_slices_are_the_tests_metadata_but_its_key(loaded: dict[str, Any]) -> None:
    suite = "Ticket routing · terse · router-small"
    rows = {
        r["case_id"]: r for r in cases_of(loaded["con"], suite, "ticket_routing_v1.json", False)
    }
    assert sorted(rows["double-charge"]["tags"]) == ["difficulty:easy", "queue:billing"]
    assert all(not t.startswith(("case_id:", "id:")) for r in rows.values() for t in r["tags"])


# ---- releases and cases across evals -------------------------------------------------------


RELEASE_SUITES = [
    f"Ticket routing · {s['prompt']} · {s['provider']}"
    for s in EXPECTED["files"]["ticket_routing_v1.json"]["suites"]
]


@pytest.mark.parametrize("suite", RELEASE_SUITES)
def test_three_releases_in_order_with_reworded_and_added_tests(
    loaded: dict[str, Any], suite: str
) -> None:
    con = loaded["con"]
    rows = fetch_rows(con, "read/report_overview", suites=[suite], release=None)
    assert [(r["release"], r["release_rank"]) for r in rows] == [("v1", 1), ("v2", 2), ("v3", 3)]
    cases = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=False, report_ids=None
    )
    by_release: dict[str, dict[str, str]] = {}
    for row in cases:
        by_release.setdefault(row["release"], {})[row["case_id"]] = row["input"]
    # the reworded test keeps its case_id: one case, its description changed
    assert {r: "address-change" in ids for r, ids in by_release.items()} == dict.fromkeys(
        ("v1", "v2", "v3"), True
    )
    assert by_release["v1"]["address-change"] != by_release["v2"]["address-change"]
    assert by_release["v2"]["address-change"] == by_release["v3"]["address-change"]
    # the added test exists from v2 on
    assert [("gift-card-balance" in by_release[r]) for r in ("v1", "v2", "v3")] == [
        False,
        True,
        True,
    ]


def test_an_eval_of_one_pair_is_named_by_its_description(loaded: dict[str, Any]) -> None:
    record = [r for r in loaded["document"]["reports"] if r["file"] == "single_pair.json"]
    assert [r["suite"] for r in record] == ["Ticket routing smoke"]


def test_the_export_loads_as_its_twin(loaded: dict[str, Any]) -> None:
    records = {r["file"]: r for r in loaded["document"]["reports"]}
    twin, export = records["single_pair.json"], records["single_pair_export.json"]
    assert {**export, "file": "single_pair.json"} == twin
    con = loaded["con"]
    suite = twin["suite"]
    strip = ("report_id", "file")
    assert [
        {k: v for k, v in r.items() if k not in strip}
        for r in cases_of(con, suite, "single_pair_export.json", True)
    ] == [
        {k: v for k, v in r.items() if k not in strip}
        for r in cases_of(con, suite, "single_pair.json", True)
    ]


# ---- problems ------------------------------------------------------------------------------


def test_cached_replays_are_a_report_warning_naming_their_count(loaded: dict[str, Any]) -> None:
    problems = loaded["document"]["problems"]
    warned = [p for p in problems if "cached" in p["reason"]]
    want = []
    for name in ("cached_run1.json", "cached_run2.json"):
        for pair in EXPECTED["files"][name]["suites"]:
            rows = [r for t in pair["tests"] for r in t["rows"]]
            replayed = sum(1 for r in rows if r[3])
            if replayed:
                want.append((name, suite_name(name, pair), replayed, len(rows)))
    assert len(want) == 2 and all(count > 0 for _, _, count, _ in want)
    assert len(warned) == len(want)
    for name, suite, count, total in want:
        (problem,) = [p for p in warned if p["file"] == name and repr(suite) in p["reason"]]
        assert problem["scope"] == "report"
        assert problem["reason"].startswith(
            f"{count} of {total} rows of suite {suite!r} are replays from promptfoo's cache"
        )
        assert "not independent trials" in problem["reason"]


def test_jsonl_outputs_are_problems_that_say_what_to_do(
    loaded: dict[str, Any], tmp_path: Path
) -> None:
    (problem,) = [p for p in loaded["document"]["problems"] if p["file"] == "single_pair.jsonl"]
    assert problem["scope"] == "file"
    assert "promptfoo's JSON Lines output" in problem["reason"]
    assert "promptfoo eval -o results.json" in problem["reason"]
    assert "promptfoo export eval <id> -o results.json" in problem["reason"]
    assert len(problem["reason"]) <= 150  # the commands fit a terminal's problem line
    root = tmp_path / "other"
    root.mkdir()
    (root / "events.jsonl").write_text('{"event": "start"}\n{"event": "end"}\n')
    con = load(root)
    (other,) = summaries.summary_json(con)["problems"]
    assert other["file"] == "events.jsonl"
    assert other["reason"].startswith("is JSON Lines, not a report relidash reads")
    con.close()


def test_only_eval_files_are_claimed(tmp_path: Path) -> None:
    head = (FIXTURES / "single_pair.json").read_bytes()[:256]
    assert harness_of("a.json", head) == "promptfoo"
    assert harness_of("a.json", b'\xef\xbb\xbf \n {"evalId": "eval-x", "results"') == "promptfoo"
    assert harness_of("a.json", b'{"config": {}, "results": {}, "evalId": "x"}') == "promptfoo"
    assert harness_of("a.json", b'{"suite": "s", "results": []}') == "multivon-eval"
    assert harness_of("expected.json", (FIXTURES / "expected.json").read_bytes()[:256]) != (
        "promptfoo"
    )
    assert harness_of("x.jsonl", b'{"a": 1}') == "promptfoo"


# ---- relidash.toml -------------------------------------------------------------------------


def retag(root: Path, name: str, tags: dict[str, str]) -> None:
    data = json.loads((root / name).read_text(encoding="utf-8"))
    data["config"]["tags"] = tags
    (root / name).write_text(json.dumps(data), encoding="utf-8")


def test_release_from_another_tag_or_the_timestamp(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path / "reports")
    for name, build in (("ticket_routing_v1.json", "b101"), ("ticket_routing_v2.json", "b102")):
        retag(root, name, {"release": name[-7:-5], "build": build})
    con = load(root)
    suite = RELEASE_SUITES[0]

    def releases() -> list[tuple[str, str]]:
        rows = fetch_rows(con, "read/report_overview", suites=[suite], release=None)
        return [(r["release"], r["file"]) for r in rows]

    assert [r for r, _ in releases()] == ["v1", "v2", "v3"]
    (root / "relidash.toml").write_text('[promptfoo]\nrelease = "tag:build"\n')
    loading.refresh_catalog(con, root)
    v3 = json.loads((root / "ticket_routing_v3.json").read_text())["results"]["timestamp"]
    assert releases() == [
        ("b101", "ticket_routing_v1.json"),
        ("b102", "ticket_routing_v2.json"),
        (v3.split(".")[0] + "Z", "ticket_routing_v3.json"),  # no build tag: its timestamp
    ]
    (root / "relidash.toml").write_text('[promptfoo]\nrelease = "timestamp"\n')
    loading.refresh_catalog(con, root)
    assert all(r.startswith("2026-") and r.endswith("Z") for r, _ in releases())
    (root / "relidash.toml").write_text('[promptfoo]\nrelease = "build"\n')
    loading.refresh_catalog(con, root)
    assert [r for r, _ in releases()] == ["v1", "v2", "v3"]
    problems = summaries.summary_json(con)["problems"]
    (problem,) = [p for p in problems if p["file"] == "relidash.toml"]
    assert problem["reason"].startswith('[promptfoo] must be a table whose release is "tag:NAME"')
    con.close()


def test_release_key_reads_the_reports_metadata(tmp_path: Path) -> None:
    root = copy_fixtures(tmp_path / "reports")
    (root / "relidash.toml").write_text('[releases]\nkey = "metadata:evalId"\n')
    con = load(root)
    rows = fetch_rows(con, "read/report_overview", suites=None, release=None)
    for row in rows:
        assert row["release"] == EXPECTED["files"][row["file"]]["evalId"]
        assert row["release_source"] == "metadata:evalId"
    con.close()


# ---- transcripts ---------------------------------------------------------------------------


def mixed_case(con: Any, name: str) -> tuple[int, int, dict[str, Any], dict[str, Any]]:
    """A test of `name` whose repeats passed, failed and errored, with its pair and test."""
    for pair in EXPECTED["files"][name]["suites"]:
        for test in pair["tests"]:
            reasons = {r[2] for r in test["rows"]}
            if reasons == {0, 1, 2}:
                report = report_of(con, name, suite_name(name, pair))
                rows = cases_of(con, suite_name(name, pair), name, False)
                (case_idx,) = [r["case_idx"] for r in rows if r["case_id"] == case_key(test)]
                return report["report_id"], case_idx, pair, test
    raise AssertionError(f"{name} has no test that passed, failed and errored")


@pytest.mark.parametrize("name", ["ticket_routing_v1.json", "ticket_routing_v3.json"])
def test_case_trials_are_the_repeats_as_transcripts(loaded: dict[str, Any], name: str) -> None:
    con = loaded["con"]
    report_id, case_idx, pair, test = mixed_case(con, name)
    trials = read_case_trials(con, report_id, case_idx)
    assert list(trials.columns) == list(TRIAL_COLUMNS)
    statuses = {0: "passed", 1: "failed_quality", 2: "model_error"}
    assert list(trials["status"]) == [statuses[r[2]] for r in test["rows"]]
    assert list(trials["run_index"]) == list(range(1, len(test["rows"]) + 1))
    for trial in trials.itertuples():
        text = trial.output
        assert text.startswith("[prompt]\n")
        graders = json.loads(trial.evaluators)
        if trial.status == "model_error":
            assert "\n\n[error]\n" in text and "simulated provider failure" in text
            assert "simulated provider failure" in trial.model_error
            assert "\n" not in trial.model_error  # the first line, not the stack
            assert graders == []
        else:
            verdict = "passed" if trial.status == "passed" else "failed"
            assert "\n\n[output]\n" in text and f"[grade: {verdict}, score " in text
            assert "[assertion " in text and "reason: " in text
            assert graders and all(g["passed"] in (True, False) for g in graders)
            assert all(g["passed"] for g in graders) is (trial.status == "passed")


def test_a_cached_repeat_says_so_in_its_transcript(loaded: dict[str, Any]) -> None:
    name = "cached_run2.json"
    con = loaded["con"]
    pair = EXPECTED["files"][name]["suites"][0]
    test = next(t for t in pair["tests"] if any(r[3] for r in t["rows"]))
    report = report_of(con, name, suite_name(name, pair))
    rows = cases_of(con, suite_name(name, pair), name, False)
    (case_idx,) = [r["case_idx"] for r in rows if r["case_id"] == case_key(test)]
    trials = read_case_trials(con, report["report_id"], case_idx)
    replayed = ["replayed from promptfoo's cache" in t for t in trials["output"]]
    assert replayed == [bool(r[3]) for r in test["rows"]]


# ---- edges of the format -------------------------------------------------------------------


def rewrite(path: Path, change: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_rows_in_any_order_give_the_same_cases_and_repeats(
    loaded: dict[str, Any], tmp_path: Path
) -> None:
    """promptfoo sorts rows by testIdx, but the order of pairs within one varies: nothing
    may depend on the file's order."""
    root = tmp_path / "reports"
    root.mkdir()
    name = "ticket_routing_v2.json"
    shutil.copy(FIXTURES / name, root / name)
    rewrite(root / name, lambda d: d["results"]["results"].reverse())
    con = load(root)
    for pair in EXPECTED["files"][name]["suites"]:
        suite = suite_name(name, pair)
        strip = ("report_id", "file", "release_rank")
        mine = [
            {k: v for k, v in r.items() if k not in strip} for r in cases_of(con, suite, name, True)
        ]
        want = [
            {k: v for k, v in r.items() if k not in strip}
            for r in cases_of(loaded["con"], suite, name, True)
        ]
        assert mine == want
    report_id, case_idx, _, test = mixed_case(con, name)
    statuses = {0: "passed", 1: "failed_quality", 2: "model_error"}
    trials = read_case_trials(con, report_id, case_idx)
    assert list(trials["status"]) == [statuses[r[2]] for r in test["rows"]]
    con.close()


def test_no_description_and_tests_sharing_a_key(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    root.mkdir()
    name = "ticket_routing_v1.json"
    shutil.copy(FIXTURES / name, root / name)

    def change(data: dict[str, Any]) -> None:
        del data["config"]["description"]
        for row in data["results"]["results"]:  # two tests named alike
            if row["testCase"].get("metadata", {}).get("case_id") == "lost-parcel":
                row["testCase"]["metadata"]["case_id"] = "double-charge"

    rewrite(root / name, change)
    con = load(root)
    suite = "ticket_routing_v1 · terse · router-small"
    ids = [r["case_id"] for r in cases_of(con, suite, name, False)]
    assert ids[:2] == ["double-charge #1", "double-charge #2"] and len(ids) == 7
    problems = summaries.summary_json(con)["problems"]
    assert len(problems) == 4  # one per pair
    assert all("different tests with one key ('double-charge')" in p["reason"] for p in problems)
    con.close()


def test_the_data_page_lists_the_cached_replays(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from app_env import app_serving
    from streamlit.testing.v1 import AppTest

    root = copy_fixtures(tmp_path / "reports")
    with app_serving(root, tmp_path / "reviews", monkeypatch):
        at = AppTest.from_file(str(REPO / "dashboard" / "app" / "main.py"), default_timeout=60)
        at.run(timeout=60)
        at.switch_page("page_scripts/data.py")
        at.run(timeout=60)
        assert not at.exception, [e.value for e in at.exception]
        files = at.dataframe[0].value
        assert set(files["harness"]) == {"promptfoo"}
        assert len(files) == sum(len(EXPECTED["files"][n]["suites"]) for n in EVALS)
        problems = at.dataframe[1].value
        cached = problems[problems["reason"].str.contains("replays from promptfoo's cache")]
        assert set(cached["file"]) == {"cached_run2.json"} and set(cached["scope"]) == {"report"}
        assert len(cached) == 2


@pytest.mark.parametrize(("name", "index"), pairs())
def test_unknown_speaks_of_tests_and_repeats(loaded: dict[str, Any], name: str, index: int) -> None:
    pair = EXPECTED["files"][name]["suites"][index]
    suite = suite_name(name, pair)
    (record,) = [
        r for r in loaded["document"]["reports"] if r["file"] == name and r["suite"] == suite
    ]
    ran = max(len(t["rows"]) for t in pair["tests"])
    # the evaluated tests: a test whose every repeat errored is left out of the metrics
    tests = [t["rows"] for t in pair["tests"] if any(r[2] != 2 for r in t["rows"])]
    graded = [sum(1 for r in rows if r[2] != 2) for rows in tests]
    shortest = min(graded)
    for metric in ("pass_at_k", "pass_hat_k"):
        for k, cell in record[metric].items():
            if int(k) <= shortest:
                assert cell["value"] is not None
                continue
            reason = cell["unknown_reason"]
            assert reason.startswith(f"UNKNOWN — k={k} exceeds the "), reason
            assert reason.endswith(
                f"rerun with --repeat >= {k} or pass k <= {shortest}. relidash does not extrapolate."
            )
            if int(k) > ran:
                assert f"exceeds the {ran} repeats the eval ran" in reason
            elif shortest < ran:
                short = [rows for rows in tests if sum(1 for r in rows if r[2] != 2) < int(k)]
                errored = sum(1 for rows in short if any(r[2] == 2 for r in rows))
                has = "has" if len(short) == 1 else "have"
                assert (
                    f"the {shortest} graded repeat" in reason
                    and f"{len(short)} of {len(tests)} tests {has} fewer than {k}" in reason
                    and f", {errored} of them " in reason
                ), reason
