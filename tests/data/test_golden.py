"""Golden tests: real reports written by real multivon-eval versions, and the numbers
multivon-eval 0.20.0 itself computes for them (tests/expected/<set>.json, written by
tools/upstream_numbers.py through `tools/make_fixtures.py --only-numbers`).

For every report under tests/fixtures/ and sample_reports/, the `relidash summary --json
--by file` document, built once through the service functions on an in-memory catalog
and once through the CLI entry point, must give upstream's pass@k and pass^k for every k
(value, CI bounds to 1e-9, the UNKNOWN reason text), upstream's case counts and run
count, and upstream's lottery set (our ranking differs on purpose; upstream's float-noise
members, whose exact pass@k - pass^k is 0, are left out of the comparison).

Each set of reports has one oracle file, named below; a file upstream refuses
(`from_dict_error`) fails the test unless EXPECTED_REFUSED lists it, with the reason it is
kept and what relidash shows for it.

Inspect AI logs in the same directories (tests/fixtures/inspect/, sample_reports/
ticket_triage/) are not multivon-eval reports: this oracle leaves them out, and
tests/data/test_inspect.py holds them to Inspect's own numbers (tests/expected/inspect.json).
Harbor job folders (tests/fixtures/harbor/) are left out the same way: tests/data/test_harbor.py
holds them to Harbor's own pass_at_k.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import sqlite3
import tempfile
from collections import Counter
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest
import summaries

from dashboard.analysis import loading
from dashboard.cli import main as cli
from dashboard.data.catalog import MEMORY, open_catalog

REPO = Path(__file__).resolve().parents[2]
REPORT_DIRS = {"fixtures": REPO / "tests" / "fixtures", "sample_reports": REPO / "sample_reports"}
# Upstream's numbers for each set, keyed by path relative to the set's directory: the
# files tools/make_fixtures.py writes (expected_path), named here so that a moved or
# renamed file fails the test instead of being looked for elsewhere.
ORACLES = {
    "fixtures": REPO / "tests" / "expected" / "fixtures.json",
    "sample_reports": REPO / "tests" / "expected" / "sample_reports.json",
}
# Reports multivon-eval's from_dict refuses that are kept on purpose, by "<set>/<path>":
# "reason" (why it is kept), "upstream_error" (a part of upstream's from_dict_error) and
# what relidash shows for it, pinned: either "problem" (a part of the reason of the one
# file problem it lists instead of loading the file) or "cases" (the case counts of the
# report it loads). None today: every real report of both sets is one upstream reads.
EXPECTED_REFUSED: dict[str, dict[str, Any]] = {}
TOLERANCE = 1e-9
FORMAT_RANGES = {  # the JSON contract's format labels, as inclusive (minor) version ranges
    "0.4-": (0, 4),
    "0.5-0.6": (5, 6),
    "0.7-0.15": (7, 15),
    "0.16": (16, 16),
    "0.17": (17, 17),
    "0.18": (18, 18),
    "0.19-0.20": (19, 20),
}


# ---- locating reports and upstream's numbers ----------------------------------------------


def _load_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None


def report_files(root: Path) -> list[str]:
    """Paths (relative, POSIX) of the multivon-eval reports under root: JSON objects with `cases`."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.endswith(".json") or name.startswith("."):
                continue
            data = _load_json(Path(dirpath) / name)
            if isinstance(data, dict) and isinstance(data.get("cases"), list):
                found.append((Path(dirpath) / name).relative_to(root).as_posix())
    return found


def other_harness_files(root: Path) -> tuple[set[str], set[str], set[str]]:
    """What the other harnesses' fixtures under root are: (the reports they load: promptfoo
    eval files, and Harbor job directories as "job/"; the JSON files inside a job, which are
    no reports of their own; the `.jsonl` files, each a problem)."""
    loaded = harbor_jobs(root)
    members = {
        p.relative_to(root).as_posix() for job in loaded for p in (root / job).rglob("*.json")
    }
    for path in root.rglob("*.json"):
        data = _load_json(path) if path.relative_to(root).as_posix() not in members else None
        if isinstance(data, dict) and {"evalId", "results"} <= set(data):
            loaded.add(path.relative_to(root).as_posix())
    for path in root.rglob("*"):
        if path.suffix in (".db", ".sqlite", ".sqlite3") and _promptfoo_database(path):
            loaded.add(path.relative_to(root).as_posix())
    jsonl = {p.relative_to(root).as_posix() for p in root.rglob("*.jsonl")}
    return loaded, members, jsonl


def _promptfoo_database(path: Path) -> bool:
    """A SQLite file with promptfoo's evals (read from a copy: never opened in place)."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "copy.db"
        shutil.copyfile(path, copy)
        try:
            con = sqlite3.connect(copy)
            try:
                found = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                return {"evals", "eval_results"} <= {name for (name,) in found}
            finally:
                con.close()
        except sqlite3.DatabaseError:
            return False


def inspect_logs(root: Path) -> set[str]:
    """Paths (relative, POSIX) of the Inspect logs under root: `.eval` archives and JSON
    objects with Inspect's top-level `version` and `eval`."""
    found = set()
    for path in root.rglob("*"):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        if path.suffix == ".eval":
            found.add(path.relative_to(root).as_posix())
        elif path.suffix == ".json":
            data = _load_json(path)
            if isinstance(data, dict) and {"version", "eval"} <= set(data):
                found.add(path.relative_to(root).as_posix())
    return found


def harbor_jobs(root: Path) -> set[str]:
    """Paths (relative, POSIX, ending in "/") of the Harbor job folders under root: folders
    with a config.json and a lock.json naming a Harbor version, outside any other job. Each
    is one report; the files inside are its own (tests/data/test_harbor.py holds its numbers)."""
    found = set()
    for lock in sorted(root.rglob("lock.json")):
        data = _load_json(lock)
        folder = lock.parent
        if (
            isinstance(data, dict)
            and isinstance(data.get("harbor"), dict)
            and (folder / "config.json").is_file()
            and not any((parent / "lock.json").is_file() for parent in folder.parents)
        ):
            found.add(folder.relative_to(root).as_posix() + "/")
    return found


def expected_numbers(label: str) -> dict[str, dict[str, Any]]:
    """Upstream's numbers for the reports of one set, from its oracle file."""
    numbers = _load_json(ORACLES[label])
    assert isinstance(numbers, dict), f"{ORACLES[label]} is missing or not a JSON object"
    return numbers


def golden_params() -> list[Any]:
    params = []
    for label, root in REPORT_DIRS.items():
        for rel in report_files(root):
            for source in ("service", "cli"):
                params.append(pytest.param(label, rel, source, id=f"{source}:{label}/{rel}"))
    return params


# ---- the two ways of building the document ------------------------------------------------


@pytest.fixture(scope="module")
def documents() -> dict[tuple[str, str], dict[str, Any]]:
    """(source, dir label) -> the summary document, built once per module."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for label, root in REPORT_DIRS.items():
        con = open_catalog(MEMORY)
        loading.refresh_catalog(con, root)
        out[("service", label)] = summaries.summary_json(con, by="file")
        con.close()
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = cli.main(["summary", str(root), "--json", "--by", "file", "--catalog", MEMORY])
        assert code == 0, stderr.getvalue()
        out[("cli", label)] = json.loads(stdout.getvalue())
    return out


@pytest.fixture(scope="module")
def upstream() -> dict[str, dict[str, dict[str, Any]]]:
    return {label: expected_numbers(label) for label in REPORT_DIRS}


def _record(document: dict[str, Any], rel: str) -> dict[str, Any]:
    matches = [r for r in document["reports"] if r["file"] == rel]
    problems = [p for p in document["problems"] if p["file"] == rel]
    assert len(matches) == 1, f"{rel} not loaded exactly once; its problems: {problems}"
    return matches[0]


def exact_gap(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k)) - Fraction(comb(c, k), comb(n, k))


def upstream_lottery(numbers: dict[str, Any]) -> Counter[tuple[Any, ...]]:
    """Upstream's lottery set at its default k, minus members whose exact gap is 0."""
    k = numbers["runs_per_case"]
    return Counter(
        (case["case_id"], case["input"], case["pass_count"], case["runs"])
        for case in numbers["lottery"]
        if case["runs"] >= k and exact_gap(case["runs"], case["pass_count"], k) > 0
    )


# ---- the tests ----------------------------------------------------------------------------


def test_every_report_has_upstream_numbers(upstream: dict[str, Any]) -> None:
    for label, root in REPORT_DIRS.items():
        files = report_files(root)
        assert files, f"no reports found under {root}"
        missing = sorted(set(files) - set(upstream[label]))
        assert not missing, f"no entry in {ORACLES[label].name} for {label}: {missing}"
        stale = sorted(set(upstream[label]) - set(files))
        assert not stale, f"{ORACLES[label].name} names no report under {root}: {stale}"
    for key, entry in EXPECTED_REFUSED.items():
        label, _, rel = key.partition("/")
        assert label in REPORT_DIRS and rel in report_files(REPORT_DIRS[label]), key
        assert entry.get("reason") and entry.get("upstream_error"), key
        assert "cases" in entry or "problem" in entry, f"{key}: pin what relidash shows"


def refused_files(label: str) -> dict[str, dict[str, Any]]:
    """EXPECTED_REFUSED entries of one set, by path relative to its directory."""
    prefix = f"{label}/"
    return {
        key.removeprefix(prefix): entry
        for key, entry in EXPECTED_REFUSED.items()
        if key.startswith(prefix)
    }


def assert_shown_as_pinned(document: dict[str, Any], rel: str, pinned: dict[str, Any]) -> None:
    """A report upstream refuses is shown as EXPECTED_REFUSED says: loaded with those case
    counts, or not loaded; and with that problem listed, when one is named."""
    records = [r for r in document["reports"] if r["file"] == rel]
    reasons = [p["reason"] for p in document["problems"] if p["file"] == rel]
    if "cases" in pinned:
        assert [r["cases"] for r in records] == [pinned["cases"]], f"{rel}: {reasons}"
    else:
        assert records == [], f"{rel} was loaded; EXPECTED_REFUSED says it is not"
    if "problem" in pinned:
        assert any(pinned["problem"] in reason for reason in reasons), f"{rel}: {reasons}"


@pytest.mark.parametrize(("label", "rel", "source"), golden_params())
def test_numbers_equal_upstream(
    documents: dict[tuple[str, str], dict[str, Any]],
    upstream: dict[str, dict[str, dict[str, Any]]],
    label: str,
    rel: str,
    source: str,
) -> None:
    expected = upstream[label].get(rel)
    assert expected is not None, f"no upstream numbers for {label}/{rel}"
    error = expected.get("from_dict_error")
    pinned = refused_files(label).get(rel)
    if pinned is not None:
        assert error, f"{label}/{rel} is in EXPECTED_REFUSED, but multivon-eval reads it now"
        assert pinned["upstream_error"] in error, error
        assert_shown_as_pinned(documents[(source, label)], rel, pinned)
        return
    # No numbers to compare against is no pass: a refused file is either an accident of
    # the fixtures or a case worth pinning.
    assert not error, (
        f"multivon-eval refuses {label}/{rel} ({error}): remove it, or list it in "
        "EXPECTED_REFUSED with why it is kept and what relidash shows for it"
    )
    record = _record(documents[(source, label)], rel)
    assert record["suite"] == expected["suite"]
    assert record["cases"]["total"] == expected["total"]
    assert record["cases"]["evaluated"] == expected["evaluated"]
    assert record["cases"]["errored"] == expected["errors"]
    assert record["cases"]["skipped"] == expected["skipped"]
    assert record["runs"]["max"] == expected["runs_per_case"]
    assert record["runs"]["min"] <= record["runs"]["max"]
    for metric in ("pass_at_k", "pass_hat_k"):
        assert list(record[metric]) == list(expected[metric]), f"{metric}: k range differs"
        for k, want in expected[metric].items():
            got = record[metric][k]
            where = f"{rel} {metric} k={k}"
            assert got["unknown_reason"] == want["unknown_reason"], where
            for field in ("value", "ci_low", "ci_high"):
                if want[field] is None:
                    assert got[field] is None, f"{where} {field}: {got[field]} != None"
                else:
                    assert got[field] == pytest.approx(want[field], abs=TOLERANCE, rel=0), (
                        f"{where} {field}"
                    )
    ours = Counter(
        (case["case_id"], case["input"], case["passes"], case["runs"]) for case in record["lottery"]
    )
    assert ours == upstream_lottery(expected)


@pytest.mark.parametrize("label", list(REPORT_DIRS))
def test_service_and_cli_give_the_same_document(
    documents: dict[tuple[str, str], dict[str, Any]], label: str
) -> None:
    assert documents[("service", label)] == documents[("cli", label)]


@pytest.mark.parametrize("label", list(REPORT_DIRS))
def test_only_non_report_files_are_file_problems(
    documents: dict[tuple[str, str], dict[str, Any]], label: str
) -> None:
    """Every JSON file is a loaded report or a listed problem (a non-report, or a report
    upstream refuses that EXPECTED_REFUSED says relidash does not load); every Inspect log
    and every Harbor job folder is loaded too (their numbers: tests/data/test_inspect.py,
    tests/data/test_harbor.py), and the files inside a job are never problems of their own."""
    root = REPORT_DIRS[label]
    document = documents[("service", label)]
    unloaded = {rel for rel, pinned in refused_files(label).items() if "cases" not in pinned}
    reports = set(report_files(root))
    logs = inspect_logs(root)
    others, members, jsonl = other_harness_files(root)
    loaded = {r["file"] for r in document["reports"]}
    assert loaded == (reports - unloaded) | logs | others
    all_json = (
        {
            p.relative_to(root).as_posix()
            for p in root.rglob("*.json")
            if not any(part.startswith(".") for part in p.relative_to(root).parts)
        }
        - logs
        - others
        - members
    )
    file_problems = {p["file"] for p in document["problems"] if p.get("scope", "file") == "file"}
    assert file_problems == (all_json - reports) | unloaded | jsonl
    for problem in document["problems"]:
        if problem["file"] in all_json - reports:
            assert "not a multivon-eval report" in problem["reason"]


@pytest.mark.parametrize("label", list(REPORT_DIRS))
def test_unedited_reports_have_no_report_problems(
    documents: dict[tuple[str, str], dict[str, Any]], label: str
) -> None:
    """Files exactly as multivon-eval wrote them raise no warning (only non-reports do, and
    the refused reports EXPECTED_REFUSED pins a problem for)."""
    pinned = {rel for rel, entry in refused_files(label).items() if "problem" in entry}
    reports = set(report_files(REPORT_DIRS[label])) - pinned
    noisy = [p for p in documents[("service", label)]["problems"] if p["file"] in reports]
    assert noisy == []


def _version_of(name: str) -> tuple[int, int]:
    version = name.removeprefix("mv-").split("_", 1)[0]
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


@pytest.mark.parametrize(
    "rel",
    [r for r in report_files(REPORT_DIRS["fixtures"]) if r.startswith("mv-")],
)
def test_format_and_upgraded_match_the_writing_version(
    documents: dict[tuple[str, str], dict[str, Any]], rel: str
) -> None:
    """Fixture names carry the multivon-eval version that wrote them (mv-<version>_...)."""
    record = _record(documents[("service", "fixtures")], rel)
    major, minor = _version_of(rel)
    assert major == 0
    low, high = FORMAT_RANGES[record["format"]]
    assert low <= minor <= high, f"{rel} written by 0.{minor} but format says {record['format']}"
    assert record["upgraded"] is (minor < 16)
