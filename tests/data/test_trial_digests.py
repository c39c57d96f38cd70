"""Evidence checked at its source: a multivon-eval 0.18+ report's trial records against the
digests multivon-eval wrote for them.

A real 0.20 report (tests/fixtures) with one trial's output edited after writing, its
digest left as written, is flagged by `relidash review` (and its packet) and by `verify`;
the digest is the one multivon-eval itself computes (checked against its TrialRecord when
RELIDASH_UPSTREAM_PYTHON names a Python with multivon-eval installed, as it must under
`make test` and CI: tests/support/required_tools.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from required_tools import upstream_python

from dashboard.data.formats.multivon.trial_digests import check_trial_digests
from dashboard.render.packet import parse_packet

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
REPORT = FIXTURES / "mv-0.20.0_all-pass_runs3.json"
TRIALS = 12  # the report's 4 cases × 3 runs


def edit_one_output(path: Path) -> dict[str, Any]:
    """Change the first trial's output, keep its digest: an edit after writing."""
    document = json.loads(path.read_text(encoding="utf-8"))
    trial = document["cases"][0]["trials"][0]
    trial["output"] = trial["output"] + " (edited)"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return trial


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("mv-0.*.json")), ids=lambda p: p.name)
def test_reports_as_multivon_eval_wrote_them_match_their_digests(fixture: Path) -> None:
    found = check_trial_digests(fixture)
    assert found.mismatched == ()
    has_trials = any(c.get("trials") for c in json.loads(fixture.read_text())["cases"])
    assert (found.trials > 0) == has_trials


def test_an_edited_trial_is_found_and_named(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    shutil.copy(REPORT, report)
    trial = edit_one_output(report)
    found = check_trial_digests(report)
    assert found.trials == TRIALS
    assert found.mismatched_count == 1
    assert found.mismatched == (f"case {trial['case_id']} run 1 attempt 1",)


def test_multivon_eval_refuses_the_trial_relidash_flags(tmp_path: Path) -> None:
    python = upstream_python()
    report = tmp_path / "r.json"
    shutil.copy(REPORT, report)
    edit_one_output(report)
    code = (
        "import json, sys\nfrom multivon_eval.trials import TrialRecord\n"
        "bad = 0\nfor case in json.load(open(sys.argv[1]))['cases']:\n"
        "    for t in case.get('trials') or []:\n"
        "        try: TrialRecord.from_dict(t)\n        except ValueError: bad += 1\nprint(bad)"
    )
    done = subprocess.run(
        [python, "-c", code, str(report)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert int(done.stdout) == check_trial_digests(report).mismatched_count == 1


def test_review_and_verify_flag_a_report_edited_after_it_was_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    reports = tmp_path / "reports"
    reports.mkdir()
    shutil.copy(REPORT, reports / "run.json")
    packet = tmp_path / "p.html"
    common = ["--reviews", str(tmp_path / "reviews"), "--catalog", ":memory:"]
    review = ["review", str(reports), "--suite", "code-agent", "--out", str(packet), *common]

    code, _, err = run_cli(review, capsys)
    assert code == 0, err
    assert "edited after it was written" not in err
    [entry] = parse_packet(packet.read_text())["trial_digests"]
    assert (entry["trials"], entry["edited"]) == (TRIALS, False)
    assert f"all {TRIALS} trial records match their digests" in packet.read_text()

    edit_one_output(reports / "run.json")
    code, out, err = run_cli(["verify", str(packet), str(reports), *common], capsys)
    assert code == 1
    # verify names the file by its role (raw paths only with --verbose)
    assert f"the release's report was edited after it was written: 1 of its {TRIALS}" in out

    code, _, err = run_cli(review, capsys)
    assert code == 0, err
    assert "warning: run.json (release) was edited after it was written" in err
    [entry] = parse_packet(packet.read_text())["trial_digests"]
    assert (entry["mismatched"], entry["edited"]) == (1, True)
    assert "was edited after it was written" in packet.read_text()
