"""A record's evidence status and each file's entry do not depend on the order its files
are listed in: one gone file makes the status "missing" wherever it stands, a changed one
"changed" when none is gone, and each changed file carries its own digest now (None only
for the gone one).

Checked on evidence_status and verify's check_evidence with the files in every order, and
end to end on `relidash reviews` after a sign-off whose release file changed and base file
went, and the other way round (a record lists the release first, then the base).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli

from dashboard.analysis.review import (
    CHANGED,
    MISSING,
    changed_after_approval,
    evidence_status,
)
from dashboard.analysis.verifying import check_evidence

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports"
SUITE = "support-agent"
RELEASE = "v1.11.0"
RELEASE_FILE = "support-agent/2026-04-13_v1.11.0.json"
BASE_FILE = "support-agent/2026-03-30_v1.10.0.json"

OLD = {"s/kept.json": "a" * 64, "s/edited.json": "b" * 64, "s/gone.json": "c" * 64}
NOW: dict[str, str | None] = {
    "s/kept.json": "a" * 64,
    "s/edited.json": "d" * 64,
    "s/gone.json": None,
}
ROLES = {"s/kept.json": "release", "s/edited.json": "base", "s/gone.json": "other"}


def listed(paths: tuple[str, ...]) -> list[dict[str, Any]]:
    return [{"path": p, "sha256": OLD[p], "role": ROLES[p]} for p in paths]


def own_entries(paths: tuple[str, ...]) -> tuple[dict[str, str | None], ...]:
    """Each listed file that differs now, in the listed order, with its own digests."""
    return tuple({"path": p, "old": OLD[p], "new": NOW[p]} for p in paths if NOW[p] != OLD[p])


@pytest.mark.parametrize(
    "paths", list(itertools.permutations(OLD)), ids=lambda p: ",".join(Path(x).stem for x in p)
)
def test_one_gone_file_makes_it_missing_in_any_order(paths: tuple[str, ...]) -> None:
    status = evidence_status(listed(paths), NOW)
    assert status.status == MISSING
    assert status.changed_files == own_entries(paths)


@pytest.mark.parametrize(
    "paths",
    list(itertools.permutations(("s/kept.json", "s/edited.json"))),
    ids=lambda p: ",".join(Path(x).stem for x in p),
)
def test_changed_without_a_gone_file_is_changed_in_any_order(paths: tuple[str, ...]) -> None:
    status = evidence_status(listed(paths), NOW)
    assert status.status == CHANGED
    assert status.changed_files == own_entries(paths)


@pytest.mark.parametrize("paths", list(itertools.permutations(OLD)))
def test_approved_records_are_flagged_by_their_own_files(paths: tuple[str, ...]) -> None:
    """Two approvals sharing the edited file: the one that also lists the gone file is
    missing, the other changed, whichever is read first."""
    gone_too = {"suite": "s", "release": "r1", "decision": "approved", "evidence": listed(paths)}
    edited_only = {
        "suite": "s",
        "release": "r2",
        "decision": "approved",
        "evidence": listed(tuple(p for p in paths if p != "s/gone.json")),
    }
    for records in ([gone_too, edited_only], [edited_only, gone_too]):
        flagged = changed_after_approval(records, NOW)
        assert {key: status.status for key, status in flagged.items()} == {
            ("s", "r1"): MISSING,
            ("s", "r2"): CHANGED,
        }


@pytest.mark.parametrize("paths", list(itertools.permutations(OLD)))
def test_verify_lists_each_changed_file_with_its_own_digest_and_role(
    paths: tuple[str, ...],
) -> None:
    found = check_evidence(listed(paths), None, NOW)
    assert [dict(c) for c in found.changed] == [
        {**entry, "role": ROLES[str(entry["path"])]} for entry in own_entries(paths)
    ]
    [gone] = [c for c in found.changed if c["new"] is None]
    assert gone["path"] == "s/gone.json"


# ---- end to end: `relidash reviews` after a sign-off ----------------------------------------


@pytest.fixture(autouse=True)
def _isolated_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.mark.parametrize(
    ("edited", "gone"),
    [(RELEASE_FILE, BASE_FILE), (BASE_FILE, RELEASE_FILE)],
    ids=["release-edited-base-gone", "release-gone-base-edited"],
)
def test_reviews_shows_each_files_own_fate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edited: str, gone: str
) -> None:
    reports, rdir = tmp_path / "reports", tmp_path / "reviews"
    shutil.copytree(SAMPLES, reports)
    argv = ["signoff", str(reports), "--suite", SUITE, "--release", RELEASE]
    argv += [
        "--decision",
        "approved",
        "--by",
        "Ada",
        "--reviews",
        str(rdir),
        "--catalog",
        ":memory:",
    ]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err
    [record_file] = [p for p in rdir.iterdir() if p.suffix == ".json" and p.name[0] != "."]
    signed = {e["path"]: e["sha256"] for e in json.loads(record_file.read_text())["evidence"]}
    assert list(signed) == [RELEASE_FILE, BASE_FILE]  # the record's order: release, base

    with open(reports / edited, "a", encoding="utf-8") as handle:
        handle.write(" ")
    (reports / gone).unlink()
    code, out, err = run_cli(["reviews", str(reports), "--reviews", str(rdir), "--json"], capsys)
    assert code == 0, err
    [entry] = json.loads(out)["reviews"]
    assert entry["evidence"] == MISSING
    edited_now = hashlib.sha256((reports / edited).read_bytes()).hexdigest()
    assert edited_now != signed[edited]
    now = {edited: edited_now, gone: None}
    assert entry["changed_files"] == [
        {"path": p, "old": signed[p], "new": now[p]} for p in (RELEASE_FILE, BASE_FILE)
    ]

    code, out, _ = run_cli(["reviews", str(reports), "--reviews", str(rdir)], capsys)
    assert "evidence missing" in out
    assert f"{edited}: {signed[edited]} -> {edited_now}" in out
    assert f"{gone}: {signed[gone]} -> missing" in out
