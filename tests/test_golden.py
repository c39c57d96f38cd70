"""Golden tests: real reports written by real multivon-eval versions, and the numbers
multivon-eval 0.20.0 itself computes for them (`expected_numbers.json`, written by
tools/upstream_numbers.py).

For every report under tests/fixtures/ and sample_reports/, the `relidash summary --json
--by file` document, built once through the service functions on an in-memory catalog
and once through the CLI entry point, must give upstream's pass@k and pass^k for every k
(value, CI bounds to 1e-9, the UNKNOWN reason text), upstream's case counts and run
count, and upstream's lottery set (our ranking differs on purpose; upstream's float-noise
members, whose exact pass@k - pass^k is 0, are left out of the comparison).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections import Counter
from fractions import Fraction
from math import comb
from pathlib import Path
from typing import Any

import pytest

from dashboard import cli, service
from dashboard.data.catalog import MEMORY, open_catalog

REPO = Path(__file__).resolve().parents[1]
REPORT_DIRS = {"fixtures": REPO / "tests" / "fixtures", "sample_reports": REPO / "sample_reports"}
TOLERANCE = 1e-9
SKIP_DIRS = {".git", ".venv", ".venv-upstream", "node_modules", "__pycache__", ".hypothesis"}
FORMAT_RANGES = {  # the format labels of issue 2, as inclusive (minor) version ranges
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


def _expected_candidates() -> list[Path]:
    """JSON files that may hold upstream's numbers: expected*.json, or anything in expected/."""
    found = []
    for dirpath, dirnames, filenames in os.walk(REPO):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        in_expected_dir = Path(dirpath).name == "expected"
        for name in sorted(filenames):
            if name.endswith(".json") and (in_expected_dir or name.startswith("expected")):
                found.append(Path(dirpath) / name)
    return found


def _normalised(expected: dict[str, Any], root: Path) -> dict[str, dict[str, Any]]:
    """Keys made relative to root: they may be relative to root or to the repository."""
    out = {}
    for key, numbers in expected.items():
        if not isinstance(numbers, dict) or "pass_at_k" not in numbers:
            continue
        if (root / key).is_file():
            out[Path(key).as_posix()] = numbers
        elif (REPO / key).is_file() and (REPO / key).resolve().is_relative_to(root.resolve()):
            out[(REPO / key).resolve().relative_to(root.resolve()).as_posix()] = numbers
    return out


def expected_numbers(root: Path) -> dict[str, dict[str, Any]]:
    """Upstream's numbers for the reports under root, from whichever file covers them best.

    The fixture generator has moved these files before (expected_numbers.json inside each
    reports directory, then tests/expected/<name>.json), so they are found by content: the
    candidate whose keys name the most report files under root, the newest on a tie.
    """
    wanted = set(report_files(root))
    best: tuple[int, int] = (0, 0)
    chosen: dict[str, dict[str, Any]] = {}
    for candidate in _expected_candidates():
        data = _load_json(candidate)
        if not isinstance(data, dict):
            continue
        numbers = _normalised(data, root)
        score = (len(wanted & set(numbers)), candidate.stat().st_mtime_ns)
        if score[0] and score > best:
            best, chosen = score, numbers
    return chosen


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
        service.refresh_catalog(con, root)
        out[("service", label)] = service.summary_json(con, by="file")
        con.close()
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = cli.main(["summary", str(root), "--json", "--by", "file", "--catalog", MEMORY])
        assert code == 0, stderr.getvalue()
        out[("cli", label)] = json.loads(stdout.getvalue())
    return out


@pytest.fixture(scope="module")
def upstream() -> dict[str, dict[str, dict[str, Any]]]:
    return {label: expected_numbers(root) for label, root in REPORT_DIRS.items()}


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
        assert not missing, f"no expected_numbers entry for {label}: {missing}"


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
    record = _record(documents[(source, label)], rel)
    if expected.get("from_dict_error"):
        # multivon-eval refused the file itself: there are no numbers to compare, but
        # relidash must still have shown it (loaded, with any problems listed).
        return
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
    """Every JSON file is a loaded report or a listed problem (expected_numbers.json is one)."""
    root = REPORT_DIRS[label]
    document = documents[("service", label)]
    reports = set(report_files(root))
    loaded = {r["file"] for r in document["reports"]}
    assert loaded == reports
    all_json = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.json")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }
    file_problems = {p["file"] for p in document["problems"] if p.get("scope", "file") == "file"}
    assert file_problems == all_json - reports
    for problem in document["problems"]:
        if problem["file"] in all_json - reports:
            assert "not a multivon-eval report" in problem["reason"]


@pytest.mark.parametrize("label", list(REPORT_DIRS))
def test_unedited_reports_have_no_report_problems(
    documents: dict[tuple[str, str], dict[str, Any]], label: str
) -> None:
    """Files exactly as multivon-eval wrote them raise no warning (only non-reports do)."""
    reports = set(report_files(REPORT_DIRS[label]))
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
