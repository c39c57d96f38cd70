"""The reviews directory as a hostile or faulty machine leaves it: every bad record is a
problem (file and reason) and never stops the rest, in `relidash reviews`, on the Reviews,
Review and Releases pages, and in the data layer; a FIFO never blocks a reader; an
unlistable directory is one message; stale temp files are listed and then removed; the
same sign-off twice within a minute is refused; `reviews` works without a reports
directory and `--strict` fails on an approved release whose evidence changed.

Everything is written under tmp_path; child processes carry a timeout so a reader that
blocks fails the test instead of hanging it.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from cli_run import run_cli
from streamlit.testing.v1 import AppTest

from dashboard.data.records import signoffs
from dashboard.data.records.schema import MAX_SIGNOFF_BYTES, parse_signoff
from dashboard.data.records.signoffs import (
    AlreadyRecorded,
    read_signoffs,
    write_signoff,
)

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "dashboard" / "app" / "main.py"
SAMPLES = REPO / "sample_reports"
SUITE = "support-agent"
RELEASE = "v1.11.0"
SHA = "ab" * 32
TIMEOUT = 60


def good(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "schema": "relidash.signoff/v1",
        "suite": SUITE,
        "release": RELEASE,
        "base": "v1.10.0",
        "decision": "approved",
        "time": "2026-12-01T07:35:00Z",
        "by": "Ada",
        "identity_verified": False,
        "identity": None,
        "comment": "ship it",
        "policy_sha256": "cd" * 32,
        "evidence": [{"path": "support-agent/run.json", "sha256": SHA}],
        "review": {"verdict": "PASSED"},
    }
    record.update(changes)
    return record


def raw(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode()


# what a careless editor, a bad merge or an attacker leaves as a record, and the words
# its problem must hold
MALFORMED: dict[str, tuple[bytes, str]] = {
    "evidence-string": (raw(good(evidence="abc")), "'evidence' as a string, not an array"),
    "entry-without-sha256": (
        raw(good(evidence=[{"path": "support-agent/run.json"}])),
        "evidence entry 1 without a SHA-256",
    ),
    "entry-short-sha256": (
        raw(good(evidence=[{"path": "a.json", "sha256": "abc"}])),
        "evidence entry 1 without a SHA-256",
    ),
    "entry-not-object": (raw(good(evidence=["a.json"])), "evidence entry 1 as a string"),
    "entry-path-number": (
        raw(good(evidence=[{"path": 7, "sha256": SHA}])),
        "evidence entry 1 without a file path",
    ),
    "comment-number": (raw(good(comment=5)), "'comment' as a number, not a string"),
    "by-array": (raw(good(by=["Ada"])), "'by' as an array, not a string"),
    "verified-string": (
        raw(good(identity_verified="yes")),
        "'identity_verified' as a string, not true or false",
    ),
    "identity-string": (raw(good(identity="me")), "'identity' as a string, not an object or null"),
    "base-number": (raw(good(base=3)), "'base' as a number, not a string or null"),
    "review-array": (raw(good(review=[])), "'review' as an array, not an object"),
    "invalid-json": (b'{"suite": "support-agent", ', "is not valid JSON"),
    "nan": (raw(good()).replace(b'"ship it"', b"NaN"), "is not valid JSON"),
    "array": (b"[1, 2, 3]", "holds an array, not a sign-off object"),
    "number": (b"42", "holds a number, not a sign-off object"),
}


@pytest.fixture
def rdir(tmp_path: Path) -> Path:
    directory = tmp_path / "reviews"
    directory.mkdir()
    return directory


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def with_every_malformed(rdir: Path) -> list[str]:
    """Two good records and one file of each malformed kind; the good records' names."""
    names = [
        write_signoff(rdir, good(by="Ada", time="2026-12-01T07:35:00Z")).name,
        write_signoff(rdir, good(by="Grace", time="2026-12-02T07:35:00Z")).name,
    ]
    for name, (content, _) in MALFORMED.items():
        (rdir / f"{name}.json").write_bytes(content)
    return names


# ---- the strict parser and the reader --------------------------------------------------------


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_each_malformed_record_is_a_problem_with_its_reason(rdir: Path, kind: str) -> None:
    content, reason = MALFORMED[kind]
    assert isinstance(parse_signoff(raw(good())), dict)
    parsed = parse_signoff(content)
    assert isinstance(parsed, str) and reason in parsed, parsed
    write_signoff(rdir, good())
    (rdir / "bad.json").write_bytes(content)
    stored, problems = read_signoffs(rdir)
    assert [s.record["by"] for s in stored] == ["Ada"]
    assert [(p.file, reason in p.reason) for p in problems] == [("bad.json", True)]


def test_a_record_of_the_wrong_shape_is_not_written(rdir: Path) -> None:
    with pytest.raises(ValueError, match="evidence entry 1 without a SHA-256"):
        write_signoff(rdir, good(evidence=[{"path": "a.json"}]))
    assert list(rdir.iterdir()) == []


def test_a_huge_file_is_a_problem_read_no_further(rdir: Path) -> None:
    write_signoff(rdir, good())
    with open(rdir / "huge.json", "wb") as handle:
        handle.truncate(MAX_SIGNOFF_BYTES + 1)  # sparse: big on paper, cheap on disk
    stored, problems = read_signoffs(rdir)
    assert len(stored) == 1
    assert [(p.file, "too large" in p.reason) for p in problems] == [("huge.json", True)]


def _read_in_thread(rdir: Path) -> tuple[Any, ...]:
    """read_signoffs(rdir), failing the test (instead of hanging it) if it blocks."""
    result: list[Any] = []
    reader = threading.Thread(target=lambda: result.append(read_signoffs(rdir)), daemon=True)
    reader.start()
    reader.join(TIMEOUT)
    assert not reader.is_alive(), "read_signoffs blocked on a FIFO"
    return tuple(result[0])


def test_a_fifo_named_json_is_a_problem_and_never_blocks(rdir: Path) -> None:
    write_signoff(rdir, good())
    os.mkfifo(rdir / "x.json")
    stored, problems = _read_in_thread(rdir)
    assert len(stored) == 1
    assert [p.file for p in problems] == ["x.json"]
    assert "named pipe (FIFO)" in problems[0].reason
    # a writer looking for the same sign-off reads the directory too
    with pytest.raises(AlreadyRecorded):
        write_signoff(rdir, good(time="2026-12-01T07:35:30Z"))


def test_reviews_with_a_fifo_returns_in_a_child_process(rdir: Path) -> None:
    write_signoff(rdir, good())
    os.mkfifo(rdir / "x.json")
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.cli", "reviews", "--reviews", str(rdir)],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,  # a blocked open fails here instead of hanging the suite
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Ada" in done.stdout
    assert "x.json" in done.stderr and "FIFO" in done.stderr


def test_stale_temp_files_are_listed_then_removed_by_the_next_writer(rdir: Path) -> None:
    stale = rdir / ".signoff-4242-deadbeefdeadbeef.tmp"
    fresh = rdir / ".signoff-4243-feedfacefeedface.tmp"
    stale.write_bytes(b'{"suite": "support')
    fresh.write_bytes(b'{"suite": "support')
    old = time.time() - signoffs.STALE_TEMP_SECONDS - 60
    os.utime(stale, (old, old))

    stored, problems = read_signoffs(rdir)
    assert stored == []
    assert [p.file for p in problems] == [stale.name]  # the fresh one may be a writer at work
    assert "left unfinished" in problems[0].reason
    assert stale.exists()  # readers never remove anything

    write_signoff(rdir, good())
    assert not stale.exists()
    assert fresh.exists()
    assert read_signoffs(rdir)[1] == []


# ---- the same sign-off twice ----------------------------------------------------------------


def test_the_same_sign_off_within_a_minute_is_refused(rdir: Path) -> None:
    first = write_signoff(rdir, good(time="2026-12-01T07:35:00Z"))
    with pytest.raises(AlreadyRecorded, match="already recorded") as repeat:
        write_signoff(rdir, good(time="2026-12-01T07:35:59Z"))
    assert repeat.value.path == first
    # a minute later, another comment, another decision or another person: a new record
    write_signoff(rdir, good(time="2026-12-01T07:36:00Z"))
    write_signoff(rdir, good(time="2026-12-01T07:35:10Z", comment="on second thought"))
    write_signoff(rdir, good(time="2026-12-01T07:35:10Z", decision="rejected"))
    write_signoff(rdir, good(time="2026-12-01T07:35:10Z", by="Grace"))
    stored, problems = read_signoffs(rdir)
    assert problems == [] and len(stored) == 5


# ---- relidash reviews -------------------------------------------------------------------------


def test_reviews_lists_the_good_records_and_every_malformed_one(
    rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_every_malformed(rdir)
    code, out, err = run_cli(["reviews", "--reviews", str(rdir)], capsys)
    assert code == 0, err
    assert "Traceback" not in err
    assert [line.split()[3] for line in out.splitlines() if " by " in line] == ["approved"] * 2
    assert "Grace" in out and "Ada" in out
    for name, (_, reason) in MALFORMED.items():
        assert f"{name}.json: " in err and reason in err, name

    code, out, _ = run_cli(["reviews", "--reviews", str(rdir), "--json"], capsys)
    document = json.loads(out)
    assert [e["by"] for e in document["reviews"]] == ["Grace", "Ada"]
    assert {p["file"] for p in document["problems"]} == {f"{n}.json" for n in MALFORMED}
    assert {e["evidence"] for e in document["reviews"]} == {"not checked"}


def _as_a_user(argv: list[str]) -> list[str]:
    """argv run with file permissions enforced: root reads through chmod 0, so as root
    the child drops the capabilities that let it (setpriv, util-linux)."""
    if os.geteuid() != 0:
        return argv
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: chmod 0 does not stop this user")
    caps = "-dac_override,-dac_read_search"
    return [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}", *argv]


def _reviews_child(rdir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _as_a_user([sys.executable, "-m", "dashboard.cli", "reviews", "--reviews", str(rdir)]),
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def test_an_unreadable_reviews_directory_is_one_message(rdir: Path) -> None:
    write_signoff(rdir, good())
    listed = _reviews_child(rdir)
    assert listed.returncode == 0 and "Ada" in listed.stdout, listed.stderr  # the control
    rdir.chmod(0)
    try:
        done = _reviews_child(rdir)
    finally:
        rdir.chmod(0o755)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("relidash: the reviews directory")
    assert "cannot be read (permission denied)" in done.stderr


def test_reviews_without_a_reports_directory_lists_the_records(
    rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_signoff(rdir, good())
    code, out, err = run_cli(["reviews", "--reviews", str(rdir)], capsys)
    assert code == 0, err
    assert "Ada" in out and "evidence not checked" in out
    assert "give the reports directory" in err
    code, _, err = run_cli(["reviews", "--reviews", str(rdir), "--strict"], capsys)
    assert code == 2 and "--strict" in err


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    target = tmp_path / "reports"
    shutil.copytree(SAMPLES, target)
    return target


def _signoff(capsys: pytest.CaptureFixture[str], reports: Path, rdir: Path, *extra: str) -> Any:
    return run_cli(
        [
            "signoff", str(reports), "--suite", SUITE, "--release", RELEASE,
            "--decision", "approved", "--by", "Ada", "--reviews", str(rdir),
            "--catalog", ":memory:", *extra,
        ],
        capsys,
    )  # fmt: skip


def test_reviews_strict_fails_once_approved_evidence_changed(
    reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _signoff(capsys, reports, rdir)
    assert code == 0, err
    strict = ["reviews", str(reports), "--reviews", str(rdir), "--strict"]
    code, out, err = run_cli(strict, capsys)
    assert code == 0, err
    assert "evidence unchanged" in out

    [record] = [s.record for s in read_signoffs(rdir)[0]]
    target = reports / record["evidence"][0]["path"]
    target.write_bytes(target.read_bytes() + b"\n")
    code, out, err = run_cli(strict, capsys)
    assert code == 1
    assert "evidence changed" in out
    assert f"approved {SUITE} {RELEASE}" in err and "changed since" in err
    # without --strict the listing is the same and the exit code 0
    code, _, _ = run_cli(strict[:-1], capsys)
    assert code == 0


def test_the_same_signoff_twice_from_the_cli_is_refused(
    reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _signoff(capsys, reports, rdir, "--comment", "ship it")
    assert code == 0, err
    code, _, err = _signoff(capsys, reports, rdir, "--comment", "ship it")
    assert code == 2
    assert "already recorded" in err and "nothing new was written" in err
    assert len(read_signoffs(rdir)[0]) == 1
    code, _, err = _signoff(capsys, reports, rdir, "--comment", "and I mean it")
    assert code == 0, err
    assert len(read_signoffs(rdir)[0]) == 2


# ---- the pages -------------------------------------------------------------------------------


@pytest.fixture
def app_env(
    reports: Path, rdir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, Path]]:
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(rdir))
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield reports, rdir
    st.cache_data.clear()
    st.cache_resource.clear()


def open_page(page: str, **params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()
    at.query_params.clear()
    at.query_params.update(params)
    at.switch_page(f"page_scripts/{page}.py")
    at.run()
    return at


def html_rows(at: AppTest) -> list[dict[str, str]]:
    """The rows of the page's static table (widgets.data_table: a small table is drawn as
    HTML so that a long comment wraps), each as column -> the cell's text."""
    (table,) = [h.value for h in at.html if "relidash-table" in h.value]
    head = [html.unescape(c) for c in re.findall(r'<th scope="col">(.*?)</th>', table)]
    body = table.split("<tbody>", 1)[1]
    return [
        dict(
            zip(
                head,
                (html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)),
                strict=True,
            )
        )
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def test_pages_list_good_records_beside_malformed_ones(
    app_env: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    reports, rdir = app_env
    code, _, err = _signoff(capsys, reports, rdir)  # a real approval of the latest release
    assert code == 0, err
    for name, (content, _) in MALFORMED.items():
        (rdir / f"{name}.json").write_bytes(content)

    at = open_page("reviews")
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Reviews"]
    # the sign-offs are a static table (compact_table's wrap), the problems a grid
    listed, problems = html_rows(at), at.dataframe[0].value
    assert [row["by"] for row in listed] == ["Ada"]
    assert set(problems["file"]) == {f"{n}.json" for n in MALFORMED}
    reasons = dict(zip(problems["file"], problems["reason"], strict=True))
    assert "'evidence' as a string" in reasons["evidence-string.json"]

    for page in ("review", "releases"):
        at = open_page(page, suite=SUITE)
        assert not at.exception, (page, [e.value for e in at.exception])
    at = open_page("review", suite=SUITE)
    assert any(f"{len(MALFORMED)} file(s)" in w.value for w in at.warning)


def test_pages_with_a_fifo_and_an_unlistable_directory_show_no_traceback(
    app_env: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, rdir = app_env
    write_signoff(rdir, good())
    os.mkfifo(rdir / "x.json")
    at = open_page("reviews")
    assert not at.exception, [e.value for e in at.exception]
    assert [row["by"] for row in html_rows(at)] == ["Ada"]  # the good record, listed
    assert list(at.dataframe[0].value["file"]) == ["x.json"]

    real_scandir = os.scandir

    def refused(path: Any = ".") -> Any:
        if Path(path) == rdir:
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", refused)
    for page in ("reviews", "review", "releases"):
        at = open_page(page, suite=SUITE)
        assert not at.exception, (page, [e.value for e in at.exception])
    at = open_page("reviews")
    assert any("cannot be read" in w.value for w in at.warning)


def test_a_page_sign_off_is_confirmed_the_form_cleared_and_a_repeat_refused(
    app_env: tuple[Path, Path],
) -> None:
    _, rdir = app_env
    at = open_page("review", suite=SUITE)

    def submit(comment: str) -> None:
        at.radio(key="signoff_decision").set_value("conditional")
        at.text_area(key="signoff_comment").set_value(comment)
        at.text_input(key="signoff_name").set_value("Ada Lovelace")
        next(b for b in at.button if b.label == "Record the sign-off").click()
        at.run()
        assert not at.exception, [e.value for e in at.exception]

    submit("behind the flag")
    assert any("Recorded: conditional" in s.value for s in at.success), at.success
    assert at.text_area(key="signoff_comment").value == ""
    assert at.text_input(key="signoff_name").value == ""
    assert at.radio(key="signoff_decision").value == "approved"
    assert len(read_signoffs(rdir)[0]) == 1

    submit("behind the flag")  # the same again, moments later
    assert any("already recorded" in i.value for i in at.info), [i.value for i in at.info]
    assert not any("Recorded:" in s.value for s in at.success)
    assert len(read_signoffs(rdir)[0]) == 1
    assert at.text_area(key="signoff_comment").value == "behind the flag"  # kept, not cleared
