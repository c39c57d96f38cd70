"""Sign-off records on disk: atomic, append-only, never lost, and every bad file reported.

Everything is written under pytest's tmp_path. The concurrency and crash tests run real
child processes (`sys.executable -c`): two writers released together by a start file, and
a writer SIGKILLed after its temp file is fsynced but before the link that names it.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dashboard.data.records import signoffs
from dashboard.data.records.signoffs import (
    AlreadyRecorded,
    ReviewsDirError,
    SignoffProblem,
    check_reviews_dir,
    default_reviews_dir,
    file_sha256,
    read_signoffs,
    serialise_signoff,
    write_signoff,
)
from dashboard.data.sources.digests import DIGEST_CHUNK

REPO = Path(__file__).resolve().parents[2]
TIME = "2026-12-01T07:35:00Z"
NAME = re.compile(r"^20261201T073500Z-[0-9a-f]{16}\.json$")


def make_record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "suite": "checkout-agent",
        "release": "v2.3.0",
        "decision": "approved",
        "time": TIME,
        "by": "Zoë Ålund",
        "evidence": [{"path": "run-1.json", "sha256": "ab" * 32}],
        "note": "pass^4 0.91 [0.86, 0.94]",
    }
    record.update(changes)
    return record


def unchained(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record without the chain fields the writer added (data.ledger)."""
    return {k: v for k, v in record.items() if k not in ("previous", "previous_sha256")}


def visible_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if not p.name.startswith("."))


def hidden_files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def run_child(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# --- round trip -------------------------------------------------------------------------


def test_round_trip_keeps_the_record_and_names_its_bytes(tmp_path: Path) -> None:
    reviews = tmp_path / "data" / "reviews"  # created by the write, parents too
    record = make_record()

    path = write_signoff(reviews, record)

    assert path.parent == reviews
    assert NAME.match(path.name), path.name
    # the first record of a chain: nothing before it
    chained = dict(record, previous=None, previous_sha256=None)
    assert path.read_bytes() == serialise_signoff(chained)
    assert hidden_files(reviews) == []  # the temp file is gone
    stored, problems = read_signoffs(reviews)
    assert problems == []
    assert [s.record for s in stored] == [chained]
    assert stored[0].path == path
    assert stored[0].sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert stored[0].sha256 == file_sha256(path)
    assert path.name.split("-")[1].removesuffix(".json") == stored[0].sha256[:16]


def test_serialised_bytes_are_canonical(tmp_path: Path) -> None:
    data = serialise_signoff({"time": TIME, "by": "Zoë", "a": [1, 2]})
    assert data.endswith(b"}\n")
    assert "Zoë".encode() in data  # not \u00eb
    assert data.index(b'"a"') < data.index(b'"by"') < data.index(b'"time"')
    assert b'\n  "a": [\n    1,' in data  # indent=2


def test_file_is_fsynced_before_the_link_and_the_directory_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_link = os.fsync, os.link

    def spy_fsync(fd: int) -> None:
        events.append("fsync-dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "fsync-file")
        real_fsync(fd)

    def spy_link(src: Any, dst: Any, **kwargs: Any) -> None:
        events.append("link")
        real_link(src, dst, **kwargs)

    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "link", spy_link)
    write_signoff(tmp_path, make_record())
    assert events == ["fsync-file", "link", "fsync-dir"]


# --- concurrency --------------------------------------------------------------------------

WRITER = """
import json, sys, time
from pathlib import Path
from dashboard.data.records.signoffs import AlreadyRecorded, write_signoff

reviews, start, ready, who, count = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4], int(sys.argv[5])
ready.touch()
deadline = time.monotonic() + 30
while not start.exists():
    if time.monotonic() > deadline:
        sys.exit("start file never appeared")
    time.sleep(0.001)
base = {"suite": "checkout-agent", "release": "v2.3.0", "decision": "approved",
        "time": "2026-12-01T07:35:00Z"}
paths = {}
for n in range(count):
    paths[f"{who}-{n}"] = str(write_signoff(reviews, dict(base, by=who, n=n)))
    # the same record from both writers: one record, one path (a repeat names it)
    try:
        paths["shared"] = str(write_signoff(reviews, dict(base, by="both")))
    except AlreadyRecorded as exc:
        paths["shared"] = str(exc.path)
print(json.dumps(paths))
"""


def test_two_processes_signing_the_same_release_in_the_same_second_lose_nothing(
    tmp_path: Path,
) -> None:
    reviews = tmp_path / "reviews"
    reviews.mkdir()
    start = tmp_path / "start"
    count = 25
    children = []
    for who in ("alice", "bob"):
        ready = tmp_path / f"ready-{who}"
        cmd = [sys.executable, "-c", WRITER, str(reviews), str(start), str(ready), who]
        children.append(
            (
                ready,
                subprocess.Popen(
                    [*cmd, str(count)],
                    cwd=REPO,
                    env=dict(os.environ, PYTHONPATH=str(REPO)),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                ),
            )
        )
    deadline = time.monotonic() + 60
    while not all(ready.exists() for ready, _ in children):
        assert time.monotonic() < deadline, "the writers never became ready"
        time.sleep(0.005)
    start.touch()  # both writers go at once
    outputs = []
    for _, child in children:
        out, err = child.communicate(timeout=120)
        assert child.returncode == 0, err
        outputs.append(json.loads(out))

    stored, problems = read_signoffs(reviews)
    assert problems == []
    assert hidden_files(reviews) == []
    expected = {("both", None)} | {(who, n) for who in ("alice", "bob") for n in range(count)}
    got = [(s.record["by"], s.record.get("n")) for s in stored]
    assert sorted(got, key=str) == sorted(expected, key=str)  # none lost, none twice
    assert len(visible_files(reviews)) == 2 * count + 1
    for s in stored:  # none partial: every file is exactly the canonical bytes
        assert s.path.read_bytes() == serialise_signoff(s.record)
        assert NAME.match(s.path.name)
    alice, bob = outputs
    assert alice["shared"] == bob["shared"]
    assert len({*alice.values(), *bob.values()}) == 2 * count + 1


# --- crashes ------------------------------------------------------------------------------

KILLED = """
import os, signal, sys
from pathlib import Path
from dashboard.data.records import signoffs
from dashboard.data.sources.digests import DIGEST_CHUNK

record = {"suite": "checkout-agent", "release": "v2.3.0", "decision": "approved",
          "time": "2026-12-01T07:35:00Z", "by": "killed"}
signoffs._write_temp(Path(sys.argv[1]), signoffs.serialise_signoff(record))
os.kill(os.getpid(), signal.SIGKILL)  # after the temp is fsynced, before the link
"""


def test_a_writer_killed_before_the_link_leaves_no_record(tmp_path: Path) -> None:
    result = run_child(KILLED, str(tmp_path))
    assert result.returncode == -signal.SIGKILL, result.stderr

    leftovers = hidden_files(tmp_path)
    assert len(leftovers) == 1 and leftovers[0].endswith(".tmp")
    killed = make_record(by="killed")
    for key in ("evidence", "note"):
        del killed[key]
    assert (tmp_path / leftovers[0]).read_bytes() == serialise_signoff(killed)
    (tmp_path / ".signoff-1-cut.tmp").write_bytes(b'{"suite": "checkout')  # a torn temp
    assert visible_files(tmp_path) == []
    assert read_signoffs(tmp_path) == ([], [])

    # The next write of the same record is unaffected by the leftovers.
    path = write_signoff(tmp_path, killed)
    stored, problems = read_signoffs(tmp_path)
    assert problems == [] and [s.path for s in stored] == [path]


def test_a_failed_link_stores_nothing_and_cleans_its_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_link(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "link", broken_link)
    with pytest.raises(ReviewsDirError, match=re.escape(str(tmp_path))):
        write_signoff(tmp_path, make_record())
    assert list(tmp_path.iterdir()) == []
    assert read_signoffs(tmp_path) == ([], [])


# --- append-only --------------------------------------------------------------------------


def test_the_same_record_twice_is_stored_once(tmp_path: Path) -> None:
    first = write_signoff(tmp_path, make_record())
    before = first.stat()
    with pytest.raises(AlreadyRecorded, match="already recorded") as repeat:
        write_signoff(tmp_path, make_record())
    assert repeat.value.path == first
    assert visible_files(tmp_path) == [first.name]
    assert hidden_files(tmp_path) == []
    after = first.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    stored, _ = read_signoffs(tmp_path)
    assert len(stored) == 1


def test_different_records_never_overwrite_each_other(tmp_path: Path) -> None:
    approved = write_signoff(tmp_path, make_record())
    approved_bytes = approved.read_bytes()
    rejected = write_signoff(tmp_path, make_record(decision="rejected"))
    assert rejected != approved
    assert approved.read_bytes() == approved_bytes
    stored, problems = read_signoffs(tmp_path)
    assert problems == []
    assert sorted(s.record["decision"] for s in stored) == ["approved", "rejected"]


def test_a_name_taken_by_other_bytes_gets_a_counter_not_an_overwrite(tmp_path: Path) -> None:
    record = make_record()
    # files that are not records take no place in the chain: this is the first record
    data = serialise_signoff(dict(record, previous=None, previous_sha256=None))
    name = f"20261201T073500Z-{hashlib.sha256(data).hexdigest()[:16]}"
    squatter = tmp_path / f"{name}.json"
    other = serialise_signoff(make_record(by="someone else"))[:-3]  # cut: not a record
    squatter.write_bytes(other)
    (tmp_path / f"{name}-1.json").write_bytes(b"not even JSON")

    path = write_signoff(tmp_path, record)

    assert path.name == f"{name}-2.json"
    assert path.read_bytes() == data
    assert squatter.read_bytes() == other
    assert (tmp_path / f"{name}-1.json").read_bytes() == b"not even JSON"
    with pytest.raises(AlreadyRecorded) as repeat:  # found again, not stored a fourth time
        write_signoff(tmp_path, record)
    assert repeat.value.path == path


def test_no_update_or_delete_function_exists() -> None:
    public = {name for name in dir(signoffs) if not name.startswith("_")}
    assert not {n for n in public if re.search(r"delete|remove|update|edit|replace", n)}


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (make_record(decision="maybe"), "decision 'maybe'"),
        ({k: v for k, v in make_record().items() if k != "by"}, "lacks the required key 'by'"),
        (make_record(release=3), "'release' as a number"),
        (make_record(time="2026-12-01T07:35:00+01:00"), "not a UTC ISO-8601 time"),
        (make_record(score=float("nan")), "not JSON"),
        (make_record(blob=object()), "not JSON"),
    ],
)
def test_a_record_readers_would_reject_is_not_written(
    tmp_path: Path, record: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        write_signoff(tmp_path, record)
    assert list(tmp_path.iterdir()) == []


# --- reading ------------------------------------------------------------------------------

GOOD_A = make_record(by="a", time="2026-11-30T09:00:00Z")
GOOD_B = make_record(by="b", time="2026-12-02T09:00:00Z")


def _without(key: str) -> bytes:
    return json.dumps({k: v for k, v in make_record().items() if k != key}).encode()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"suite": "checkout-agent",', "is not valid JSON: "),
        (b"", "is not valid JSON: Expecting value at line 1 column 1"),
        (b"[1, 2]", "holds an array, not a sign-off object"),
        (b'"approved"', "holds a string, not a sign-off object"),
        (b"null", "holds null, not a sign-off object"),
        (_without("decision"), "lacks the required key 'decision'"),
        (
            json.dumps({"suite": "s", "time": TIME, "by": "x"}).encode(),
            "lacks the required keys 'release', 'decision'",
        ),
        (json.dumps(make_record(decision="Approved")).encode(), "decision 'Approved', not one of"),
        (json.dumps(make_record(decision=True)).encode(), "'decision' as true or false"),
        (json.dumps(make_record(suite=None)).encode(), "'suite' as null, not a string"),
        (json.dumps(make_record(time="yesterday")).encode(), "time 'yesterday', not a UTC"),
        (
            json.dumps(make_record(by="Zo\u00eb"), ensure_ascii=False).encode("latin-1"),
            "is not UTF-8 text",
        ),
        (b"\xff\xfe{}", "is not UTF-8 text (invalid byte at offset 0)"),
    ],
    ids=[
        "truncated",
        "empty",
        "array",
        "string",
        "null",
        "missing-key",
        "missing-keys",
        "wrong-decision",
        "decision-not-string",
        "suite-null",
        "bad-time",
        "latin-1",
        "binary",
    ],
)
def test_each_bad_file_is_one_problem_and_the_good_records_still_read(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    write_signoff(tmp_path, GOOD_A)
    write_signoff(tmp_path, GOOD_B)
    (tmp_path / "bad.json").write_bytes(content)

    stored, problems = read_signoffs(tmp_path)

    assert [unchained(s.record) for s in stored] == [GOOD_B, GOOD_A]
    assert len(problems) == 1
    assert problems[0].file == "bad.json"
    assert reason in problems[0].reason, problems[0].reason


def test_unreadable_files_are_problems(tmp_path: Path) -> None:
    write_signoff(tmp_path, GOOD_A)
    (tmp_path / "folder.json").mkdir()
    (tmp_path / "dangling.json").symlink_to(tmp_path / "nowhere")
    locked = tmp_path / "locked.json"
    locked.write_bytes(serialise_signoff(GOOD_B))
    locked.chmod(0)
    try:
        stored, problems = read_signoffs(tmp_path)
        can_read_anyway = os.access(locked, os.R_OK)  # root reads through chmod 0
    finally:
        locked.chmod(0o644)
    reasons = {p.file: p.reason for p in problems}
    assert reasons["folder.json"] == "is a directory, not a sign-off file"
    assert reasons["dangling.json"] == "disappeared or is a broken symbolic link"
    if can_read_anyway:
        assert "locked.json" not in reasons
        assert [unchained(s.record) for s in stored] == [GOOD_B, GOOD_A]
    else:
        assert reasons["locked.json"] == "cannot be read: permission denied"
        assert [unchained(s.record) for s in stored] == [GOOD_A]


def test_hidden_and_non_json_files_are_ignored(tmp_path: Path) -> None:
    write_signoff(tmp_path, GOOD_A)
    (tmp_path / ".editor-swap.json").write_bytes(b"garbage")
    (tmp_path / ".20261201T073500Z-0000.json.tmp").write_bytes(b"{")
    (tmp_path / "README.txt").write_text("notes")
    stored, problems = read_signoffs(tmp_path)
    assert problems == []
    assert [unchained(s.record) for s in stored] == [GOOD_A]


def test_newest_first_by_time_then_by_file_name(tmp_path: Path) -> None:
    older = write_signoff(tmp_path, make_record(time="2026-12-01T07:35:00Z", by="older"))
    # Half a second later: as text it sorts *before* the whole second ('.' < 'Z').
    newer = write_signoff(tmp_path, make_record(time="2026-12-01T07:35:00.500Z", by="newer"))
    newest = write_signoff(tmp_path, make_record(time="2027-01-01T00:00:00Z", by="newest"))
    tie = sorted(
        [
            write_signoff(tmp_path, make_record(time="2025-06-01T00:00:00Z", by=f"tie-{n}"))
            for n in range(4)
        ],
        key=lambda p: p.name,
    )
    stored, _ = read_signoffs(tmp_path)
    assert [s.path for s in stored] == [newest, newer, older, *tie]


def test_a_missing_directory_holds_no_records(tmp_path: Path) -> None:
    assert read_signoffs(tmp_path / "never-made") == ([], [])
    assert not (tmp_path / "never-made").exists()


def test_a_reviews_path_that_is_a_file_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "reviews"
    path.write_text("")
    with pytest.raises(ReviewsDirError, match=re.escape(f"{path} cannot be read")):
        read_signoffs(path)


def test_problem_and_record_types_are_frozen(tmp_path: Path) -> None:
    write_signoff(tmp_path, GOOD_A)
    stored, _ = read_signoffs(tmp_path)
    with pytest.raises(AttributeError):
        stored[0].sha256 = "0" * 64  # type: ignore[misc]
    with pytest.raises(AttributeError):
        SignoffProblem("x.json", "bad").reason = "fine"  # type: ignore[misc]


# --- the directory ------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["same", "inside", "deep", "symlink"])
def test_a_reviews_dir_in_the_reports_dir_is_refused(tmp_path: Path, where: str) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    reviews = {
        "same": reports,
        "inside": reports / "reviews",
        "deep": reports / "a" / ".." / "b" / "reviews",
        "symlink": tmp_path / "link",
    }[where]
    if where == "symlink":
        reviews.symlink_to(reports / "sub", target_is_directory=True)
    with pytest.raises(ReviewsDirError) as caught:
        check_reviews_dir(reviews, reports)
    message = str(caught.value)
    assert str(reviews) in message and str(reports) in message
    assert "relidash never writes into a reports directory" in message


def test_a_reviews_dir_beside_the_reports_dir_is_accepted(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    check_reviews_dir(tmp_path / "reports-reviews", reports)  # a prefix, not a parent
    check_reviews_dir(tmp_path / "reviews", reports)
    check_reviews_dir(reports / "reviews", None)


def _blocked_by_a_file(tmp_path: Path) -> Path:
    (tmp_path / "plain-file").write_text("")
    return tmp_path / "plain-file" / "reviews"


def _is_a_file(tmp_path: Path) -> Path:
    (tmp_path / "reviews").write_text("")
    return tmp_path / "reviews"


def _read_only(tmp_path: Path) -> Path:
    reviews = tmp_path / "reviews"
    reviews.mkdir()
    reviews.chmod(0o500)
    try:
        (reviews / "probe").touch()
    except PermissionError:
        return reviews
    (reviews / "probe").unlink()
    reviews.chmod(0o700)
    pytest.skip("chmod 0o500 does not stop this user writing (root); the file cases cover it")


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (_blocked_by_a_file, "plain-file is a file, not a directory"),
        (_is_a_file, "it is a file, not a directory"),
        (_read_only, "permission denied"),
    ],
    ids=["parent-is-a-file", "path-is-a-file", "read-only"],
)
def test_an_unwritable_reviews_dir_is_a_reviews_dir_error(
    tmp_path: Path, make: Any, reason: str
) -> None:
    reviews = make(tmp_path)
    try:
        with pytest.raises(ReviewsDirError) as caught:
            write_signoff(reviews, make_record())
    finally:
        if reviews.is_dir():
            reviews.chmod(0o700)
    message = str(caught.value)
    assert message.startswith(f"the reviews directory {reviews} cannot be written (")
    assert reason in message
    assert message.endswith("; choose a directory relidash can write for sign-offs")
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".json", ".tmp")]


def test_permission_denied_is_a_reviews_dir_error_even_for_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a read-only directory does to a non-root writer, simulated where chmod cannot."""
    real_open = os.open

    def denied(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(ReviewsDirError) as caught:
        write_signoff(tmp_path, make_record())
    assert str(caught.value) == (
        f"the reviews directory {tmp_path} cannot be written (permission denied); "
        "choose a directory relidash can write for sign-offs"
    )
    assert list(tmp_path.iterdir()) == []


# --- paths and hashes ---------------------------------------------------------------------


def test_default_reviews_dir_honours_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_reviews_dir() == tmp_path / "xdg" / "relidash" / "reviews"
    fallback = tmp_path / "home" / ".local" / "share" / "relidash" / "reviews"
    monkeypatch.setenv("XDG_DATA_HOME", "")
    assert default_reviews_dir() == fallback
    monkeypatch.setenv("XDG_DATA_HOME", "relative/dir")  # the XDG spec says: ignore it
    assert default_reviews_dir() == fallback
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_reviews_dir() == fallback
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # data, not cache
    assert default_reviews_dir() == fallback


def test_file_sha256_reads_the_whole_file_in_chunks(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    data = os.urandom(2 * DIGEST_CHUNK + 12345)
    big.write_bytes(data)
    assert file_sha256(big) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert file_sha256(empty) == hashlib.sha256(b"").hexdigest()


def test_file_sha256_of_a_missing_file_is_none_and_other_errors_propagate(
    tmp_path: Path,
) -> None:
    assert file_sha256(tmp_path / "gone.json") is None
    (tmp_path / "plain").write_text("")
    assert file_sha256(tmp_path / "plain" / "child.json") is None
    # a directory is a directory report (a Harbor job): its digest is of its JSON files'
    # paths and digests, and moves when one of them changes
    job = tmp_path / "job"
    (job / "trial").mkdir(parents=True)
    (job / "result.json").write_text("{}")
    (job / "trial" / "result.json").write_text('{"reward": 1}')
    (job / "trial" / "log.txt").write_text("not part of it")
    expected = hashlib.sha256(
        json.dumps(
            [
                ["result.json", hashlib.sha256(b"{}").hexdigest()],
                ["trial/result.json", hashlib.sha256(b'{"reward": 1}').hexdigest()],
            ],
            separators=(",", ":"),
        ).encode()
    ).hexdigest()
    assert file_sha256(job) == expected
    (job / "trial" / "result.json").write_text('{"reward": 0}')
    assert file_sha256(job) != expected
    # any other error reading it propagates: a socket cannot be opened as a file
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "s.json"))
    try:
        with pytest.raises(OSError):
            file_sha256(tmp_path / "s.json")
    finally:
        sock.close()
