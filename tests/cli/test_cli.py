"""`relidash summary`: text tables, the JSON contract, exit codes.

The JSON shape is the contract other tools and the pages rely on, so it is checked key
by key and type by type. Runs on copies of the small real fixtures plus one bad file.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from report_files import is_report

from dashboard.cli import main as cli
from dashboard.data.catalog import MEMORY

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SAMPLES = REPO / "sample_reports"
SMALL = 100_000

REPORT_KEYS = {
    "file",
    "suite",
    "release",
    "format",
    "upgraded",
    "cases",
    "runs",
    "pass_at_k",
    "pass_hat_k",
    "lottery",
    # which harness wrote the file, and whether an Inspect log finished
    "harness",
    "complete",
    "log_status",
}
CASES_KEYS = {"total", "evaluated", "errored", "skipped"}
CELL_KEYS = {"value", "ci_low", "ci_high", "unknown_reason"}
LOTTERY_KEYS = {"case_id", "input", "passes", "runs"}
PROBLEM_KEYS = {"file", "reason"}
# Keys beyond the documented contract that the implementation adds on purpose; anything else new
# must be added here deliberately (and to the README), not slip into the contract.
EXTRA_KEYS = {"cases": {"excluded"}, "problems": {"scope"}, "release": {"release_rank", "files"}}
SUMMARY_LINE = re.compile(
    r"^relidash: (\d+) report files: (\d+) parsed, (\d+) unchanged, (\d+) removed, "
    r"(\d+) problems \(",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def reports_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small real fixtures, one truncated file, one non-report JSON file."""
    root = tmp_path_factory.mktemp("cli") / "reports"
    root.mkdir()
    sources = [p for p in sorted(FIXTURES.glob("*.json")) if is_report(p)]
    small = [p for p in sources if p.stat().st_size < SMALL]
    assert len({json.loads(p.read_text())["suite"] for p in small}) >= 2, "want two suites"
    for source in small:
        shutil.copyfile(source, root / source.name)
    (root / "truncated.json").write_bytes(small[0].read_bytes()[:300])
    (root / "notes.json").write_text('{"note": "not a report"}')
    return root


def run_main(argv: list[str]) -> tuple[int, str, str]:
    """cli.main in-process: (exit code, stdout, stderr); argparse's SystemExit counts as exit."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def run_process(argv: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dashboard.cli", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def by_file(reports_dir: Path) -> dict[str, Any]:
    code, out, err = run_main(["summary", str(reports_dir), "--json", "--catalog", MEMORY])
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(scope="module")
def process_text(reports_dir: Path) -> subprocess.CompletedProcess[str]:
    return run_process(["summary", str(reports_dir), "--catalog", MEMORY])


# ---- text output --------------------------------------------------------------------------


def test_text_output_has_a_table_per_suite(
    process_text: subprocess.CompletedProcess[str], by_file: dict[str, Any]
) -> None:
    assert process_text.returncode == 0, process_text.stderr
    text = process_text.stdout
    suites = sorted({r["suite"] for r in by_file["reports"]})
    headings = [
        m.start() for s in suites for m in re.finditer(rf"^Suite {re.escape(s)}$", text, re.M)
    ]
    assert len(headings) == len(suites) >= 2, text
    for start, suite in zip(sorted(headings), suites, strict=True):
        table = text[start:].split("\nSuite ", 1)[0]
        header = table.splitlines()[1]
        for column in ("release", "runs", "pass@1", "envelope"):
            assert column in header, header
        # one k for the whole suite, named in the heading and said under it
        k = re.search(r"pass@(\d+) +pass\^(\d+)", header)
        assert k is not None and k[1] == k[2], header
        assert f"k = {k[1]} for every release" in table, table
        for report in (r for r in by_file["reports"] if r["suite"] == suite):
            assert report["release"] in table
            assert report["file"] in table


def test_text_output_lists_problems_and_lottery(
    process_text: subprocess.CompletedProcess[str], by_file: dict[str, Any]
) -> None:
    text = process_text.stdout
    assert "truncated.json" in text and "notes.json" in text
    flaky = next(r for r in by_file["reports"] if r["lottery"])
    top = flaky["lottery"][0]
    assert f"lottery {top['passes']}/{top['runs']}" in text


def test_summary_line_on_stderr_and_exit_0_with_problems(
    process_text: subprocess.CompletedProcess[str], reports_dir: Path
) -> None:
    assert process_text.returncode == 0
    match = SUMMARY_LINE.search(process_text.stderr)
    assert match, process_text.stderr
    files = len(list(reports_dir.glob("*.json")))
    assert int(match.group(1)) == files
    assert int(match.group(2)) == files  # a fresh :memory: catalog parses everything
    assert int(match.group(5)) >= 2


def test_summary_line_counts_every_problem_listed(tmp_path: Path) -> None:
    source = next(
        p
        for p in sorted(FIXTURES.glob("*.json"))
        if is_report(p)
        and (json.loads(p.read_text())["summary"].get("pass_hat_k") or {}).get("value") is not None
    )
    data = json.loads(source.read_text())
    data["summary"]["pass_hat_k"]["value"] = round(
        (data["summary"]["pass_hat_k"]["value"] + 0.37) % 1, 4
    )
    (tmp_path / "edited.json").write_text(json.dumps(data))
    done = run_process(["summary", str(tmp_path), "--json", "--catalog", MEMORY])
    assert done.returncode == 0
    listed = len(json.loads(done.stdout)["problems"])
    assert listed == 1
    match = SUMMARY_LINE.search(done.stderr)
    assert match, done.stderr
    assert int(match.group(5)) == listed, done.stderr


def test_summary_line_follows_redirected_stderr(reports_dir: Path) -> None:
    code, _, err = run_main(["summary", str(reports_dir), "--catalog", MEMORY])
    assert code == 0
    assert SUMMARY_LINE.search(err), err


# ---- the JSON contract --------------------------------------------------------------------


def _number_or_none(x: Any) -> bool:
    return x is None or (isinstance(x, float | int) and not isinstance(x, bool))


def check_report(record: dict[str, Any], extra: set[str] = frozenset()) -> None:
    assert set(record) == REPORT_KEYS | extra, set(record) ^ (REPORT_KEYS | extra)
    for key in ("file", "suite", "release", "format"):
        assert isinstance(record[key], str), key
    assert isinstance(record["upgraded"], bool)
    assert record["harness"] in {"multivon-eval", "inspect-ai"}
    assert isinstance(record["complete"], bool)
    assert record["log_status"] is None or isinstance(record["log_status"], str)
    if record["harness"] == "multivon-eval":
        assert (record["complete"], record["log_status"]) == (True, None)
    assert set(record["cases"]) - EXTRA_KEYS["cases"] == CASES_KEYS
    assert all(type(v) is int and v >= 0 for v in record["cases"].values())
    counts = record["cases"]
    assert counts["evaluated"] + counts["errored"] + counts["skipped"] <= counts["total"]
    assert set(record["runs"]) == {"min", "max"}
    low, high = record["runs"]["min"], record["runs"]["max"]
    assert type(low) is int and type(high) is int and 1 <= low <= high
    k_max = max(8, high)
    for metric in ("pass_at_k", "pass_hat_k"):
        cells = record[metric]
        assert list(cells) == [str(k) for k in range(1, k_max + 1)], metric
        for k, cell in cells.items():
            assert set(cell) == CELL_KEYS, (metric, k)
            assert all(_number_or_none(cell[f]) for f in ("value", "ci_low", "ci_high"))
            if cell["value"] is None:
                assert cell["ci_low"] is None and cell["ci_high"] is None
                assert isinstance(cell["unknown_reason"], str)
                assert cell["unknown_reason"].startswith("UNKNOWN")
            else:
                assert cell["unknown_reason"] is None
                assert 0 <= cell["ci_low"] <= cell["value"] <= cell["ci_high"] <= 1
        if int(k_max) > high:  # never extrapolated past the longest run
            assert cells[str(k_max)]["value"] is None
    assert isinstance(record["lottery"], list)
    for case in record["lottery"]:
        assert set(case) == LOTTERY_KEYS
        assert case["case_id"] is None or isinstance(case["case_id"], str)
        assert isinstance(case["input"], str)
        assert type(case["passes"]) is int and type(case["runs"]) is int
        assert 0 < case["passes"] < case["runs"] <= high


def check_problems(problems: list[dict[str, Any]]) -> None:
    assert isinstance(problems, list)
    for problem in problems:
        assert set(problem) - EXTRA_KEYS["problems"] == PROBLEM_KEYS, problem
        assert isinstance(problem["file"], str) and isinstance(problem["reason"], str)
        assert problem["reason"].strip()


def test_json_by_file_shape(by_file: dict[str, Any], reports_dir: Path) -> None:
    assert set(by_file) == {"reports", "problems"}
    assert by_file["reports"]
    for record in by_file["reports"]:
        check_report(record)
        assert (reports_dir / record["file"]).is_file()
    check_problems(by_file["problems"])
    assert {p["file"] for p in by_file["problems"]} >= {"truncated.json", "notes.json"}
    loaded = {r["file"] for r in by_file["reports"]}
    assert loaded == {p.name for p in reports_dir.glob("*.json")} - {"truncated.json", "notes.json"}


def test_json_is_the_same_document_from_a_separate_process(
    by_file: dict[str, Any], reports_dir: Path
) -> None:
    done = run_process(["summary", str(reports_dir), "--json", "--by", "file", "--catalog", MEMORY])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == by_file


def test_json_by_release(reports_dir: Path, by_file: dict[str, Any]) -> None:
    code, out, err = run_main(
        ["summary", str(reports_dir), "--json", "--by", "release", "--catalog", MEMORY]
    )
    assert code == 0, err
    document = json.loads(out)
    assert set(document) == {"releases", "problems"}
    check_problems(document["problems"])
    assert document["problems"] == by_file["problems"]
    seen: set[tuple[str, str]] = set()
    files: list[str] = []
    for record in document["releases"]:
        check_report(record, extra=EXTRA_KEYS["release"])
        key = (record["suite"], record["release"])
        assert key not in seen, f"release listed twice: {key}"
        seen.add(key)
        assert record["file"] in record["files"]
        files.extend(record["files"])
    assert sorted(files) == sorted(r["file"] for r in by_file["reports"])
    for suite in {s for s, _ in seen}:
        ranks = [r["release_rank"] for r in document["releases"] if r["suite"] == suite]
        assert ranks == list(range(1, len(ranks) + 1)), suite
    # Each release shows the numbers of one of its files, unchanged.
    per_file = {r["file"]: r for r in by_file["reports"]}
    for record in document["releases"]:
        shown = {k: v for k, v in record.items() if k not in EXTRA_KEYS["release"]}
        assert shown == per_file[record["file"]]


def test_sample_reports_release_order_follows_the_dated_history() -> None:
    """sample_reports/<suite>/<date>_<version>.json: release ranks follow the dates."""
    code, out, err = run_main(
        ["summary", str(SAMPLES), "--json", "--by", "release", "--catalog", MEMORY]
    )
    assert code == 0, err
    releases = json.loads(out)["releases"]
    for suite in {r["suite"] for r in releases}:
        ordered = sorted(
            (r for r in releases if r["suite"] == suite), key=lambda r: r["release_rank"]
        )
        dates = [min(Path(f).name[:10] for f in r["files"]) for r in ordered]
        assert dates == sorted(dates), (suite, [r["release"] for r in ordered])
        assert len(ordered) >= 2
    assert len({r["suite"] for r in releases}) >= 2
    assert len({r["release"] for r in releases}) >= 6


# ---- exit codes ---------------------------------------------------------------------------


def test_missing_directory_exits_2(tmp_path: Path) -> None:
    code, out, err = run_main(["summary", str(tmp_path / "nope"), "--catalog", MEMORY])
    assert (code, out) == (2, "")
    assert "no such directory" in err


def test_file_instead_of_directory_exits_2(tmp_path: Path) -> None:
    (tmp_path / "report.json").write_text("{}")
    code, _, err = run_main(["summary", str(tmp_path / "report.json"), "--catalog", MEMORY])
    assert code == 2
    assert "not a directory" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["summary", "--bogus"],
        ["summary"],
        ["summary", ".", "--by", "suite"],
        ["summary", ".", "--max-file-mb", "lots"],
        ["frobnicate"],
        [],
    ],
    ids=["unknown-option", "no-directory", "bad-by", "bad-number", "unknown-command", "nothing"],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    code, out, err = run_main(argv)
    assert code == 2
    assert out == ""
    assert "usage:" in err


def test_usage_error_exit_status_from_a_process(tmp_path: Path) -> None:
    done = run_process(["summary", str(tmp_path / "missing"), "--bogus"])
    assert done.returncode == 2, done.stderr


def test_a_process_ends_with_its_commands_code_and_everything_it_wrote(
    tmp_path: Path, reports_dir: Path
) -> None:
    """A command that returns ends its process at once (entry.leave), after writing out
    what stdout and stderr hold: its exit code, a usage error's message, and a reader that
    closed the pipe early (`| head`) ending it quietly."""
    done = run_process(["summary", str(tmp_path / "missing")])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("relidash: ") and "missing" in done.stderr
    reader_gone = subprocess.Popen(
        [sys.executable, "-m", "dashboard.cli", "summary", str(reports_dir), "--catalog", MEMORY],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert reader_gone.stdout is not None and reader_gone.stderr is not None
    reader_gone.stdout.close()
    err = reader_gone.stderr.read().decode()
    assert reader_gone.wait(timeout=120) == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_a_catalog_path_naming_someone_elses_database_is_refused_untouched(
    tmp_path: Path,
) -> None:
    """--catalog pointed at a DuckDB file with other tables: exit 2, every table kept."""
    import duckdb

    theirs = tmp_path / "analytics.duckdb"
    with duckdb.connect(str(theirs)) as con:
        con.execute("CREATE TABLE revenue AS SELECT 42 AS amount")
    code, _, err = run_main(["summary", str(SAMPLES), "--catalog", str(theirs)])
    assert code == 2
    assert f"{theirs} is a DuckDB database relidash did not write" in err
    with duckdb.connect(str(theirs), read_only=True) as con:
        assert con.execute("SELECT amount FROM revenue").fetchall() == [(42,)]
        assert [t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()] == [
            "revenue"
        ]


def test_a_damaged_catalog_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    """Renamed, never deleted: a catalog is a cache, rebuilt from the reports."""
    catalog = tmp_path / "catalog.duckdb"
    assert run_main(["summary", str(SAMPLES), "--catalog", str(catalog)])[0] == 0
    data = bytearray(catalog.read_bytes())
    data[4096:] = b"\xff" * (len(data) - 4096)  # the header kept, the rest garbage
    catalog.write_bytes(bytes(data))
    code, out, _ = run_main(["summary", str(SAMPLES), "--json", "--catalog", str(catalog)])
    assert code == 0 and json.loads(out)["reports"]
    assert (tmp_path / "catalog.duckdb.broken").read_bytes() == bytes(data)


def test_the_parser_spells_the_metrics_and_the_latest_release_as_analysis_does() -> None:
    from dashboard.analysis.releases import LATEST
    from dashboard.cli import ci
    from dashboard.stats import METRIC_PASS_HAT_K, METRICS

    assert ci.METRICS == METRICS
    assert ci.METRIC_PASS_HAT_K == METRIC_PASS_HAT_K
    assert ci.LATEST == LATEST
