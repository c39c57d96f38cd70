"""The simulator: its generator, the published figure, and files real loaders accept.

The upstream test needs RELIDASH_UPSTREAM_PYTHON pointing at a python with multivon-eval
installed (e.g. a throwaway venv with multivon-eval==0.20.0); it is skipped otherwise, and
fails under `make test` and CI, which set it (tests/support/required_tools.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import summaries
from required_tools import upstream_python

from dashboard.analysis import loading
from dashboard.cli.simulate import main, register
from dashboard.data.catalog import open_catalog
from dashboard.simulate import SimulateError, simulate_reports
from dashboard.simulate.agent import mulberry32, reliabilities, suite_tasks

# --- mulberry32 against a slow reference that follows JavaScript's number semantics ---------


def _to_int32(x: int) -> int:
    x %= 2**32
    return x - 2**32 if x >= 2**31 else x


def _to_uint32(x: int) -> int:
    return x % 2**32


def _imul(x: int, y: int) -> int:  # Math.imul
    return _to_int32(_to_int32(x) * _to_int32(y))


def _js_mulberry32(seed: int) -> Iterator[float]:
    """The published JavaScript, transcribed literally with unbounded Python ints:

        function mulberry32(a) { return function() {
          var t = a += 0x6D2B79F5;
          t = Math.imul(t ^ t >>> 15, t | 1);
          t ^= t + Math.imul(t ^ t >>> 7, t | 61);
          return ((t ^ t >>> 14) >>> 0) / 4294967296; } }

    `a` is a JS Number that keeps growing; every bitwise operator applies ToInt32 (or
    ToUint32 for `>>>`) to its operands, which is what the helpers do here.
    """
    a = seed
    while True:
        a = a + 0x6D2B79F5
        t = a
        t = _imul(_to_int32(t) ^ (_to_uint32(t) >> 15), _to_int32(t) | 1)
        t = _to_int32(t) ^ _to_int32(
            t + _imul(_to_int32(t) ^ (_to_uint32(t) >> 7), _to_int32(t) | 61)
        )
        yield _to_uint32(_to_int32(t) ^ (_to_uint32(t) >> 14)) / 4294967296


@pytest.mark.parametrize("seed", [0, 1, 42, 123456789, 2**31 - 1, 2**31, 2**32 - 1])
def test_mulberry32_matches_the_javascript_reference(seed: int) -> None:
    draw, reference = mulberry32(seed), _js_mulberry32(seed)
    for _ in range(2000):
        assert draw() == next(reference)


def test_mulberry32_outputs_are_unit_interval_and_seed_dependent() -> None:
    a, b = mulberry32(42), mulberry32(43)
    first = [a() for _ in range(1000)]
    assert all(0.0 <= x < 1.0 for x in first)
    assert first[:5] != [b() for _ in range(5)]


# --- the published figure ---------------------------------------------------------------------


def _summary(directory: Path, by: str = "file") -> dict[str, Any]:
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, directory)
    return summaries.summary_json(con, by=by)


@pytest.mark.parametrize("fmt", ["0.15", "0.20"])
def test_published_figure_40_tasks_p085_5_runs_seed_42(tmp_path: Path, fmt: str) -> None:
    argv = ["--out", str(tmp_path), "--suites", "1", "--releases", "1", "--cases", "40"]
    argv += ["--p", "0.85", "--runs", "5", "--seed", "42", "--format", fmt]
    assert main(argv) == 0
    document = _summary(tmp_path)
    assert document["problems"] == []
    (report,) = document["reports"]
    pass_at_1 = report["pass_at_k"]["1"]["value"]
    pass_hat_5 = report["pass_hat_k"]["5"]["value"]
    assert (round(pass_at_1, 2), round(pass_hat_5, 2)) == (0.86, 0.45)
    # exactly 172 passes in 200 trials and 18 of 40 tasks passing all five runs
    assert pass_at_1 == pytest.approx(172 / 200, abs=1e-12)
    assert pass_hat_5 == pytest.approx(18 / 40, abs=1e-12)


def test_the_figure_is_the_plain_generator_in_task_order() -> None:
    """One draw per trial, all runs of task 1 before task 2: the order the figure implies."""
    draw = mulberry32(42)
    passes = [[draw() < 0.85 for _ in range(5)] for _ in range(40)]
    assert sum(map(sum, passes)) == 172
    assert sum(all(row) for row in passes) == 18


def test_register_adds_the_simulate_subcommand(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser(prog="relidash")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(
        ["simulate", "--out", str(tmp_path), "--cases", "3", "--format", "0.15"]
    )
    assert (args.command, args.cases, args.fmt, args.runs) == ("simulate", 3, "0.15", 5)
    assert args.handler(args) == 0
    assert len(list(tmp_path.rglob("*.json"))) == 1


def test_defaults_are_the_published_configuration(tmp_path: Path) -> None:
    assert main(["--out", str(tmp_path)]) == 0
    (report,) = _summary(tmp_path)["reports"]
    assert report["cases"]["total"] == 40 and report["runs"] == {"min": 5, "max": 5}
    assert round(report["pass_at_k"]["1"]["value"], 2) == 0.86


# --- files the loader takes as real -------------------------------------------------------------


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("simulated")
    simulate_reports(root / "v020", suites=2, releases=4, cases=30, runs=8, fmt="0.20")
    simulate_reports(
        root / "v015", suites=2, releases=4, cases=30, runs=8, fmt="0.15", first_suite=2
    )
    simulate_reports(root / "single", suites=1, releases=2, cases=12, runs=1, fmt="0.20", seed=7)
    return root


def test_generated_files_load_with_zero_problems(corpus: Path) -> None:
    document = _summary(corpus)
    assert document["problems"] == []
    reports = {r["file"]: r for r in document["reports"]}
    assert len(reports) == 18
    formats = {r["format"] for r in reports.values()}
    assert formats == {"0.19-0.20", "0.7-0.15"}
    for name, report in reports.items():
        if name.startswith("v015/"):
            assert report["release"].split(" ")[1].startswith("v1.")
        else:
            assert report["release"].startswith("v1.")
    errored = {name: r["cases"]["errored"] for name, r in reports.items()}
    # the baseline release of each suite is clean; later releases carry some model errors
    assert all(n == 0 for name, n in errored.items() if "_v1.0.0" in name)
    assert sum(errored.values()) > 0


def test_releases_come_from_model_and_declared_target(corpus: Path) -> None:
    con = open_catalog(":memory:")
    loading.refresh_catalog(con, corpus)
    rows = con.execute(
        "SELECT file, release, release_source, release_rank FROM reports ORDER BY file"
    ).fetchall()
    for file, release, source, rank in rows:
        bot = file.split("/")[1].split("-")[0] + "-bot"
        label = file.rsplit("_", 1)[1].removesuffix(".json")
        if file.startswith("v015/"):
            assert (source, release) == ("model", f"{bot} {label}")
        else:
            assert (source, release) == ("target_version", label)
        assert rank == int(label.split(".")[1]) + 1
    dims = {d for (d,) in con.execute("SELECT DISTINCT dim FROM case_tags").fetchall()}
    assert {"risk_tier", "domain"} <= dims


def test_full_size_report_is_about_5_mb(tmp_path: Path) -> None:
    (path,) = simulate_reports(tmp_path, cases=50, runs=8, fmt="0.20")
    assert 4.5e6 < path.stat().st_size < 6.5e6
    report = json.loads(path.read_text())
    trials = [t for case in report["cases"] for t in case["trials"]]
    assert len(trials) == 400
    assert {(t["run_index"], t["attempt"]) for t in trials} == {(j, 1) for j in range(1, 9)}


def _digest(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def test_trial_records_are_canonical_and_their_digests_hold(corpus: Path) -> None:
    path = next((corpus / "v020").rglob("*_v1.1.0.json"))
    report = json.loads(path.read_text())
    for case in report["cases"]:
        assert case["output"] == case["trials"][-1]["output"]
        assert case["pass_count"] == sum(t["status"] == "passed" for t in case["trials"])
        for trial in case["trials"]:
            assert list(trial) == sorted(trial)
            assert trial["digest"] == _digest(trial)
            assert trial["execution"]["digest"] == _digest(trial["execution"])
            for event in trial["provider_evidence"]["events"]:
                assert event["digest"] == _digest(event)
            identity = {k: v for k, v in trial["case"].items() if k != "case_id"}
            assert trial["case_digest"] == _digest(identity)
    assert report["execution"]["digest"] == _digest(report["execution"])
    assert report["execution"]["target_before"]["declaration"]["version"] == "v1.1.0"


def test_reliability_drifts_after_the_first_release() -> None:
    tasks = suite_tasks("support-chat", 30, 42)
    table = reliabilities(tasks, 6, 0.85, 42, "support-chat")
    assert table[0] == [0.85] * 30
    assert any(abs(a - b) > 0.2 for a, b in zip(table[0], table[-1], strict=True))
    assert len({t.input for t in tasks}) == 30 and len({t.case_id for t in tasks}) == 30


def test_output_is_deterministic(tmp_path: Path) -> None:
    first = simulate_reports(tmp_path / "a", suites=1, releases=2, cases=6, runs=3, seed=9)
    second = simulate_reports(tmp_path / "b", suites=1, releases=2, cases=6, runs=3, seed=9)
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes()


# --- never outside the output directory ----------------------------------------------------------


def test_refuses_a_suite_directory_that_leads_outside(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "support-chat").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SimulateError, match="outside the output directory"):
        simulate_reports(out, cases=3, runs=2)
    assert list(elsewhere.iterdir()) == []


def test_writes_only_report_files_under_out(tmp_path: Path) -> None:
    before = set(tmp_path.parent.iterdir())
    simulate_reports(tmp_path / "out", suites=2, releases=2, cases=4, runs=2, fmt="0.15")
    assert set(tmp_path.parent.iterdir()) == before
    files = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    assert all(str(p).startswith("out/") and p.suffix == ".json" for p in files)
    assert len(files) == 4


@pytest.mark.parametrize(
    "argv",
    [["--runs", "0"], ["--p", "1.5"], ["--cases", "-1"], ["--seed", "-3"]],
)
def test_bad_arguments_exit_2(tmp_path: Path, argv: list[str]) -> None:
    assert main(["--out", str(tmp_path / "x"), *argv]) == 2
    assert not (tmp_path / "x").exists()


def test_out_that_is_a_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("keep me")
    assert main(["--out", str(target)]) == 2
    assert target.read_text() == "keep me"


# --- multivon-eval itself -------------------------------------------------------------------------

UPSTREAM_SCRIPT = r"""
import json, sys
from multivon_eval.result import EvalReport

out = {}
for path in json.load(sys.stdin):
    raw = open(path, encoding="utf-8").read()
    report = EvalReport.from_dict(json.loads(raw))
    runs = report.runs_per_case
    row = {"rewritten_identical": report.to_json() == raw, "runs": runs}
    for name in ("pass_at_k", "pass_hat_k"):
        row[name] = {
            str(k): [r.value, r.ci_low, r.ci_high]
            for k in range(1, runs + 1)
            for r in [getattr(report, name)(k)]
        }
    out[path] = row
json.dump(out, sys.stdout)
"""


@pytest.mark.upstream
def test_multivon_eval_loads_them_and_agrees(corpus: Path) -> None:
    python = upstream_python()
    files = sorted(str(p) for p in corpus.rglob("*.json"))
    done = subprocess.run(
        [python, "-c", UPSTREAM_SCRIPT],
        input=json.dumps(files),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    upstream = json.loads(done.stdout)
    mine = {str(corpus / r["file"]): r for r in _summary(corpus)["reports"]}
    assert set(upstream) == set(mine) == set(files)
    for path, theirs in upstream.items():
        if "/v015/" not in path:
            # 0.20 files: multivon-eval writes back exactly the bytes it read
            assert theirs["rewritten_identical"], path
        for name in ("pass_at_k", "pass_hat_k"):
            for k, (value, low, high) in theirs[name].items():
                ours = mine[path][name][k]
                assert ours["value"] == pytest.approx(value, abs=1e-12), (path, name, k)
                assert ours["ci_low"] == pytest.approx(low, abs=1e-12), (path, name, k)
                assert ours["ci_high"] == pytest.approx(high, abs=1e-12), (path, name, k)
