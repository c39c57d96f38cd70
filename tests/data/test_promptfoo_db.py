"""promptfoo's own database (tests/fixtures/promptfoo/promptfoo.db, written by promptfoo
0.123.1, holding the evals of single_pair.json, cached_run1.json and cached_run2.json)
read through the real load path: each eval loads as its JSON output does, its numbers are
promptfoo's own, the user's file is never written nor opened in place, an eval living only
in the write-ahead log is read, a SQLite file that is not promptfoo's (or an eval that
cannot be read) is a problem naming it, and a case's repeats read back from the database.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import summaries

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.data.formats import harness_of
from dashboard.data.load.transcripts import TranscriptUnavailable, read_case_trials

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "promptfoo"
EXPECTED = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))
DB = "promptfoo.db"
EVALS = ["single_pair.json", "cached_run1.json", "cached_run2.json"]  # the database's evals
SIDECARS = ("-wal", "-shm", "-journal")
VERSION = EXPECTED["promptfoo_version"]


def load(root: Path) -> Any:
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    return con


def reports_dir(root: Path, *names: str) -> Path:
    root.mkdir(parents=True)
    for name in names:
        shutil.copy(FIXTURES / name, root / name)
    return root


@pytest.fixture(scope="module")
def catalogs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The database in one catalog, the JSON outputs of its evals in another."""
    base = tmp_path_factory.mktemp("pfdb")
    db = load(reports_dir(base / "db", DB))
    files = load(reports_dir(base / "json", *EVALS))
    yield {
        "db": db,
        "json": files,
        "db_doc": summaries.summary_json(db),
        "json_doc": summaries.summary_json(files),
    }
    db.close()
    files.close()


def release(name: str) -> str:
    return str(EXPECTED["files"][name]["tags"]["release"])


def eval_id(name: str) -> str:
    return str(EXPECTED["files"][name]["evalId"])


def records(doc: dict[str, Any], name: str | None) -> dict[str, dict[str, Any]]:
    """The summary's entries of one eval (None: of every eval) by suite, without the file."""
    found = {}
    for record in doc["reports"]:
        if name is None or record["release"] == release(name):
            found[record["suite"]] = {k: v for k, v in record.items() if k != "file"}
    return found


def cases(con: Any, suite: str, rel: str) -> list[dict[str, Any]]:
    rows = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=True, report_ids=None
    )
    return [
        {k: v for k, v in r.items() if k not in ("report_id", "file")}
        for r in rows
        if r["release"] == rel
    ]


def trials(con: Any, suite: str, rel: str) -> list[tuple[Any, ...]]:
    rows = fetch_rows(con, "read/report_overview", suites=[suite], release=rel)
    (report,) = rows
    return con.execute(
        "SELECT case_idx, trial_idx, run_index, attempt, status, model_error, latency_ms "
        "FROM trials WHERE report_id = $r ORDER BY case_idx, trial_idx",
        {"r": report["report_id"]},
    ).fetchall()


# ---- each eval as its JSON output ----------------------------------------------------------


@pytest.mark.parametrize("name", EVALS)
def test_each_eval_loads_as_its_json_output(catalogs: dict[str, Any], name: str) -> None:
    mine, want = records(catalogs["db_doc"], name), records(catalogs["json_doc"], name)
    assert len(want) == len(EXPECTED["files"][name]["suites"]) and list(mine) == list(want)
    for suite, record in want.items():
        # the database does not record which promptfoo wrote it; an export names its own
        assert record["format"] == f"promptfoo {VERSION} (results v3)"
        assert mine[suite]["format"] == "promptfoo (version not recorded) (results v3)"
        assert {**mine[suite], "format": record["format"]} == record
        rel = release(name)
        assert cases(catalogs["db"], suite, rel) == cases(catalogs["json"], suite, rel)
        assert trials(catalogs["db"], suite, rel) == trials(catalogs["json"], suite, rel)
        assert overview(catalogs["db"], suite, rel) == overview(catalogs["json"], suite, rel)


def overview(con: Any, suite: str, rel: str) -> dict[str, Any]:
    """A report's catalog row and what the reader recorded of its eval, without what names
    its file (and the promptfoo version, which the database does not record)."""
    (row,) = fetch_rows(con, "read/report_overview", suites=[suite], release=rel)
    kept = {k: v for k, v in row.items() if k not in ("report_id", "file", "mtime_ns", "format")}
    metadata, facts = con.execute(
        "SELECT metadata, harness_facts FROM reports WHERE report_id = $r",
        {"r": row["report_id"]},
    ).fetchone()
    metadata = json.loads(metadata)
    metadata.pop("promptfooVersion")
    return {**kept, "metadata": metadata, "facts": json.loads(facts)}


def test_the_warnings_are_the_json_outputs_naming_their_eval(catalogs: dict[str, Any]) -> None:
    want = []
    for problem in catalogs["json_doc"]["problems"]:
        assert problem["file"] in EVALS
        prefix = f"eval {eval_id(problem['file'])}: "
        want.append({"file": DB, "scope": problem["scope"], "reason": prefix + problem["reason"]})
    assert len(want) == 2  # cached_run2's replays, one per pair
    assert catalogs["db_doc"]["problems"] == want


def test_every_eval_of_the_database_is_read(catalogs: dict[str, Any]) -> None:
    assert records(catalogs["db_doc"], None).keys() == records(catalogs["json_doc"], None).keys()
    assert {r["release"] for r in catalogs["db_doc"]["reports"]} == {release(n) for n in EVALS}
    assert {r["file"] for r in catalogs["db_doc"]["reports"]} == {DB}
    assert len(catalogs["db_doc"]["reports"]) == sum(
        len(EXPECTED["files"][n]["suites"]) for n in EVALS
    )


# ---- promptfoo's own counts ----------------------------------------------------------------


def suite_of(name: str, pair: dict[str, Any]) -> str:
    description = EXPECTED["files"][name]["description"]
    if len(EXPECTED["files"][name]["suites"]) == 1:
        return str(description)
    return f"{description} · {pair['prompt']} · {pair['provider']}"


@pytest.mark.parametrize(
    ("name", "index"),
    [(n, i) for n in EVALS for i in range(len(EXPECTED["files"][n]["suites"]))],
)
def test_passes_fails_errors_equal_promptfoos_metrics(
    catalogs: dict[str, Any], name: str, index: int
) -> None:
    pair = EXPECTED["files"][name]["suites"][index]
    con, suite = catalogs["db"], suite_of(name, pair)
    counted = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=True, report_ids=None
    )
    left_out = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=False, report_ids=None
    )
    counted = [r for r in counted if r["release"] == release(name)]
    left_out = [r for r in left_out if r["release"] == release(name)]
    assert counted and {r["file"] for r in counted} == {DB}
    passes = sum(r["c"] or 0 for r in left_out)
    fails = sum(r["n"] or 0 for r in left_out) - passes
    errors = sum(r["n"] or 0 for r in counted) - sum(r["n"] or 0 for r in left_out)
    assert (passes, fails, errors) == (
        pair["testPassCount"],
        pair["testFailCount"],
        pair["testErrorCount"],
    )


# ---- the user's file -----------------------------------------------------------------------


def to_wal(path: Path) -> None:
    """The database in WAL mode, as promptfoo keeps it (closed: no -wal or -shm left)."""
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    con.close()
    assert not [s for s in SIDECARS if Path(f"{path}{s}").exists()]


def listing(root: Path) -> dict[str, tuple[int, int, int, int, bytes]]:
    found = {}
    for entry in sorted(root.iterdir()):
        st = entry.stat()
        found[entry.name] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, b"")
        if entry.is_file():
            found[entry.name] = (*found[entry.name][:4], entry.read_bytes())
    return found


def test_the_database_is_never_written_nor_opened_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = reports_dir(tmp_path / "reports", DB)
    to_wal(root / DB)
    before = listing(root)
    opened: list[str] = []
    connect = sqlite3.connect

    def spy(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        opened.append(os.path.realpath(database))
        return connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", spy)
    con = load(root)
    assert len(summaries.summary_json(con)["reports"]) == 5
    report_id, case_idx, statuses = varied_case(con, "cached_run2.json")
    assert len(read_case_trials(con, report_id, case_idx)) == len(statuses)  # a copy too
    con.close()
    assert listing(root) == before  # bytes, stats, and no -wal, -shm or -journal beside it
    assert len(opened) >= 2
    for path in opened:
        assert not Path(path).is_relative_to(root.resolve())
        assert not Path(path).parent.exists()  # the private copy's directory is removed


def delete_eval(writer: sqlite3.Connection, gone: str) -> None:
    writer.execute("BEGIN")
    for table, key in (
        ("eval_results", "eval_id"),
        ("evals_to_tags", "eval_id"),
        ("evals_to_prompts", "eval_id"),
        ("evals_to_datasets", "eval_id"),
        ("evals", "id"),
    ):
        writer.execute(f"DELETE FROM {table} WHERE {key} = ?", (gone,))  # noqa: S608
    writer.execute("COMMIT")


def test_what_is_only_in_the_write_ahead_log_is_read_once_in_the_database(
    tmp_path: Path,
) -> None:
    """What relidash reads of the file is what its digest covers: a change promptfoo has
    written to its -wal alone is not read (the file's digest would not show it), and is
    read once promptfoo folds it into the database (closing it, here)."""
    root = reports_dir(tmp_path / "reports", DB)
    path = root / DB
    catalog = open_catalog(str(tmp_path / "catalog.duckdb"))
    every = {release(name) for name in EVALS}
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        assert writer.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
        writer.execute("PRAGMA wal_autocheckpoint=0")
        main = path.read_bytes()
        delete_eval(writer, eval_id("single_pair.json"))
        assert path.read_bytes() == main and Path(f"{path}-wal").read_bytes()  # in the log
        loading.refresh_catalog(catalog, root)
        assert {r["release"] for r in summaries.summary_json(catalog)["reports"]} == every
    finally:
        writer.close()  # the last connection checkpoints the log into the database
    assert path.read_bytes() != main and not Path(f"{path}-wal").exists()
    assert loading.refresh_catalog(catalog, root).parsed == 1
    releases = {r["release"] for r in summaries.summary_json(catalog)["reports"]}
    catalog.close()
    assert releases == every - {release("single_pair.json")}


# ---- problems ------------------------------------------------------------------------------


def test_a_sqlite_file_not_promptfoos_is_a_problem_naming_it(tmp_path: Path) -> None:
    root = reports_dir(tmp_path / "reports", "single_pair.json")
    notes = sqlite3.connect(root / "notes.sqlite")
    notes.execute("CREATE TABLE evals (id TEXT)")  # one of promptfoo's tables is not enough
    notes.commit()
    notes.close()
    con = load(root)
    doc = summaries.summary_json(con)
    con.close()
    (problem,) = doc["problems"]
    assert problem["file"] == "notes.sqlite" and problem["scope"] == "file"
    assert problem["reason"].startswith("is a SQLite database, not promptfoo's")
    assert "`evals` and `eval_results` tables" in problem["reason"]
    assert [r["file"] for r in doc["reports"]] == ["single_pair.json"]  # nothing else stops
    assert harness_of("notes.json", (root / "notes.sqlite").read_bytes()[:256]) == "promptfoo"


def test_an_eval_that_cannot_be_read_is_a_problem_naming_it(tmp_path: Path) -> None:
    root = reports_dir(tmp_path / "reports", DB)
    broken = eval_id("cached_run1.json")
    con = sqlite3.connect(root / DB)
    con.execute("UPDATE evals SET config = '{\"tags\": ' WHERE id = ?", (broken,))
    con.commit()
    con.close()
    catalog = load(root)
    doc = summaries.summary_json(catalog)
    catalog.close()
    assert {r["release"] for r in doc["reports"]} == {
        release("single_pair.json"),
        release("cached_run2.json"),
    }
    (problem,) = [p for p in doc["problems"] if broken in p["reason"]]
    assert problem == {
        "file": DB,
        "scope": "report",
        "reason": f"holds eval {broken}, which has a `evals.config` value that is not JSON",
    }


def test_the_size_limit_is_the_databases_alone(tmp_path: Path) -> None:
    """A large -wal beside the database is not read, so it does not count."""
    root = reports_dir(tmp_path / "reports", DB)
    path = root / DB
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("UPDATE eval_results SET latency_ms = latency_ms + 1")  # into the log
        assert Path(f"{path}-wal").stat().st_size > 0  # database and log: over the limit
        docs = []
        for limit in (path.stat().st_size, path.stat().st_size - 1):
            con = open_catalog(MEMORY)
            loading.refresh_catalog(con, root, max_bytes=limit)
            docs.append(summaries.summary_json(con))
            con.close()
    finally:
        writer.close()
    within, over = docs
    assert len(within["reports"]) == 5
    (problem,) = over["problems"]
    assert problem["file"] == DB and problem["scope"] == "file" and not over["reports"]
    assert problem["reason"].endswith("size limit (raise it with --max-file-mb)")


@pytest.mark.parametrize("writes", [1, 100])
def test_a_copy_made_while_the_database_changes_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writes: int
) -> None:
    """The database changing while relidash copies it (promptfoo checkpointing): the copy
    is made again until the file holds still, and one that never does is a problem."""
    root = reports_dir(tmp_path / "reports", DB)
    path = root / DB
    copyfile, left = shutil.copyfile, [writes]

    def copy_while_writing(source: Any, target: Any) -> Any:
        done = copyfile(source, target)
        if os.path.realpath(source) == os.path.realpath(path) and left[0] > 0:
            left[0] -= 1
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
        return done

    monkeypatch.setattr(shutil, "copyfile", copy_while_writing)
    con = load(root)
    doc = summaries.summary_json(con)
    con.close()
    if writes == 1:
        assert {p["scope"] for p in doc["problems"]} == {"report"}  # the cached replays
        assert {r["release"] for r in doc["reports"]} == {release(name) for name in EVALS}
    else:
        (problem,) = doc["problems"]
        assert problem["file"] == DB and problem["reason"].startswith("changed each of the")


# ---- a case read back ----------------------------------------------------------------------


STATUSES = {0: "passed", 1: "failed_quality", 2: "model_error"}


def varied_case(con: Any, name: str) -> tuple[int, int, list[str]]:
    """(report id, case idx, its repeats' statuses as promptfoo wrote them) of the test of
    `name` whose repeats ended the most different ways."""
    tests = [
        (len({r[2] for r in test["rows"]}), pair, test)
        for pair in EXPECTED["files"][name]["suites"]
        for test in pair["tests"]
        if test["by"] != "vars"
    ]
    _, pair, test = max(tests, key=lambda t: t[0])
    suite = suite_of(name, pair)
    (report,) = fetch_rows(con, "read/report_overview", suites=[suite], release=release(name))
    rows = fetch_rows(
        con, "read/suite_cases", suite=suite, count_agent_errors=False, report_ids=None
    )
    (case_idx,) = [
        r["case_idx"] for r in rows if r["release"] == release(name) and r["case_id"] == test["key"]
    ]
    return int(report["report_id"]), int(case_idx), [STATUSES[r[2]] for r in test["rows"]]


@pytest.mark.parametrize("name", EVALS)
def test_a_case_reads_back_its_repeats_from_the_database(
    catalogs: dict[str, Any], name: str
) -> None:
    report_id, case_idx, statuses = varied_case(catalogs["db"], name)
    mine = read_case_trials(catalogs["db"], report_id, case_idx)
    assert list(mine["status"]) == statuses and len(set(statuses)) >= 2
    assert all(text.startswith("[prompt]\n") for text in mine["output"])
    want = read_case_trials(catalogs["json"], *varied_case(catalogs["json"], name)[:2])
    assert mine.to_dict("records") == want.to_dict("records")


def test_a_case_whose_eval_is_gone_says_so(tmp_path: Path) -> None:
    root = reports_dir(tmp_path / "reports", DB)
    path = root / DB
    con = load(root)
    report_id, case_idx, _ = varied_case(con, "single_pair.json")
    loaded = path.stat()
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("DELETE FROM evals WHERE id = ?", (eval_id("single_pair.json"),))
    finally:
        writer.close()
    # the database's own size and mtime as loaded: the read finds the eval gone, not the
    # file changed
    os.utime(path, ns=(loaded.st_atime_ns, loaded.st_mtime_ns))
    assert path.stat().st_size == loaded.st_size
    try:
        with pytest.raises(TranscriptUnavailable, match="no longer holds eval eval-hZd-"):
            read_case_trials(con, report_id, case_idx)
    finally:
        con.close()


def test_a_file_named_as_a_database_that_is_not_one_is_a_problem_saying_so(
    tmp_path: Path,
) -> None:
    root = reports_dir(tmp_path / "reports", "single_pair.json")
    (root / "Thumbs.db").write_bytes(bytes(range(256)) * 8)
    (root / "notes.sqlite").write_text("hello", encoding="utf-8")
    con = load(root)
    doc = summaries.summary_json(con)
    con.close()
    reasons = {p["file"]: p["reason"] for p in doc["problems"]}
    assert set(reasons) == {"Thumbs.db", "notes.sqlite"}
    assert all(r.startswith("is not a SQLite database (relidash reads") for r in reasons.values())
    assert [r["file"] for r in doc["reports"]] == ["single_pair.json"]
