"""Signed sign-offs and the chained ledger: `signoff --sign-key`, `reviews --check`.

Keys are made by `ssh-keygen -t ed25519 -N ''` in tmp_path and signatures checked by
`ssh-keygen -Y verify` itself, so a record is shown to verify with no relidash involved.
The ledger is broken each way a person could break it by hand (an edited record, a
removed one, two swapped, one slipped in, a signature that does not match) and
`relidash reviews --check` must name the record at the break and exit 1.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from required_tools import SIGNING_INSTALL, SIGNING_TESTS, require_command

from dashboard.analysis.ledger_state import check_ledger
from dashboard.data.records.signoffs import read_ledger_files, serialise_signoff, write_signoff
from dashboard.data.records.sshsig import SIGNOFF_NAMESPACE, sign_bytes

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports"
SUITE = "support-agent"


@pytest.fixture(autouse=True)
def _openssh() -> None:
    require_command("ssh-keygen", tests=SIGNING_TESTS, install=SIGNING_INSTALL)


@pytest.fixture(autouse=True)
def _isolated_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def make_key(directory: Path, name: str) -> tuple[Path, str]:
    """A fresh ed25519 key (private key path, public key line)."""
    key = directory / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True
    )
    return key, " ".join(key.with_suffix(".pub").read_text().split()[:2])


def allowed_signers(directory: Path, **who: str) -> Path:
    path = directory / "allowed_signers"
    path.write_text("".join(f"{principal} {public}\n" for principal, public in who.items()))
    return path


def keygen_verify(record: Path, signers: Path, principal: str) -> subprocess.CompletedProcess[str]:
    """ssh-keygen -Y verify exactly as the docs give it to a reviewer."""
    with record.open("rb") as data:
        return subprocess.run(
            ["ssh-keygen", "-Y", "verify", "-n", SIGNOFF_NAMESPACE, "-f", str(signers),
             "-I", principal, "-s", f"{record}.sig"],
            stdin=data, capture_output=True, text=True, check=False,
        )  # fmt: skip


def record(n: int, **changes: Any) -> dict[str, Any]:
    base = {
        "suite": "checkout-agent",
        "release": f"v{n}",
        "decision": "approved",
        "time": f"2026-12-0{1 + n // 10}T07:{n % 60:02d}:00Z",
        "by": "Ada",
        "evidence": [{"path": "run.json", "sha256": "ab" * 32}],
    }
    base.update(changes)
    return base


def records(directory: Path) -> list[Path]:
    return sorted(p for p in directory.glob("*.json"))


def check(capsys: pytest.CaptureFixture[str], rdir: Path, *extra: str) -> tuple[int, str, str]:
    return run_cli(["reviews", "--reviews", str(rdir), "--check", *extra], capsys)


# ---- 1. signed records ------------------------------------------------------------------


def test_signed_signoff_verifies_with_ssh_keygen_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, public = make_key(tmp_path, "ada")
    signers = allowed_signers(tmp_path, **{"ada@example.com": public})
    rdir = tmp_path / "reviews"
    argv = ["signoff", str(SAMPLES), "--suite", SUITE, "--decision", "approved", "--by", "Ada"]
    argv += ["--reviews", str(rdir), "--catalog", ":memory:", "--sign-key", str(key)]

    code, _, err = run_cli(argv, capsys)

    assert code == 0, err
    [stored] = records(rdir)
    assert (rdir / f"{stored.name}.sig").read_bytes().startswith(b"-----BEGIN SSH SIGNATURE")
    done = keygen_verify(stored, signers, "ada@example.com")
    assert done.returncode == 0, done.stderr
    assert "Good" in done.stdout + done.stderr

    code, out, err = run_cli(
        ["reviews", "--reviews", str(rdir), "--json", "--allowed-signers", str(signers)], capsys
    )
    assert code == 0, err
    [entry] = json.loads(out)["reviews"]
    assert (entry["signature"], entry["signed_by"]) == ("verified", "ada@example.com")
    assert entry["signature_text"] == "signed by ada@example.com, verified"

    # one byte edited: ssh-keygen and relidash both refuse it
    stored.write_bytes(stored.read_bytes().replace(b'"approved"', b'"rejected"'))
    assert keygen_verify(stored, signers, "ada@example.com").returncode != 0
    code, out, _ = run_cli(
        ["reviews", "--reviews", str(rdir), "--allowed-signers", str(signers)], capsys
    )
    assert "signature does not verify" in out


def test_a_key_not_among_the_allowed_signers_does_not_verify(tmp_path: Path) -> None:
    key, _ = make_key(tmp_path, "mallory")
    _, public = make_key(tmp_path, "ada")
    signers = allowed_signers(tmp_path, **{"ada@example.com": public})
    rdir = tmp_path / "reviews"
    write_signoff(rdir, record(1), sign=lambda data: sign_bytes(data, key))

    state = check_ledger(rdir, signers)

    assert not state.holds
    assert [(b.kind, b.reason) for b in state.breaks] == [
        ("signature", "signature does not verify (its key is not among the allowed signers)")
    ]
    # without the allowed signers only the bytes are checked: they are the ones signed
    assert check_ledger(rdir, None).holds


def test_unsigned_records_are_said_to_be_unsigned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rdir = tmp_path / "reviews"
    write_signoff(rdir, record(1))
    code, out, _ = run_cli(["reviews", "--reviews", str(rdir)], capsys)
    assert code == 0
    assert out.rstrip().endswith("unsigned")


def test_a_missing_sign_key_records_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rdir = tmp_path / "reviews"
    argv = ["signoff", str(SAMPLES), "--suite", SUITE, "--decision", "approved", "--by", "Ada"]
    argv += ["--reviews", str(rdir), "--catalog", ":memory:", "--sign-key", str(tmp_path / "no")]
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert "no such private key file" in err
    assert not rdir.exists()


def test_allowed_signers_from_relidash_toml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, public = make_key(tmp_path, "ada")
    reports = tmp_path / "reports"
    shutil.copytree(SAMPLES / SUITE, reports / SUITE)
    allowed_signers(tmp_path, **{"ada@example.com": public})
    (reports / "relidash.toml").write_text('[review]\nallowed_signers = "../allowed_signers"\n')
    rdir = tmp_path / "reviews"
    write_signoff(rdir, record(1), sign=lambda data: sign_bytes(data, key))

    code, out, err = run_cli(
        ["reviews", str(reports), "--reviews", str(rdir), "--catalog", ":memory:"], capsys
    )

    assert code == 0, err
    assert "signed by ada@example.com, verified" in out


# ---- 2. the chain -----------------------------------------------------------------------


def test_each_record_names_the_one_before_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rdir = tmp_path / "reviews"
    paths = [write_signoff(rdir, record(n)) for n in range(3)]
    stored = [json.loads(p.read_bytes()) for p in paths]
    assert stored[0]["previous"] is None and stored[0]["previous_sha256"] is None
    for before, after, path in zip(paths, stored[1:], paths[1:], strict=False):
        assert after["previous"] == before.name
        assert after["previous_sha256"] == hashlib.sha256(before.read_bytes()).hexdigest()
        assert path.exists()
    code, out, err = check(capsys, rdir)
    assert code == 0, out + err
    assert "The ledger holds: 3 records, 3 in one chain" in out
    assert hashlib.sha256(paths[-1].read_bytes()).hexdigest() in out


def _edit(paths: list[Path], rdir: Path) -> str:
    paths[1].write_bytes(paths[1].read_bytes().replace(b'"approved"', b'"rejected"'))
    return paths[1].name


def _remove(paths: list[Path], rdir: Path) -> str:
    paths[1].unlink()
    return paths[1].name


def _reorder(paths: list[Path], rdir: Path) -> str:
    first, second = paths[1].read_bytes(), paths[2].read_bytes()
    paths[1].write_bytes(second)
    paths[2].write_bytes(first)
    return paths[1].name


def _insert_linked(paths: list[Path], rdir: Path) -> str:
    """A hand-written record that names a real record before it, as relidash would."""
    forged = record(9, by="Mallory", previous=paths[1].name)
    forged["previous_sha256"] = hashlib.sha256(paths[1].read_bytes()).hexdigest()
    target = rdir / "20261201T073000Z-0000000000000000.json"
    target.write_bytes(serialise_signoff(forged))
    return target.name


def _insert_unlinked(paths: list[Path], rdir: Path) -> str:
    """A hand-written record in the format that predates chaining."""
    target = rdir / "20261130T000000Z-0000000000000000.json"
    target.write_bytes(serialise_signoff(record(8, by="Mallory")))
    return target.name


@pytest.mark.parametrize(
    ("breaking", "kind"),
    [
        (_edit, "edited"),
        (_remove, "removed"),
        (_reorder, "reordered"),
        (_insert_linked, "inserted"),
        (_insert_unlinked, "inserted"),
    ],
    ids=["edited", "removed", "reordered", "inserted-linked", "inserted-unlinked"],
)
def test_check_names_the_record_that_breaks_the_chain(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], breaking: Any, kind: str
) -> None:
    rdir = tmp_path / "reviews"
    paths = [write_signoff(rdir, record(n)) for n in range(4)]
    assert check(capsys, rdir)[0] == 0

    name = breaking(paths, rdir)
    code, out, err = check(capsys, rdir)

    assert code == 1, out
    assert "The ledger does not hold" in out
    assert f"{kind}: {name}" in out, out
    assert "the ledger breaks at" in err


def test_a_bad_signature_breaks_the_ledger(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key, public = make_key(tmp_path, "ada")
    signers = allowed_signers(tmp_path, **{"ada@example.com": public})
    rdir = tmp_path / "reviews"
    paths = [write_signoff(rdir, record(n), sign=lambda d: sign_bytes(d, key)) for n in range(2)]
    assert check(capsys, rdir, "--allowed-signers", str(signers))[0] == 0
    # the second record's signature replaced by the first's: a signature, not of these bytes
    shutil.copy(f"{paths[0]}.sig", f"{paths[1]}.sig")

    code, out, _ = check(capsys, rdir, "--allowed-signers", str(signers))

    assert code == 1
    assert f"signature: {paths[1].name} signature does not verify" in out


def test_records_that_predate_chaining_are_listed_as_a_prefix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rdir = tmp_path / "reviews"
    rdir.mkdir()
    old = []
    for n in range(2):  # written as relidash wrote records before chaining
        data = serialise_signoff(record(n))
        old.append(rdir / f"2026120{n + 1}T000000Z-{hashlib.sha256(data).hexdigest()[:16]}.json")
        old[-1].write_bytes(data)
    first_chained = write_signoff(rdir, record(20))
    write_signoff(rdir, record(21))

    code, out, _ = check(capsys, rdir)

    assert code == 0, out
    assert "4 records, 2 in one chain, 2 predate chaining" in out
    stored = json.loads(first_chained.read_bytes())
    assert stored["previous"] == old[-1].name
    assert sorted(stored["unchained_sha256"]) == sorted(
        hashlib.sha256(p.read_bytes()).hexdigest() for p in old
    )
    code, out, _ = run_cli(["reviews", "--reviews", str(rdir)], capsys)
    assert len(out.strip().splitlines()) == 4  # the old records are still listed

    old[0].unlink()  # a record from before chaining removed later
    code, out, _ = check(capsys, rdir)
    assert code == 1
    assert f"removed: {first_chained.name} lists a record that predates the chain" in out


WRITER = """
import sys, time
from pathlib import Path
from dashboard.data.records.signoffs import write_signoff

reviews, start, who, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
while not start.exists():
    time.sleep(0.001)
for n in range(count):
    write_signoff(reviews, {"suite": "s", "release": f"{who}-{n}", "decision": "approved",
                            "time": "2026-12-01T07:35:00Z", "by": who})
"""


def test_concurrent_signoffs_all_land_in_one_chain(tmp_path: Path) -> None:
    rdir = tmp_path / "reviews"
    rdir.mkdir()
    start = tmp_path / "start"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    children = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(rdir), str(start), who, "15"], cwd=REPO, env=env
        )
        for who in ("alice", "bob", "carol")
    ]
    start.touch()
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0]

    state = check_ledger(rdir, None)

    assert state.holds, state.breaks
    assert len(state.chain.order) == 45
    assert len(read_ledger_files(rdir)) == 45
    roots = [f for f in read_ledger_files(rdir) if (f.record or {})["previous"] is None]
    assert len(roots) == 1


def test_records_that_predate_chaining_say_so_when_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rdir = tmp_path / "reviews"
    rdir.mkdir()
    data = serialise_signoff(record(1, by="Old"))
    (rdir / f"20261201T000000Z-{hashlib.sha256(data).hexdigest()[:16]}.json").write_bytes(data)
    write_signoff(rdir, record(2, by="New"))

    code, out, _ = run_cli(["reviews", "--reviews", str(rdir)], capsys)
    assert code == 0
    lines = {("New" in line, line.endswith("(predates chaining)")) for line in out.splitlines()}
    assert lines == {(True, False), (False, True)}
    code, out, _ = run_cli(["reviews", "--reviews", str(rdir), "--json"], capsys)
    assert {e["by"]: e["chained"] for e in json.loads(out)["reviews"]} == {
        "Old": False,
        "New": True,
    }


def test_without_ssh_keygen_signing_is_refused_and_checking_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    key, _ = make_key(tmp_path, "ada")
    rdir = tmp_path / "reviews"
    write_signoff(rdir, record(1), sign=lambda data: sign_bytes(data, key))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no ssh-keygen on it

    argv = ["signoff", str(SAMPLES), "--suite", SUITE, "--decision", "approved", "--by", "Ada"]
    argv += ["--reviews", str(rdir), "--catalog", ":memory:", "--sign-key", str(key)]
    code, _, err = run_cli(argv, capsys)
    assert code == 2
    assert "ssh-keygen (OpenSSH 8.2 or later) is not installed" in err
    assert len(records(rdir)) == 1

    code, out, _ = check(capsys, rdir)
    assert code == 1
    assert "signature cannot be checked (ssh-keygen (OpenSSH 8.2 or later) is not installed" in out
