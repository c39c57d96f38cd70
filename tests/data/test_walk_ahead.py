"""A command walks its directory in a child process while it imports the rest
(dashboard/data/sources/walk.py walk_ahead): the listing it takes back must be the walk it would
have done itself, file for file, problem for problem, part digest for part digest; a
part's files are decoded only when the load asks for them; and when the child cannot
give a walk, the load walks itself."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from report_files import is_report

from dashboard.data.sources import walk
from dashboard.data.sources.walk import ListingParts, scan_directory

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OLD_NS = 1_600_000_000 * 10**9


def reports_tree(root: Path) -> Path:
    """Report files at the top and in nested parts, with what a walk must skip or name:
    hidden names, other files, a link to a directory, a link to a file, a broken link, a
    directory named like a report, an empty part."""
    fixtures = sorted(p for p in FIXTURES.glob("*.json") if is_report(p))[:6]
    root.mkdir()
    (root / "suite-a" / "nested").mkdir(parents=True)
    (root / "suite-b").mkdir()
    (root / "empty").mkdir()
    (root / "folder.json").mkdir()
    (root / ".hidden").mkdir()
    places = [
        root / "top.json",
        root / "suite-a" / "one.json",
        root / "suite-a" / "nested" / "two.json",
        root / "suite-b" / "three.json",
        root / "folder.json" / "four.json",
        root / ".hidden" / "five.json",
    ]
    for source, place in zip(fixtures, places, strict=True):
        shutil.copyfile(source, place)
        os.utime(place, ns=(OLD_NS, OLD_NS))
    (root / "suite-b" / ".draft.json").write_text("{}")
    (root / "suite-b" / "notes.txt").write_text("not a report")
    (root / "suite-b" / "linked").symlink_to(root / "suite-a", target_is_directory=True)
    (root / "suite-b" / "alias.json").symlink_to(root / "top.json")
    (root / "suite-b" / "broken.json").symlink_to(root / "nowhere.json")
    return root


def test_the_encoded_walk_is_the_walk(tmp_path: Path) -> None:
    root = str(reports_tree(tmp_path / "reports"))
    walked = walk._decoded_walk(root, [walk._encoded_walk(root)])
    entries, problems = scan_directory(Path(root), racy_after=walked.parts.entries._racy_after)  # type: ignore[attr-defined]
    assert [e.path for e in entries] == [
        "top.json",
        "folder.json/four.json",
        "suite-a/one.json",
        "suite-a/nested/two.json",
        "suite-b/alias.json",
        "suite-b/three.json",
    ]
    assert {p.path for p in problems} == {"folder.json", "suite-b/broken.json"}
    assert len(walked.entries) == len(entries)
    assert walked.problems == problems
    assert walked.parts.digests == ListingParts.of(entries).digests
    assert list(walked.entries) == entries


@pytest.mark.parametrize("walkers", [1, 2, 3, 5, 20])
def test_shares_walked_apart_join_into_the_walk(tmp_path: Path, walkers: int) -> None:
    """However the top-level names are shared out, the joined walk is the one walk: the
    files at the top (here spread over several shares) in order, with their part's
    digest made over all of them; the top's problems before those below."""
    root = reports_tree(tmp_path / "reports")
    for name in ("a-first.json", "m-middle.json", "zz-last.json"):
        shutil.copyfile(root / "top.json", root / name)
        os.utime(root / name, ns=(OLD_NS, OLD_NS))
    for broken in ("b-broken.json", "zz-broken.json"):
        (root / broken).symlink_to(root / "nowhere.json")
    top = sorted(name for name in os.listdir(root) if not name.startswith("."))
    shares = walk._shares(top, walkers)
    assert [name for share in shares for name in share] == top
    assert len(shares) == min(walkers, len(top))
    racy_after = walk.racy_threshold()
    walked = walk._decoded_walk(
        str(root), [walk._encoded_walk(str(root), share, racy_after) for share in shares]
    )
    entries, problems = scan_directory(root, racy_after=racy_after)
    assert list(walked.entries) == entries
    assert len(walked.entries) == len(entries) == 9
    assert walked.problems == problems
    assert [p.path for p in problems] == [
        "b-broken.json",
        "folder.json",
        "zz-broken.json",
        "suite-b/broken.json",
    ]
    assert walked.parts.digests == ListingParts.of(entries).digests
    assert list(walked.parts.digests) == list(ListingParts.of(entries).digests)


def test_a_part_is_decoded_only_when_asked_for(tmp_path: Path) -> None:
    root = str(reports_tree(tmp_path / "reports"))
    walked = walk._decoded_walk(root, [walk._encoded_walk(root)])
    parts = walked.parts
    assert set(parts.digests) == {"", "folder.json", "suite-a", "suite-b"}
    assert len(walked.entries) == 6
    assert parts.entries._decoded == {}  # type: ignore[attr-defined]
    files = parts.files_of({"suite-a"})
    assert [e.path for e in files] == ["suite-a/one.json", "suite-a/nested/two.json"]
    assert set(parts.entries._decoded) == {"suite-a"}  # type: ignore[attr-defined]
    assert files[0].abspath == os.path.join(root, "suite-a", "one.json")
    assert not files[0].racy


def test_a_file_modified_just_before_the_walk_is_racy(tmp_path: Path) -> None:
    root = reports_tree(tmp_path / "reports")
    (root / "suite-a" / "one.json").touch()
    walked = walk._decoded_walk(str(root), [walk._encoded_walk(str(root))])
    racy = {e.path for e in walked.entries if e.racy}
    assert racy == {"suite-a/one.json"}


PROBE = r"""
import json, os, sys
from pathlib import Path
from dashboard.data.sources import walk
root, other = sys.argv[1], sys.argv[2]
parent = os.getpid()
walks = []
real = walk._walk
def counted(*args):
    if os.getpid() == parent:
        walks.append(args[0])
    return real(*args)
walk._walk = counted
mode = sys.argv[3]
if mode == "fail":
    def failing(*args):
        raise OSError("the child cannot walk")
    walk._encoded_walk = failing
if mode == "three children":  # as on a machine with three cores or more
    walk._walkers = lambda: 3
if mode == "sigchld":  # children reaped by the kernel: none can be waited for
    import signal
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
if mode == "native threads":  # DuckDB's own threads, which Python does not count
    import duckdb
    con = duckdb.connect()  # kept: its threads end with it
    con.execute("SELECT 1").fetchall()
walk.walk_ahead(root)
begun = walk._ahead is not None
walkers = len(walk._ahead.children) if begun else 0
if mode == "abandon":  # the command stopped before its load
    walk.abandon_walk()
    taken = None
else:
    taken = walk.take_walk(other if mode == "other" else root)
try:
    os.waitpid(-1, os.WNOHANG)
    children = True  # one still running, or a zombie nobody waited for
except ChildProcessError:
    children = False
print(json.dumps({
    "begun": begun,
    "walkers": walkers,
    "taken": None if taken is None else [list(e) for e in taken.entries],
    "problems": None if taken is None else [[p.path, p.reason] for p in taken.problems],
    "parent_walks": walks,
    "left": walk._ahead is not None,
    "children": children,
}))
"""


def run_python(code: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """A fresh interpreter (one thread: it may walk ahead) running code with argv."""
    return subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        check=False,
    )


def probe(root: Path, mode: str, other: Path | None = None) -> dict[str, object]:
    done = run_python(PROBE, str(root), str(other or root), mode)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.skipif(sys.platform != "linux", reason="the walk ahead runs on Linux only")
@pytest.mark.parametrize("mode", ["take", "three children"])
def test_a_fresh_process_walks_ahead_in_a_child(tmp_path: Path, mode: str) -> None:
    root = reports_tree(tmp_path / "reports")
    result = probe(root, mode)
    entries, problems = scan_directory(root)
    assert result["begun"] is True
    if mode == "three children":
        assert result["walkers"] == 3
    assert result["parent_walks"] == []  # the parent walked nothing itself
    assert result["taken"] == [[*e[:4], False, ""] for e in entries]
    assert result["problems"] == [[p.path, p.reason] for p in problems]
    assert result["left"] is False
    assert result["children"] is False  # the child was waited for


@pytest.mark.skipif(sys.platform != "linux", reason="the walk ahead runs on Linux only")
def test_a_child_that_fails_or_walked_elsewhere_gives_no_walk(tmp_path: Path) -> None:
    root = reports_tree(tmp_path / "reports")
    for mode, other in (("fail", None), ("other", tmp_path), ("abandon", None)):
        result = probe(root, mode, other=other)
        assert result["begun"] is True, mode
        assert result["taken"] is None, mode
        assert result["left"] is False and result["children"] is False, mode


@pytest.mark.skipif(sys.platform != "linux", reason="the walk ahead runs on Linux only")
@pytest.mark.parametrize("mode", ["sigchld", "native threads"])
def test_no_walk_ahead_where_a_child_could_not_be_waited_for_or_forked_safely(
    tmp_path: Path, mode: str
) -> None:
    result = probe(reports_tree(tmp_path / "reports"), mode)
    assert result["begun"] is False and result["taken"] is None
    assert result["children"] is False


def test_a_process_with_threads_does_not_fork(tmp_path: Path) -> None:
    root = reports_tree(tmp_path / "reports")
    import threading

    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        walk.walk_ahead(root)
        assert walk._ahead is None
    finally:
        stop.set()
        helper.join()


CLI = r"""
import os, sys
from dashboard.data.sources import walk
parent = os.getpid()
real = walk._walk
def counted(*args):
    if os.getpid() == parent:
        print("relidash-test: the parent walked", file=sys.stderr)
    return real(*args)
walk._walk = counted
from dashboard.cli import main as cli
begin = cli.walk_ahead
def begun(directory):
    begin(directory)
    if walk._ahead is not None:
        print("relidash-test: walking ahead", file=sys.stderr)
cli.walk_ahead = begun
code = cli.main(sys.argv[1:])
try:
    os.waitpid(-1, os.WNOHANG)
    print("relidash-test: a child was left", file=sys.stderr)
except ChildProcessError:
    pass
sys.exit(code)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the walk ahead runs on Linux only")
def test_summary_loads_from_the_walk_ahead_as_from_its_own(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cold, warm and after one changed file, the CLI's load takes the child's walk (its
    own process walks nothing) and prints what an in-process load, which walks itself,
    prints from the same directory and catalog state."""
    from cli_run import run_cli as run_in_process

    from dashboard.cli import main

    monkeypatch.setattr(main, "walk_ahead", lambda directory: None)  # this one walks itself
    root = reports_tree(tmp_path / "reports")
    ahead, itself = tmp_path / "ahead.duckdb", tmp_path / "itself.duckdb"

    def both() -> tuple[str, str]:
        done = run_python(CLI, "summary", str(root), "--json", "--catalog", str(ahead))
        assert done.returncode == 0, done.stderr
        assert "relidash-test: walking ahead" in done.stderr
        assert "the parent walked" not in done.stderr
        assert "a child was left" not in done.stderr
        code, out, err = run_in_process(
            ["summary", str(root), "--json", "--catalog", str(itself)], capsys
        )
        assert code == 0, err
        assert json.loads(done.stdout) == json.loads(out)
        return done.stderr, err

    cold, _ = both()
    assert "6 report files: 6 parsed" in cold
    warm, _ = both()
    assert "0 parsed, 6 unchanged" in warm
    changed = root / "suite-a" / "one.json"
    changed.write_bytes(changed.read_bytes() + b"\n")
    os.utime(changed, ns=(OLD_NS + 10**9, OLD_NS + 10**9))
    after, in_process = both()
    assert "1 parsed, 5 unchanged" in after
    assert "1 parsed, 5 unchanged" in in_process


@pytest.mark.skipif(sys.platform != "linux", reason="the walk ahead runs on Linux only")
def test_a_command_that_stops_before_its_load_ends_the_walk(tmp_path: Path) -> None:
    root = reports_tree(tmp_path / "reports")
    inside = root / "catalog.duckdb"  # refused: relidash never writes into the reports
    done = run_python(CLI, "summary", str(root), "--json", "--catalog", str(inside))
    assert done.returncode == 2
    assert "inside the reports directory" in done.stderr
    assert "relidash-test: walking ahead" in done.stderr
    assert "a child was left" not in done.stderr


# ---- a walk in a child process, for a threaded server (walk_in_child) ----------------------


def assert_is_the_walk(walked: walk.WalkedListing | None, root: Path) -> None:
    """`walked` (a child's) equals scan_directory's walk of root: files, problems, digests."""
    assert walked is not None
    entries, problems = scan_directory(root, racy_after=walked.parts.entries._racy_after)  # type: ignore[attr-defined]
    assert list(walked.entries) == entries and len(entries) == 6
    assert walked.problems == problems
    assert walked.parts.digests == ListingParts.of(entries).digests


def test_a_walk_in_a_child_process_is_the_walk(tmp_path: Path) -> None:
    root = reports_tree(tmp_path / "reports")
    assert_is_the_walk(walk.walk_in_child(root), root)


def test_a_walk_in_a_child_that_fails_gives_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = reports_tree(tmp_path / "reports")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert walk.walk_in_child(root) is None
    monkeypatch.setattr(sys, "executable", shutil.which("false") or "/bin/false")
    assert walk.walk_in_child(root) is None


def test_a_walk_in_a_child_without_os_nice_still_walks(tmp_path: Path) -> None:
    """Windows has no os.nice: the child then walks at the usual priority instead of
    failing, which would leave every renewal unable to tell."""
    root = reports_tree(tmp_path / "reports")
    code = "import os, runpy; del os.nice; runpy.run_module('dashboard.data.sources.walk', run_name='__main__')"
    done = subprocess.run(
        [sys.executable, "-c", code, str(root)], capture_output=True, cwd=REPO, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    assert_is_the_walk(walk._decoded_walk(os.path.realpath(root), [done.stdout]), root)
