"""The promptfoo fixtures: expected.json matches the files, and the files hold the edges
they were made for (releases with a reworded and an added test, one pair, replays, .jsonl).

The files come from the real promptfoo (tools/promptfoo_fixtures/make_fixtures.py); these
tests read them with the standard library only, so they guard the fixtures themselves and
not relidash's reader.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "promptfoo"
SCRIPT = REPO / "tools" / "promptfoo_fixtures" / "make_fixtures.py"


def load_script():
    spec = importlib.util.spec_from_file_location("make_promptfoo_fixtures", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def expected() -> dict:
    return json.loads((FIXTURES / "expected.json").read_text())


def read(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def test_expected_is_what_the_files_hold(expected):
    script = load_script()
    for name, summary in expected["files"].items():
        assert script.summarise(FIXTURES / name) == summary, name


def test_every_output_has_an_entry(expected):
    outputs = {p.name for p in FIXTURES.iterdir() if p.suffix in (".json", ".jsonl")}
    assert set(expected["files"]) == outputs - {"expected.json"}


def test_pair_counts_add_up_to_promptfoos_metrics(expected):
    for name, summary in expected["files"].items():
        for suite in summary["suites"]:
            if "testPassCount" not in suite:
                continue
            reasons = [row[2] for test in suite["tests"] for row in test["rows"]]
            counts = [reasons.count(0), reasons.count(1), reasons.count(2)]
            stated = [suite["testPassCount"], suite["testFailCount"], suite["testErrorCount"]]
            assert counts == stated, (name, suite["prompt"], suite["provider"])


def test_releases_share_a_description_and_differ_by_tag():
    docs = [read(f"ticket_routing_v{n}.json") for n in (1, 2, 3)]
    assert {d["config"]["description"] for d in docs} == {"Ticket routing"}
    assert [d["config"]["tags"]["release"] for d in docs] == ["v1", "v2", "v3"]
    for doc in docs:
        assert len(doc["results"]["prompts"]) == 4
        assert doc["runtimeOptions"]["repeat"] == 5


def descriptions_by_case(name: str) -> dict:
    rows = read(name)["results"]["results"]
    return {
        (r["testCase"].get("metadata") or {}).get("case_id"): r["testCase"].get("description")
        for r in rows
    }


def test_a_reworded_test_keeps_its_case_id_and_one_test_is_added():
    v1, v2, v3 = (descriptions_by_case(f"ticket_routing_v{n}.json") for n in (1, 2, 3))
    assert v1["address-change"] != v2["address-change"] == v3["address-change"]
    assert set(v2) - set(v1) == {"gift-card-balance"}
    assert set(v3) == set(v2)


def test_every_pair_has_passes_fails_and_errors(expected):
    for n in (1, 2, 3):
        for suite in expected["files"][f"ticket_routing_v{n}.json"]["suites"]:
            assert suite["testPassCount"] > 0 and suite["testFailCount"] > 0, suite["provider"]
    errors = sum(s["testErrorCount"] for s in expected["files"]["ticket_routing_v1.json"]["suites"])
    assert errors > 0


def test_tests_are_named_by_case_id_description_or_vars(expected):
    suite = expected["files"]["ticket_routing_v2.json"]["suites"][0]
    by = {t["by"] for t in suite["tests"]}
    assert by == {"case_id", "description", "vars"}
    assert all(len(t["rows"]) == 5 for t in suite["tests"])


def test_single_pair_and_its_export_hold_the_same_rows(expected):
    single, export = read("single_pair.json"), read("single_pair_export.json")
    assert len(single["results"]["prompts"]) == 1
    assert single["evalId"] == export["evalId"]
    files = expected["files"]
    assert files["single_pair.json"]["suites"] == files["single_pair_export.json"]["suites"]


def test_jsonl_rows_carry_no_eval_id(expected):
    lines = (FIXTURES / "single_pair.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert "evalId" not in first and "testIdx" in first
    assert expected["files"]["single_pair.jsonl"]["rows"] == len(lines) == 40


def test_only_the_second_cached_run_replays(expected):
    files = expected["files"]
    assert files["cached_run2.json"]["cached_rows"] > 0
    assert all(s["cached_rows"] == 0 for n, s in files.items() if n != "cached_run2.json")
    assert read("cached_run2.json")["runtimeOptions"]["cache"] is not False


def test_database_holds_the_small_evals(expected):
    db = sqlite3.connect(f"file:{FIXTURES / 'promptfoo.db'}?mode=ro", uri=True)
    try:
        ids = {row[0] for row in db.execute("SELECT id FROM evals")}
        rows = db.execute("SELECT count(*) FROM eval_results").fetchone()[0]
    finally:
        db.close()
    small = ["single_pair.json", "cached_run1.json", "cached_run2.json"]
    assert ids == {expected["files"][n]["evalId"] for n in small}
    assert rows == sum(expected["files"][n]["rows"] for n in small)
