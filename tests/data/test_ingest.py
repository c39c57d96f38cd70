"""Loading a reports directory: bad input, read-only access, incremental refresh, releases.

Every bad-input kind gets one test: exactly one problem row names the bad file with a
reason a person can act on, and every other file loads with the same numbers as in a
clean directory. The "other files" are copies of the small real fixtures (every
multivon-eval format) under a temporary directory; nothing under tests/ is touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
import summaries
from report_files import is_report

from dashboard.analysis import loading
from dashboard.cli import main as cli
from dashboard.data import catalog
from dashboard.data.catalog import (
    MEMORY,
    CatalogError,
    default_catalog_path,
    open_catalog,
    problems,
    resolve_catalog_path,
)
from dashboard.data.catalog.queries import execute
from dashboard.data.catalog.schema import REPORT_COLUMNS, REPORT_TABLES
from dashboard.data.formats.multivon import checks, reader, staging
from dashboard.data.load import batches, ingest
from dashboard.data.load.ingest import IngestResult
from dashboard.render import summary_json
from dashboard.simulate.records import content_digest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SMALL = 100_000  # bytes: the "other files" are the small fixtures, to keep loads fast
OLD_NS = 1_600_000_000 * 10**9  # 2020-09-13: far from "now", so no file is racy
HEAD = 64 * 1024


# ---- helpers ------------------------------------------------------------------------------


def fixture_reports() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.json") if is_report(p))


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def load(root: Path, **kwargs: Any) -> tuple[dict[str, Any], IngestResult]:
    """Load root into a fresh in-memory catalog; the summary document and the load result."""
    con = open_catalog(MEMORY)
    try:
        result = loading.refresh_catalog(con, root, **kwargs)
        return summaries.summary_json(con, by="file"), result
    finally:
        con.close()


def records(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["file"]: r for r in document["reports"]}


def problems_for(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [p for p in document["problems"] if p["file"] == name]


def numbers(record: dict[str, Any]) -> dict[str, Any]:
    """What must not change when a neighbouring file is bad (or a file is only renamed)."""
    keep = ("suite", "format", "upgraded", "cases", "runs", "pass_at_k", "pass_hat_k", "lottery")
    return {key: record[key] for key in keep}


def assert_readable(reason: str, root: Path) -> None:
    assert reason.strip(), "empty reason"
    assert "\n" not in reason and len(reason) < 500, reason
    assert "Traceback" not in reason, reason
    assert not re.match(r"\w+(Error|Exception)\b", reason), f"a raw exception: {reason}"
    assert str(root) not in reason, f"reason leaks the absolute path: {reason}"


def set_old_mtimes(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            os.utime(path, ns=(OLD_NS, OLD_NS))


@pytest.fixture(scope="module")
def small_reports() -> list[Path]:
    chosen = [p for p in fixture_reports() if p.stat().st_size < SMALL]
    assert len(chosen) >= 3, f"too few small fixture reports in {FIXTURES}"
    return chosen


def populate(root: Path, sources: list[Path]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for source in sources:
        shutil.copyfile(source, root / source.name)
    return root


@pytest.fixture(scope="module")
def baseline(small_reports: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The clean directory's document: what every other file must still give."""
    root = populate(tmp_path_factory.mktemp("clean"), small_reports)
    document, result = load(root)
    assert result.parsed == len(small_reports)
    assert set(records(document)) == {p.name for p in small_reports}
    return document


@pytest.fixture
def reports_dir(tmp_path: Path, small_reports: list[Path]) -> Path:
    return populate(tmp_path / "reports", small_reports)


def assert_others_unchanged(document: dict[str, Any], baseline: dict[str, Any]) -> None:
    got, want = records(document), records(baseline)
    for name, record in want.items():
        assert name in got, f"{name} no longer loads: {problems_for(document, name)}"
        assert numbers(got[name]) == numbers(record), f"{name} changed"
        assert problems_for(document, name) == problems_for(baseline, name)


def one_file_problem(document: dict[str, Any], name: str, root: Path) -> str:
    rows = problems_for(document, name)
    assert len(rows) == 1, f"{name}: expected one problem row, got {rows}"
    assert name not in records(document), f"{name} was loaded as a report"
    assert rows[0].get("scope", "file") == "file"
    assert_readable(rows[0]["reason"], root)
    return str(rows[0]["reason"])


def report_with(predicate: Callable[[dict[str, Any]], bool], sources: list[Path]) -> Path:
    for source in sources:
        if predicate(read(source)):
            return source
    pytest.fail("no fixture report fits this test; regenerate tests/fixtures")


def _stored_value(data: dict[str, Any], metric: str) -> Any:
    block = data.get("summary", {}).get(metric)
    return block.get("value") if isinstance(block, dict) else None


# ---- bad file contents --------------------------------------------------------------------


def _dup_in_case(base: dict[str, Any]) -> bytes:
    first = json.dumps(base["cases"][0])
    duplicated = first[:-1] + ', "runs": 1}'  # every version writes `runs`: here it is twice
    rest = dict(base, cases=["@@CASE0@@", *base["cases"][1:]])
    return json.dumps(rest).replace('"@@CASE0@@"', duplicated).encode()


def _invalid_utf8(base: dict[str, Any], late: bool) -> bytes:
    data = json.loads(json.dumps(base))
    if late:  # past the cheap 64 KiB head check: DuckDB's reader must catch it
        data["cases"][-1]["input"] = "x" * (HEAD + 1000) + "@@BAD@@"
    else:
        data["suite"] = "caf@@BAD@@"
    raw = json.dumps(data).encode().replace(b"@@BAD@@", b"\xe9")  # Latin-1 e-acute
    assert (raw.index(b"\xe9") > HEAD) is late
    return raw


def _nested(base: dict[str, Any], depth: int) -> bytes:
    data = dict(base, summary=dict(base["summary"], deep="@@DEEP@@"))
    return json.dumps(data).replace('"@@DEEP@@"', "[" * depth + "]" * depth).encode()


def _with_nan(base: dict[str, Any]) -> bytes:
    data = json.loads(json.dumps(base))
    data["cases"][0]["score"] = float("nan")
    return json.dumps(data).encode()


def _wrong_runs(base: dict[str, Any]) -> bytes:
    data = json.loads(json.dumps(base))
    data["cases"][0]["runs"] = "eight"
    return json.dumps(data).encode()


# kind -> (bytes from a base report, pattern the reason must match)
BAD_CONTENTS: dict[str, tuple[Callable[[dict[str, Any]], bytes], str]] = {
    "empty": (lambda base: b"", r"empty"),
    "whitespace-only": (lambda base: b" \n\t\n", r"whitespace|empty"),
    "truncated": (lambda base: json.dumps(base).encode()[:2000], r"truncat|malformed|end of"),
    "not-utf8-in-head": (lambda base: _invalid_utf8(base, late=False), r"UTF-8"),
    "not-utf8-past-head": (lambda base: _invalid_utf8(base, late=True), r"UTF-8"),
    "binary": (lambda base: bytes(range(256)) * 8, r"binary"),
    "json-array": (lambda base: json.dumps([base]).encode(), r"array"),
    "json-number": (lambda base: b"42\n", r"not a JSON report|not a report|object"),
    "json-string": (lambda base: b'"report"', r"not a JSON report|not a report|object"),
    "json-null": (lambda base: b"null", r"not a JSON report|not a report|object"),
    "duplicate-top-level-key": (
        lambda base: b'{"suite": "other", ' + json.dumps(base).encode()[1:],
        r"duplicate key.*suite",
    ),
    "duplicate-key-in-case": (_dup_in_case, r"duplicate key.*runs"),
    "two-values-ndjson": (
        lambda base: (json.dumps(base) + "\n" + json.dumps(base) + "\n").encode(),
        r"2 JSON values|two|more than one",
    ),
    "two-values-concatenated": (
        lambda base: (json.dumps(base) + json.dumps(base)).encode(),
        r"2 JSON values|two|more than one",
    ),
    "not-a-report": (lambda base: b'{"hello": "world"}', r"not a multivon-eval report|cases"),
    "empty-object": (lambda base: b"{}", r"not a multivon-eval report|cases"),
    "cases-null": (lambda base: b'{"suite": "s", "cases": null}', r"not a multivon-eval|cases"),
    "wrong-type-runs": (_wrong_runs, r"eight"),
    "wrong-type-cases": (
        lambda base: json.dumps(dict(base, cases="nope")).encode(),
        r"nope|ARRAY|list",
    ),
    "nan-literal": (_with_nan, r"NaN"),
    "runaway-nesting": (lambda base: _nested(base, 5000), r"nest|deep"),
}


@pytest.fixture(scope="module", params=["json-reader", "strict-first"])
def bad_load(
    request: pytest.FixtureRequest,
    small_reports: list[Path],
    baseline: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, Any]]:
    """One load of the clean files plus one bad file of every kind (each kind is its own test).

    Loading them together also checks that the batch readers isolate every bad file. Run
    twice: as small files are (DuckDB's JSON reader), and with every file taking the
    strict fast path first, as large ones do; the verdicts must not differ.
    """
    root = populate(tmp_path_factory.mktemp("bad") / "reports", small_reports)
    base = read(small_reports[0])
    for kind, (make, _) in BAD_CONTENTS.items():
        (root / f"bad-{kind}.json").write_bytes(make(base))
    (root / "x.json").mkdir()
    (root / "x.json" / "inner.json").write_bytes(small_reports[0].read_bytes())
    (root / "loop-a.json").symlink_to("loop-b.json")
    (root / "loop-b.json").symlink_to("loop-a.json")
    (root / "dangling.json").symlink_to("nowhere.json")
    (root / "with-bom.json").write_bytes(b"\xef\xbb\xbf" + small_reports[0].read_bytes())
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "strict-first":
            patch.setattr(batches, "STRICT_MIN_BYTES", 0)
            patch.setattr(reader, "head_has_every_field", lambda abspath: True)
        document, _ = load(root)
    return root, document


@pytest.mark.parametrize("kind", list(BAD_CONTENTS))
def test_bad_file_is_one_problem_and_others_load(
    kind: str, bad_load: tuple[Path, dict[str, Any]], baseline: dict[str, Any]
) -> None:
    root, document = bad_load
    reason = one_file_problem(document, f"bad-{kind}.json", root)
    assert re.search(BAD_CONTENTS[kind][1], reason, re.IGNORECASE), reason
    assert_others_unchanged(document, baseline)


@pytest.mark.parametrize(
    ("name", "pattern"),
    [
        ("x.json", r"director"),
        ("loop-a.json", r"loop"),
        ("loop-b.json", r"loop"),
        ("dangling.json", r"broken|missing|disappeared|no such"),
    ],
)
def test_bad_directory_entry_is_one_problem(
    name: str, pattern: str, bad_load: tuple[Path, dict[str, Any]], baseline: dict[str, Any]
) -> None:
    root, document = bad_load
    reason = one_file_problem(document, name, root)
    assert re.search(pattern, reason, re.IGNORECASE), reason
    assert_others_unchanged(document, baseline)


def test_report_inside_a_directory_named_like_a_report_loads(
    bad_load: tuple[Path, dict[str, Any]], small_reports: list[Path], baseline: dict[str, Any]
) -> None:
    _, document = bad_load
    got = records(document)["x.json/inner.json"]
    assert numbers(got) == numbers(records(baseline)[small_reports[0].name])


def test_utf8_with_bom_loads_like_without(
    bad_load: tuple[Path, dict[str, Any]], small_reports: list[Path], baseline: dict[str, Any]
) -> None:
    _, document = bad_load
    assert problems_for(document, "with-bom.json") == []
    got = records(document)["with-bom.json"]
    assert numbers(got) == numbers(records(baseline)[small_reports[0].name])


def test_trial_fields_the_load_does_not_read_may_hold_any_type(tmp_path: Path) -> None:
    """multivon-eval 0.20.0's loader takes a trial whose latency_ms is text, its digest
    matching (it checks a trial's schema, digest, attempt, run_index and case, not that):
    so does relidash, by each reader (framed, DuckDB's JSON reader, strict), with the
    numbers of the unedited file. The load reads a trial's status, time and position only;
    the rest is read back from the file for the case shown."""
    edited, unedited = tmp_path / "edited", tmp_path / "unedited"
    edited.mkdir()
    unedited.mkdir()
    sources = {}
    for name, source, padding in (
        ("framed.json", "mv-0.20.0_all-pass_runs3.json", 0),
        ("read.json", "mv-0.20.0_early-stop_runs8.json", 0),
        ("strict.json", "mv-0.20.0_early-stop_runs8.json", batches.STRICT_MIN_BYTES),
    ):
        sources[name] = source
        shutil.copyfile(FIXTURES / source, unedited / source)
        data = read(FIXTURES / source)
        trial = next(c for c in data["cases"] if c.get("trials"))["trials"][0]
        trial["latency_ms"], trial["model_error"] = "about five seconds", {"not": "text"}
        trial["output"] = f"{trial['output']}{' ' * padding}"
        # the digest multivon-eval checks: SHA-256 of the trial's canonical JSON without it
        trial["digest"] = content_digest({k: v for k, v in trial.items() if k != "digest"})
        write(edited / name, data)
    sizes = {name: (edited / name).stat().st_size for name in sources}
    assert sizes["framed.json"] < batches.FRAMED_BELOW <= sizes["read.json"]
    assert sizes["read.json"] < batches.STRICT_MIN_BYTES <= sizes["strict.json"]
    assert checks.head_has_every_field(str(edited / "strict.json"))
    expected, _ = load(unedited)
    document, result = load(edited)
    assert document["problems"] == [] and result.parsed == 3
    for name, source in sources.items():
        assert numbers(records(document)[name]) == numbers(records(expected)[source]), name


def test_only_reports_that_write_every_field_try_the_strict_path_first() -> None:
    chosen = {p.name for p in fixture_reports() if checks.head_has_every_field(str(p))}
    assert chosen == {p.name for p in fixture_reports() if "0.20.0" in p.name}


def test_strict_fast_path_stages_what_the_json_reader_stages() -> None:
    """Where the strict path takes a real report, its rows equal DuckDB's JSON reader's."""
    files = [str(p) for p in fixture_reports() + sorted((REPO / "sample_reports").rglob("*.json"))]
    con = duckdb.connect()
    taken = []
    for path in files:
        try:
            (part,) = staging.stage_strict_parts(con, [path])
        except duckdb.InvalidInputException:
            continue  # a key this version does not write: the reader decides alone
        fast = con.execute(f"SELECT * EXCLUDE (maybe_constants) FROM {part}").fetchall()
        size = Path(path).stat().st_size
        execute(
            con,
            "formats/multivon/stage_reports",
            files=[path],
            columns=REPORT_COLUMNS,
            max_bytes=size + 1,
        )
        assert con.execute("SELECT * FROM stage_json").fetchall() == fast, path
        taken.append(Path(path).name)
    # every 0.20 report has every field, so the fast path must take at least those
    assert {p.name for p in fixture_reports() if "0.20.0" in p.name} <= set(taken), taken


def test_strict_parse_in_parts_stages_each_file_once_as_alone(tmp_path: Path) -> None:
    """A batch's strict parse is split between statements run at once; their union holds
    each file's row once, equal to the row the file gives parsed alone."""
    real = [p for p in fixture_reports() if "0.20.0" in p.name]
    files = []
    for i in range(5):  # an odd count: the parts differ in size
        copy = tmp_path / f"{i}-{real[i % len(real)].name}"
        shutil.copyfile(real[i % len(real)], copy)
        files.append(str(copy))
    con = duckdb.connect()
    parts = staging.stage_strict_parts(con, files)
    assert len(parts) == len(staging.STAGE_PARTS) == 2
    union = " UNION ALL ".join(f"SELECT * FROM {part}" for part in parts)
    together = con.execute(f"SELECT * FROM ({union}) ORDER BY filename").fetchall()
    alone = []
    for path in sorted(files):
        (part,) = staging.stage_strict_parts(con, [path])
        alone += con.execute(f"SELECT * FROM {part}").fetchall()
    assert [row[-2] for row in together] == sorted(files)  # filename, maybe_constants last
    assert together == alone


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway")
def test_unreadable_file(
    reports_dir: Path, small_reports: list[Path], baseline: dict[str, Any]
) -> None:
    path = reports_dir / "locked.json"
    shutil.copyfile(small_reports[0], path)
    path.chmod(0)
    try:
        document, _ = load(reports_dir)
    finally:
        path.chmod(0o644)
    assert re.search("permission", one_file_problem(document, "locked.json", reports_dir))
    assert_others_unchanged(document, baseline)


def test_file_over_the_size_limit(
    reports_dir: Path, small_reports: list[Path], baseline: dict[str, Any]
) -> None:
    limit = max(p.stat().st_size for p in small_reports) + 1
    padded = dict(read(small_reports[0]), padding="x" * limit)
    write(reports_dir / "huge.json", padded)
    document, _ = load(reports_dir, max_bytes=limit)
    assert re.search("size limit", one_file_problem(document, "huge.json", reports_dir))
    assert_others_unchanged(document, baseline)


def test_size_limit_reason_uses_the_flag_s_units(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "reports"
    root.mkdir()
    write(root / "big.json", {"cases": [], "padding": "x" * 800_000})
    code = cli.main(["summary", str(root), "--json", "--catalog", MEMORY, "--max-file-mb", "0.5"])
    assert code == 0
    (problem,) = json.loads(capsys.readouterr().out)["problems"]
    assert re.search(r"\b0\.5 Mi?B size limit", problem["reason"]), problem["reason"]


# ---- case-scope and report-scope problems -------------------------------------------------


def load_edited_and_dropped(reports_dir: Path, data: dict[str, Any], idx: int) -> dict[str, Any]:
    """Load the edited report as edited.json beside dropped.json, the same report without
    case idx: an excluded case must leave the numbers of the file without it."""
    write(reports_dir / "edited.json", data)
    write(
        reports_dir / "dropped.json",
        dict(data, cases=data["cases"][:idx] + data["cases"][idx + 1 :]),
    )
    document, _ = load(reports_dir)
    return document


def _lottery_case_base(small_reports: list[Path], baseline: dict[str, Any]) -> tuple[Path, int]:
    """A report without a stored pass@k block, and a case of it that is a lottery case."""
    for source in small_reports:
        data = read(source)
        if "pass_at_k" in data.get("summary", {}):
            continue
        lottery = {case["input"] for case in records(baseline)[source.name]["lottery"]}
        for idx, case in enumerate(data["cases"]):
            if case.get("input") in lottery and not case.get("trials"):
                return source, idx
    pytest.fail("no small pre-0.16 fixture with a lottery case")


@pytest.mark.parametrize(
    ("field", "value", "pattern"),
    [
        pytest.param("pass_count", "runs+1", r"pass_count .* outside", id="pass_count>runs"),
        pytest.param("run_pass_rate", 1.5, r"run_pass_rate 1\.5", id="run_pass_rate=1.5"),
        pytest.param("run_pass_rate", -0.25, r"run_pass_rate -0\.25", id="run_pass_rate<0"),
        pytest.param("pass_count", 1.5, r"pass_count 1\.5", id="pass_count-fractional"),
    ],
)
def test_impossible_numbers_exclude_only_that_case(
    field: str,
    value: Any,
    pattern: str,
    reports_dir: Path,
    small_reports: list[Path],
    baseline: dict[str, Any],
) -> None:
    source, idx = _lottery_case_base(small_reports, baseline)
    data = read(source)
    case = data["cases"][idx]
    case[field] = case["runs"] + 1 if value == "runs+1" else value
    document = load_edited_and_dropped(reports_dir, data, idx)

    rows = problems_for(document, "edited.json")
    assert len(rows) == 1, rows
    assert rows[0]["scope"] == "case"
    assert re.search(pattern, rows[0]["reason"]), rows[0]["reason"]
    assert_readable(rows[0]["reason"], reports_dir)
    edited, dropped = records(document)["edited.json"], records(document)["dropped.json"]
    before = records(baseline)[source.name]
    # The case is in no metric: the numbers are those of the file without it.
    assert edited["pass_at_k"] == dropped["pass_at_k"]
    assert edited["pass_hat_k"] == dropped["pass_hat_k"]
    assert edited["lottery"] == dropped["lottery"]
    assert case["input"] not in {c["input"] for c in edited["lottery"]}
    assert edited["cases"]["total"] == before["cases"]["total"]
    assert edited["cases"]["evaluated"] == before["cases"]["evaluated"] - 1
    assert edited["pass_hat_k"] != before["pass_hat_k"]  # the test can fail
    assert_others_unchanged(document, baseline)


def test_null_run_pass_rate_is_a_case_problem(
    reports_dir: Path, small_reports: list[Path], baseline: dict[str, Any]
) -> None:
    source, idx = _lottery_case_base(small_reports, baseline)
    data = read(source)
    data["cases"][idx]["run_pass_rate"] = None
    document = load_edited_and_dropped(reports_dir, data, idx)
    rows = problems_for(document, "edited.json")
    assert [r["scope"] for r in rows] == ["case"], rows
    edited, dropped = records(document)["edited.json"], records(document)["dropped.json"]
    assert edited["pass_hat_k"] == dropped["pass_hat_k"]


@pytest.mark.parametrize("edit", ["value", "ci_95"])
def test_hand_edited_stored_block_is_a_report_problem(
    edit: str, reports_dir: Path, small_reports: list[Path], baseline: dict[str, Any]
) -> None:
    source = report_with(lambda d: _stored_value(d, "pass_hat_k") is not None, small_reports)
    data = read(source)
    block = data["summary"]["pass_hat_k"]
    if edit == "value":
        block["value"] = round((block["value"] + 0.37) % 1.0, 4)
    else:
        block["ci_95"] = [0.0, 0.01]
    write(reports_dir / "edited.json", data)
    document, _ = load(reports_dir)
    rows = problems_for(document, "edited.json")
    assert len(rows) == 1, rows
    assert rows[0]["scope"] == "report"
    assert re.search(r"stored pass\^", rows[0]["reason"]), rows[0]["reason"]
    assert_readable(rows[0]["reason"], reports_dir)
    # It still loads, with the numbers its cases give (those of the unedited file).
    assert numbers(records(document)["edited.json"]) == numbers(records(baseline)[source.name])
    assert_others_unchanged(document, baseline)


# ---- nothing in the reports directory changes ---------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry under root: type, mode, size, mtime, inode, and a content hash for files."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames + ["."]:
            path = Path(dirpath) / name
            st = path.lstat()
            digest = ""
            if stat.S_ISREG(st.st_mode) and st.st_mode & 0o444:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
            key = path.relative_to(root).as_posix()
            out[key] = (
                stat.S_IFMT(st.st_mode),
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
                digest,
            )
    return out


def test_reports_directory_is_never_written(
    tmp_path: Path,
    small_reports: list[Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = populate(tmp_path / "reports", small_reports)
    populate(root / "nested" / "deeper", small_reports[:2])
    (root / "empty.json").write_bytes(b"")
    (root / "truncated.json").write_bytes(small_reports[0].read_bytes()[:500])
    (root / "dir.json").mkdir()
    (root / "loop.json").symlink_to("loop.json")
    (root / "relidash.toml").write_text('[releases]\nkey = "model"\n')
    set_old_mtimes(root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    before = snapshot(root)

    for argv in (
        ["summary", str(root), "--json"],  # default catalog: first load
        ["summary", str(root), "--by", "release"],  # default catalog: incremental, text
        ["summary", str(root), "--catalog", str(tmp_path / "elsewhere.duckdb")],
    ):
        assert cli.main(argv) == 0
    capsys.readouterr()

    assert snapshot(root) == before
    assert default_catalog_path(root).is_file()  # the catalog went to the cache instead
    assert default_catalog_path(root).is_relative_to(tmp_path / "cache" / "relidash")


# ---- incremental refresh ------------------------------------------------------------------


@pytest.fixture
def file_catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], Any]:
    """Opens the default (on-disk) catalog of a directory under a temporary cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    opened: list[Any] = []

    def open_for(root: Path) -> Any:
        con = open_catalog(resolve_catalog_path(root, None))
        opened.append(con)
        return con

    yield open_for
    for con in opened:
        con.close()


def test_second_load_parses_nothing(reports_dir: Path, file_catalog: Callable[[Path], Any]) -> None:
    (reports_dir / "empty.json").write_bytes(b"")
    set_old_mtimes(reports_dir)
    con = file_catalog(reports_dir)
    first = loading.refresh_catalog(con, reports_dir)
    document = summaries.summary_json(con)
    second = loading.refresh_catalog(con, reports_dir)
    assert first.parsed == first.files > 0
    assert (second.parsed, second.unchanged, second.removed) == (0, first.files, 0)
    assert summaries.summary_json(con) == document


def test_metrics_computed_during_the_load_equal_those_computed_after(reports_dir: Path) -> None:
    """refresh_catalog computes each batch's metrics while the next parses; same rows."""
    sample = REPO / "sample_reports"
    tables = []
    for during_load in (True, False):
        con = open_catalog(MEMORY)
        if during_load:
            loading.refresh_catalog(con, sample)
        else:
            ingest.ingest_directory(con, sample)
            assert loading.compute_pending_metrics(con) > 0
        tables.append(
            [
                con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in ("metrics", "problems")
            ]
            + [con.execute("SELECT report_id, case_idx, rank FROM lottery ORDER BY ALL").fetchall()]
        )
        con.close()
    assert tables[0] == tables[1]
    assert len(tables[0][0]) > 100  # metric rows


def test_touched_but_unchanged_file_is_not_parsed(
    reports_dir: Path, small_reports: list[Path], file_catalog: Callable[[Path], Any]
) -> None:
    set_old_mtimes(reports_dir)
    con = file_catalog(reports_dir)
    loading.refresh_catalog(con, reports_dir)
    document = summaries.summary_json(con)
    touched = reports_dir / small_reports[0].name
    os.utime(touched, ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    result = loading.refresh_catalog(con, reports_dir)
    assert result.parsed == 0 and result.unchanged == result.files
    assert summaries.summary_json(con) == document
    os.utime(touched)  # now: a racy mtime is digested again, still not parsed
    assert loading.refresh_catalog(con, reports_dir).parsed == 0
    assert loading.refresh_catalog(con, reports_dir).parsed == 0


def test_changed_file_is_parsed_alone(
    reports_dir: Path, small_reports: list[Path], file_catalog: Callable[[Path], Any]
) -> None:
    set_old_mtimes(reports_dir)
    con = file_catalog(reports_dir)
    loading.refresh_catalog(con, reports_dir)
    before = records(summaries.summary_json(con))
    source = report_with(
        lambda d: "pass_at_k" not in d["summary"] and any(c["runs"] > 1 for c in d["cases"]),
        small_reports,
    )
    data = read(source)
    for case in data["cases"]:
        case["run_pass_rate"] = 1.0
    write(reports_dir / source.name, data)
    result = loading.refresh_catalog(con, reports_dir)
    assert result.parsed == 1
    after = records(summaries.summary_json(con))
    assert after[source.name]["pass_hat_k"] != before[source.name]["pass_hat_k"]
    assert after[source.name]["lottery"] == []
    for name in before.keys() - {source.name}:
        assert after[name] == before[name]


def test_racy_same_size_rewrite_is_noticed(
    reports_dir: Path, small_reports: list[Path], file_catalog: Callable[[Path], Any]
) -> None:
    """A file rewritten within the racy window, keeping size and mtime, is still re-read."""
    source = report_with(lambda d: "pass_at_k" not in d["summary"], small_reports)
    path = reports_dir / source.name
    future = time.time_ns() + 3600 * 10**9  # racy for sure: newer than the load itself
    os.utime(path, ns=(future, future))
    con = file_catalog(reports_dir)
    loading.refresh_catalog(con, reports_dir)
    before = records(summaries.summary_json(con))[source.name]
    st = path.stat()
    raw = path.read_bytes()
    swapped = raw.replace(b'"suite": "', b'"suite": "X', 1).replace(b" ", b"", 1)
    assert len(swapped) == len(raw) and swapped != raw
    path.write_bytes(swapped)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert loading.refresh_catalog(con, reports_dir).parsed == 1
    assert records(summaries.summary_json(con))[source.name]["suite"] == "X" + before["suite"]


def _edit_stored_pass_hat_k(data: dict[str, Any]) -> dict[str, Any]:
    block = data["summary"]["pass_hat_k"]
    block["value"] = round((block["value"] + 0.37) % 1.0, 4)
    return data


def test_deleted_files_and_their_problems_go(
    reports_dir: Path, small_reports: list[Path], file_catalog: Callable[[Path], Any]
) -> None:
    source = report_with(lambda d: _stored_value(d, "pass_hat_k") is not None, small_reports)
    write(reports_dir / "edited.json", _edit_stored_pass_hat_k(read(source)))
    (reports_dir / "empty.json").write_bytes(b"")
    con = file_catalog(reports_dir)
    loading.refresh_catalog(con, reports_dir)
    document = summaries.summary_json(con)
    gone = {"edited.json", "empty.json", small_reports[0].name}
    for name in gone - {small_reports[0].name}:
        assert problems_for(document, name), name
    for name in gone:
        (reports_dir / name).unlink()
    result = loading.refresh_catalog(con, reports_dir)
    assert (result.parsed, result.removed) == (0, 3)
    after = summaries.summary_json(con)
    assert after["problems"] == [p for p in document["problems"] if p["file"] not in gone]
    assert set(records(after)) == set(records(document)) - gone


def _rows_by_file(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Each report table's rows counted by the file they came from (report ids differ
    between loads), and any row whose report is gone."""
    counts: dict[str, Any] = {}
    for table in REPORT_TABLES:
        counts[table] = con.execute(
            f"SELECT r.file, count(*) FROM {table} t JOIN reports r USING (report_id) "
            "GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        counts[f"{table} orphans"] = con.execute(
            f"SELECT count(*) FROM {table} WHERE report_id NOT IN (SELECT report_id FROM reports)"
        ).fetchall()
    counts["files"] = con.execute("SELECT path, size FROM files ORDER BY ALL").fetchall()
    counts["problems"] = con.execute("SELECT * FROM problems ORDER BY ALL").fetchall()
    return counts


@pytest.mark.parametrize("forgotten", [1, problems.FEW_FILES, problems.FEW_FILES + 1])
def test_changed_and_deleted_files_leave_what_a_fresh_load_makes(
    tmp_path: Path, small_reports: list[Path], file_catalog: Callable[[Path], Any], forgotten: int
) -> None:
    """A load forgets a few files by filters and many by a join: either way the catalog
    holds what a fresh load of the directory holds."""
    root = tmp_path / "reports"
    root.mkdir()
    names = []
    for i in range(2 * problems.FEW_FILES + 2):
        source = small_reports[i % len(small_reports)]
        names.append(f"r{i:02d}-{source.name}")
        shutil.copyfile(source, root / names[-1])
    (root / "empty.json").write_bytes(b"")  # a file problem, forgotten with its file
    set_old_mtimes(root)
    con = file_catalog(root)
    loading.refresh_catalog(con, root)
    "".join(summary_json.summary_stream(con))  # stores the entries (report_records)
    assert con.execute("SELECT count(*) FROM report_records").fetchall() == [(len(names),)]
    removed, rewritten = names[:forgotten], names[forgotten : 2 * forgotten]
    for name in removed:
        (root / name).unlink()
    (root / "empty.json").unlink()
    for name in rewritten:  # other bytes, the same report
        path = root / name
        path.write_text(json.dumps(json.loads(path.read_text())))
    set_old_mtimes(root)
    result = loading.refresh_catalog(con, root)
    assert (result.removed, result.parsed) == (forgotten + 1, forgotten)
    incremental = summaries.summary_json(con)
    fresh = open_catalog(MEMORY)
    try:
        loading.refresh_catalog(fresh, root)
        assert incremental == summaries.summary_json(fresh)
        "".join(summary_json.summary_stream(con))
        "".join(summary_json.summary_stream(fresh))
        assert _rows_by_file(con) == _rows_by_file(fresh)
    finally:
        fresh.close()
    assert not {r["file"] for r in incremental["reports"]} & {*removed, "empty.json"}


def test_deleted_bad_directory_entries_and_their_problems_go(
    reports_dir: Path, file_catalog: Callable[[Path], Any]
) -> None:
    (reports_dir / "loop.json").symlink_to("loop.json")
    (reports_dir / "x.json").mkdir()
    con = file_catalog(reports_dir)
    loading.refresh_catalog(con, reports_dir)
    assert {p["file"] for p in summaries.summary_json(con)["problems"]} == {"loop.json", "x.json"}
    (reports_dir / "loop.json").unlink()
    (reports_dir / "x.json").rmdir()
    loading.refresh_catalog(con, reports_dir)
    assert summaries.summary_json(con)["problems"] == []


def test_file_catalog_survives_reopen(
    reports_dir: Path, tmp_path: Path, file_catalog: Callable[[Path], Any]
) -> None:
    location = Path(resolve_catalog_path(reports_dir, None))
    assert location == default_catalog_path(reports_dir)
    assert location.is_relative_to(tmp_path / "cache" / "relidash")
    other = tmp_path / "other" / reports_dir.name
    other.mkdir(parents=True)
    assert default_catalog_path(other) != location  # one catalog per directory
    con = file_catalog(reports_dir)
    first = loading.refresh_catalog(con, reports_dir)
    document = summaries.summary_json(con)
    con.close()
    assert location.is_file()
    con = file_catalog(reports_dir)
    again = loading.refresh_catalog(con, reports_dir)
    assert (again.parsed, again.unchanged) == (0, first.files)
    assert summaries.summary_json(con) == document


@pytest.mark.parametrize("log_limit", [0, 1 << 40])
def test_settled_or_logged_changes_survive_reopen(
    reports_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_limit: int
) -> None:
    """Exit does not checkpoint; settle_catalog does past its limit. Either way nothing is lost."""
    monkeypatch.setattr(catalog, "CHECKPOINT_LOG_BYTES", log_limit)
    location = str(tmp_path / "catalog.duckdb")
    con = open_catalog(location)
    loading.refresh_catalog(con, reports_dir)
    document = summaries.summary_json(con)
    catalog.settle_catalog(con)
    con.close()
    log = Path(location + ".wal")
    assert (log.exists() and log.stat().st_size > 0) is (log_limit > 0)
    con = open_catalog(location)
    assert loading.refresh_catalog(con, reports_dir).parsed == 0
    assert summaries.summary_json(con) == document
    con.close()


def test_catalog_inside_reports_dir_is_refused(
    reports_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    link = tmp_path / "link-to-reports"
    link.symlink_to(reports_dir, target_is_directory=True)
    before = snapshot(reports_dir)
    for inside in (
        reports_dir / "catalog.duckdb",
        reports_dir / "sub" / "catalog.duckdb",
        reports_dir,
        link / "catalog.duckdb",
    ):
        with pytest.raises(CatalogError):
            resolve_catalog_path(reports_dir, str(inside))
        code = cli.main(["summary", str(reports_dir), "--catalog", str(inside)])
        assert code == 2
        assert "reports directory" in capsys.readouterr().err
    assert snapshot(reports_dir) == before
    assert resolve_catalog_path(reports_dir, MEMORY) == MEMORY


def test_interrupted_ingest_catalog_is_rebuilt(
    reports_dir: Path, file_catalog: Callable[[Path], Any]
) -> None:
    con = file_catalog(reports_dir)
    first = loading.refresh_catalog(con, reports_dir)
    document = summaries.summary_json(con)
    con.execute("INSERT INTO problems VALUES ('sentinel.json', 'file', 'left by a killed load')")
    con.execute("INSERT OR REPLACE INTO meta VALUES ('ingest_complete', '0')")
    con.close()
    con = file_catalog(reports_dir)
    assert con.execute("SELECT count(*) FROM problems").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM files").fetchone() == (0,)
    rebuilt = loading.refresh_catalog(con, reports_dir)
    assert rebuilt.parsed == first.files
    assert summaries.summary_json(con) == document


def test_catalog_pointed_at_another_directory_starts_over(
    tmp_path: Path, small_reports: list[Path]
) -> None:
    one = populate(tmp_path / "one", small_reports[:2])
    two = populate(tmp_path / "two", small_reports[2:3])
    location = str(tmp_path / "shared.duckdb")
    con = open_catalog(location)
    loading.refresh_catalog(con, one)
    loading.refresh_catalog(con, two)
    assert set(records(summaries.summary_json(con))) == {small_reports[2].name}
    con.close()


# ---- release identity and order -----------------------------------------------------------


def _by_release(root: Path) -> dict[str, Any]:
    con = open_catalog(MEMORY)
    try:
        loading.refresh_catalog(con, root)
        return summaries.summary_json(con, by="release")
    finally:
        con.close()


def _order(root: Path) -> list[str]:
    releases = _by_release(root)["releases"]
    ranks = [r["release_rank"] for r in releases]
    assert ranks == list(range(1, len(ranks) + 1)), "one suite, ranks 1..n in output order"
    return [r["release"] for r in releases]


MODELS = ["v1.10.0", "v1.2.0", "v1.9.0"]


def _release_copies(root: Path, base: dict[str, Any], times: dict[str, str] | None = None) -> None:
    root.mkdir(exist_ok=True)
    for i, model in enumerate(MODELS):
        data = json.loads(json.dumps(base))
        data["suite"], data["model"] = "suite-under-test", model
        data.pop("execution", None)  # no declared target version: the model is the release
        if times is not None:
            for case in data["cases"]:
                for trial in case.get("trials") or []:
                    trial["recorded_at"] = times[model]
        write(root / f"file-{i}.json", data)


def test_incremental_release_ranks_equal_a_fresh_load(tmp_path: Path) -> None:
    """Only suites that gained or lost a report are ranked again; the result must equal
    ranking everything from scratch."""
    reports = tmp_path / "reports"
    shutil.copytree(REPO / "sample_reports", reports)
    set_old_mtimes(reports)
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, reports)
    suite_dir = reports / "code-agent"
    newest = sorted(suite_dir.glob("*.json"))[-1]
    middle = read(newest)
    middle["model"] = "v1.9.5"  # sorts between existing releases
    for case in middle["cases"]:
        for trial in case.get("trials") or []:
            trial.pop("recorded_at", None)
    write(suite_dir / "2026-02-25_v1.9.5.json", middle)
    (suite_dir / sorted(p.name for p in suite_dir.glob("*.json"))[0]).unlink()
    set_old_mtimes(reports)
    loading.refresh_catalog(con, reports)
    ranks = "SELECT file, release, release_source, release_rank FROM reports ORDER BY file"
    incremental = con.execute(ranks).fetchall()
    fresh = open_catalog(MEMORY)
    loading.refresh_catalog(fresh, reports)
    assert incremental == fresh.execute(ranks).fetchall()
    assert summaries.summary_json(con) == summaries.summary_json(fresh)


def test_release_order_is_natural_without_recorded_at(
    tmp_path: Path, small_reports: list[Path]
) -> None:
    base = read(report_with(lambda d: not any(c.get("trials") for c in d["cases"]), small_reports))
    _release_copies(tmp_path / "r", base)
    assert _order(tmp_path / "r") == ["v1.2.0", "v1.9.0", "v1.10.0"]


def test_release_order_follows_recorded_at_when_every_report_has_it(
    tmp_path: Path, small_reports: list[Path]
) -> None:
    base = read(report_with(lambda d: any(c.get("trials") for c in d["cases"]), fixture_reports()))
    times = {
        "v1.10.0": "2025-01-01T00:00:00+00:00",
        "v1.2.0": "2025-02-01T00:00:00+00:00",
        "v1.9.0": "2025-03-01T00:00:00+00:00",
    }
    _release_copies(tmp_path / "r", base, times)
    assert _order(tmp_path / "r") == ["v1.10.0", "v1.2.0", "v1.9.0"]
    # One report without its own time: back to the natural sort of the labels.
    legacy = read(
        report_with(lambda d: not any(c.get("trials") for c in d["cases"]), small_reports)
    )
    write(tmp_path / "r" / "legacy.json", dict(legacy, suite="suite-under-test", model="v1.5.0"))
    assert _order(tmp_path / "r") == ["v1.2.0", "v1.5.0", "v1.9.0", "v1.10.0"]


def test_relidash_toml_pins_key_and_order(tmp_path: Path, small_reports: list[Path]) -> None:
    base = read(report_with(lambda d: not any(c.get("trials") for c in d["cases"]), small_reports))
    root = tmp_path / "r"
    _release_copies(root, base)
    (root / "relidash.toml").write_text('[releases]\norder = ["v1.10.0"]\n')
    assert _order(root) == ["v1.10.0", "v1.2.0", "v1.9.0"]
    (root / "relidash.toml").write_text(
        '[releases]\nkey = "file_stem"\norder = ["file-2", "file-0"]\n'
    )
    assert _order(root) == ["file-2", "file-0", "file-1"]


def test_unusable_relidash_toml_is_a_problem(tmp_path: Path, small_reports: list[Path]) -> None:
    base = read(report_with(lambda d: not any(c.get("trials") for c in d["cases"]), small_reports))
    root = tmp_path / "r"
    _release_copies(root, base)
    (root / "relidash.toml").write_text('[releases]\nkey = "colour"\n')
    document = _by_release(root)
    rows = problems_for(document, "relidash.toml")
    assert len(rows) == 1 and "key" in rows[0]["reason"], rows
    assert [r["release"] for r in document["releases"]] == ["v1.2.0", "v1.9.0", "v1.10.0"]


def test_relidash_toml_change_alone_reorders_an_existing_catalog(
    tmp_path: Path, small_reports: list[Path]
) -> None:
    base = read(report_with(lambda d: not any(c.get("trials") for c in d["cases"]), small_reports))
    root = tmp_path / "r"
    _release_copies(root, base)
    con = open_catalog(str(tmp_path / "catalog.duckdb"))
    try:
        loading.refresh_catalog(con, root)
        (root / "relidash.toml").write_text('[releases]\norder = ["v1.10.0"]\n')
        loading.refresh_catalog(con, root)
        releases = summaries.summary_json(con, by="release")["releases"]
    finally:
        con.close()
    assert [r["release"] for r in releases] == ["v1.10.0", "v1.2.0", "v1.9.0"]


@pytest.mark.parametrize("empty", ["no cases", "every case errored"])
def test_a_report_without_an_evaluated_case_loads_with_unknown_metrics(
    empty: str, tmp_path: Path, small_reports: list[Path]
) -> None:
    """Alone in its batch, such a report left the metrics pass no case at all (a crash)."""
    data = read(small_reports[0])
    if empty == "no cases":
        data["cases"] = []
    else:
        for case in data["cases"]:
            case["model_error"] = "provider outage"
    root = tmp_path / "reports"
    root.mkdir()
    write(root / "outage.json", data)
    document, result = load(root)
    assert result.parsed == 1
    [report] = document["reports"]
    assert report["cases"]["evaluated"] == 0
    for metric in ("pass_at_k", "pass_hat_k"):
        assert report[metric] and all(
            v["value"] is None and "no evaluated cases" in v["unknown_reason"]
            for v in report[metric].values()
        )
