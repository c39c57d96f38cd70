"""Criteria fixed before results, and a packet's signatures checked offline.

`relidash policy register` records a policy's digest and time in the ledger; a review of
a release whose first report was written after that says "criteria fixed before results",
one written before it "criteria set after results were seen", and the packet carries it.
A packet of signed sign-offs carries each record and its signature: `verify
--allowed-signers` checks them, and so does ssh-keygen on the record rebuilt from the
packet with Python's json alone.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from required_tools import SIGNING_INSTALL, SIGNING_TESTS, require_command

from dashboard.analysis import review as review_module
from dashboard.analysis.preregistration import FIXED_BEFORE, NOT_REGISTERED, SET_AFTER
from dashboard.render.packet import parse_packet

REPO = Path(__file__).resolve().parents[2]
SUITE = "support-agent"
FIRST_REPORT = "2026-04-13T09:00:03Z"  # sample_reports' v1.11.0: its earliest recorded trial


@pytest.fixture(autouse=True)
def _openssh() -> None:
    require_command("ssh-keygen", tests=SIGNING_TESTS, install=SIGNING_INSTALL)


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    shutil.copytree(REPO / "sample_reports" / SUITE, tmp_path / "reports" / SUITE)
    (tmp_path / "policy.toml").write_text('[[rule]]\nmetric = "pass^k"\nk = 3\nmin_value = 0.5\n')
    return tmp_path


def register_at(
    world: Path, time: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(review_module, "utc_now", lambda: time)
    code, _, err = run_cli(
        ["policy", "register", str(world / "policy.toml"), "--suite", SUITE,
         "--reviews", str(world / "reviews"), "--by", "Ada"],
        capsys,
    )  # fmt: skip
    monkeypatch.undo()
    assert code == 0, err


def review(world: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[str, Any]:
    code, _, err = run_cli(
        ["review", str(world / "reports"), "--suite", SUITE, "--policy", str(world / "policy.toml"),
         "--reviews", str(world / "reviews"), "--out", str(world / "p.html"),
         "--catalog", ":memory:", *extra],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    return err, parse_packet((world / "p.html").read_text())


@pytest.mark.parametrize(
    ("registered", "status"),
    [(None, NOT_REGISTERED), ("2026-01-01T00:00:00Z", FIXED_BEFORE), ("2026-12-01T00:00:00Z", SET_AFTER)],
)  # fmt: skip
def test_a_review_says_whether_its_criteria_were_fixed_before_results(
    world: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    registered: str | None,
    status: str,
) -> None:
    if registered is not None:
        register_at(world, registered, capsys, monkeypatch)

    err, block = review(world, capsys)

    assert status.capitalize() in err
    criteria = block["criteria"]
    assert criteria["status"] == status
    assert criteria["registered_at"] == registered
    assert criteria["results_at"] == FIRST_REPORT
    assert status.capitalize() in (world / "p.html").read_text()
    # verify reads the same from the reviews directory now
    code, out, err = run_cli(
        ["verify", str(world / "p.html"), str(world / "reports"),
         "--reviews", str(world / "reviews"), "--catalog", ":memory:"],
        capsys,
    )  # fmt: skip
    assert code == 0, out + err
    assert f"criteria: {status.capitalize()}" in out


def test_a_registration_of_other_bytes_does_not_count(
    world: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    register_at(world, "2026-01-01T00:00:00Z", capsys, monkeypatch)
    policy = world / "policy.toml"
    policy.write_text(policy.read_text().replace("0.5", "0.4"))  # loosened after registering
    _, block = review(world, capsys)
    assert block["criteria"]["status"] == NOT_REGISTERED


def test_registrations_are_chained_but_not_listed_as_signoffs(
    world: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    register_at(world, "2026-01-01T00:00:00Z", capsys, monkeypatch)
    [record] = (world / "reviews").glob("*.json")
    stored = json.loads(record.read_bytes())
    assert stored["kind"] == "policy-registration"
    assert (
        stored["policy_sha256"] == hashlib.sha256((world / "policy.toml").read_bytes()).hexdigest()
    )
    code, out, _ = run_cli(["reviews", "--reviews", str(world / "reviews"), "--json"], capsys)
    assert json.loads(out)["reviews"] == []
    code, out, _ = run_cli(["reviews", "--reviews", str(world / "reviews"), "--check"], capsys)
    assert code == 0 and "1 record, 1 in one chain" in out


def test_a_packet_carries_signed_records_that_verify_offline(
    world: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = world / "ada"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    signers = world / "allowed_signers"
    signers.write_text(f"ada@example.com {public}\n")
    code, _, err = run_cli(
        ["signoff", str(world / "reports"), "--suite", SUITE, "--decision", "approved",
         "--by", "Ada", "--reviews", str(world / "reviews"), "--catalog", ":memory:",
         "--policy", str(world / "policy.toml"), "--sign-key", str(key)],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    _, block = review(world, capsys, "--allowed-signers", str(signers))
    [record] = block["signoffs"]
    [signature] = block["signatures"].values()
    assert signature["status_text"] == "signed by ada@example.com, verified"
    assert "signed by ada@example.com, verified" in (world / "p.html").read_text()

    # the record's bytes rebuilt with Python's json alone, checked by ssh-keygen alone
    data = (json.dumps(record, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    (world / "record.json").write_bytes(data)
    (world / "record.json.sig").write_text(signature["signature"])
    done = subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-n", "relidash-signoff", "-f", str(signers),
         "-I", "ada@example.com", "-s", str(world / "record.json.sig")],
        input=data, capture_output=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr

    verify = ["verify", str(world / "p.html"), str(world / "reports"), "--reviews",
              str(world / "reviews"), "--catalog", ":memory:", "--allowed-signers", str(signers)]  # fmt: skip
    code, out, err = run_cli(verify, capsys)
    assert code == 0, out + err
    assert "signed by ada@example.com, verified" in out

    # the carried signature replaced by one over other bytes: verify fails, naming it
    other = subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-f", str(key), "-n", "relidash-signoff"],
        input=b"other bytes", capture_output=True, check=True,
    ).stdout.decode()  # fmt: skip
    html = (world / "p.html").read_text()
    armored = json.dumps(signature["signature"])[1:-1]
    assert armored in html
    (world / "p.html").write_text(html.replace(armored, json.dumps(other)[1:-1]))
    code, out, err = run_cli(verify, capsys)
    assert code == 1
    assert "signature does not verify" in out


def test_a_packet_names_the_ledgers_last_record_and_verify_finds_it_cut(
    world: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    register_at(world, "2026-01-01T00:00:00Z", capsys, monkeypatch)
    register_at(world, "2026-01-02T00:00:00Z", capsys, monkeypatch)
    _, block = review(world, capsys)
    last = max((world / "reviews").glob("*.json"), key=lambda p: p.name)
    assert block["ledger_head"] == {
        "file": last.name,
        "sha256": hashlib.sha256(last.read_bytes()).hexdigest(),
    }
    verify = ["verify", str(world / "p.html"), str(world / "reports"), "--reviews",
              str(world / "reviews"), "--catalog", ":memory:"]  # fmt: skip
    code, out, err = run_cli(verify, capsys)
    assert code == 0, out + err
    assert f"ledger: its last record when the packet was written, {last.name}, is still" in out

    last.unlink()  # the chain that is left still holds: only the packet can tell
    assert run_cli(["reviews", "--reviews", str(world / "reviews"), "--check"], capsys)[0] == 0
    code, out, err = run_cli(verify, capsys)
    assert code == 1
    assert f"{last.name} (SHA-256" in out and "is gone or changed" in out
