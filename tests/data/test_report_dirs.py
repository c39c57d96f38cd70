"""A directory report (a Harbor job) folded into one listed entry: its stat is its JSON
files' summed size and newest mtime, and in a bucket its version moves when any of its
objects is rewritten, not only the first few."""

from __future__ import annotations

from dashboard.data.load.report_dirs import group_report_directories
from dashboard.data.sources.walk import FileEntry

JOB = ["jobs/j1/config.json", "jobs/j1/lock.json", "jobs/j1/result.json"]
TRIALS = [f"jobs/j1/task-{i:02d}__abc/result.json" for i in range(40)]


def listing(etags: dict[str, str]) -> list[FileEntry]:
    return [
        FileEntry(path, f"/mirror/{path}", 10 + i, 1_000 + i, False, etags.get(path, f"e{i}"))
        for i, path in enumerate(JOB + TRIALS)
    ] + [FileEntry("other.json", "/mirror/other.json", 5, 7, False, "x")]


def test_a_job_is_one_entry_with_its_files_stat() -> None:
    entries, members = group_report_directories(listing({}))
    job = next(e for e in entries if e.path == "jobs/j1/")
    assert [e.path for e in entries if e.path != "jobs/j1/"] == ["other.json"]
    assert job.abspath == "/mirror/jobs/j1"
    assert job.size == sum(10 + i for i in range(len(JOB + TRIALS)))
    assert job.mtime_ns == 1_000 + len(JOB + TRIALS) - 1
    assert members["jobs/j1/"] == JOB + TRIALS


def test_any_rewritten_object_changes_the_jobs_version() -> None:
    before = next(e for e in group_report_directories(listing({}))[0] if e.path == "jobs/j1/")
    last = TRIALS[-1]
    after = next(
        e for e in group_report_directories(listing({last: "rewritten"}))[0] if e.path == "jobs/j1/"
    )
    assert before.etag and after.etag and before.etag != after.etag
    assert (before.size, before.mtime_ns) == (after.size, after.mtime_ns)
