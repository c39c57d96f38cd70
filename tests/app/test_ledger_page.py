"""The Reviews page shows the ledger's state (AppTest): a chain that holds, and one with a
record edited by hand, named on the page; each sign-off's signature in its table."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from page_tables import read_static, static_bodies
from required_tools import SIGNING_INSTALL, SIGNING_TESTS, require_command
from streamlit.testing.v1 import AppTest

from dashboard.data.records.signoffs import write_signoff
from dashboard.data.records.sshsig import sign_bytes

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports" / "support-agent"


@pytest.fixture(autouse=True)
def _openssh() -> None:
    require_command("ssh-keygen", tests=SIGNING_TESTS, install=SIGNING_INSTALL)


@pytest.fixture
def reviews(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    reports = tmp_path / "reports"
    shutil.copytree(SAMPLE, reports / "support-agent")
    key = tmp_path / "ada"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    public = " ".join(key.with_suffix(".pub").read_text().split()[:2])
    (tmp_path / "allowed_signers").write_text(f"ada@example.com {public}\n")
    (reports / "relidash.toml").write_text('[review]\nallowed_signers = "../allowed_signers"\n')
    rdir = tmp_path / "reviews"
    for n in range(3):
        record = {"suite": "support-agent", "release": f"v{n}", "decision": "approved",
                  "time": f"2026-12-01T07:3{n}:00Z", "by": "Ada"}  # fmt: skip
        write_signoff(rdir, record, sign=(lambda d: sign_bytes(d, key)) if n == 0 else None)
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(rdir))
    st.cache_data.clear()
    st.cache_resource.clear()
    yield rdir
    st.cache_data.clear()
    st.cache_resource.clear()


def open_reviews() -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("page_scripts/reviews.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Reviews"]
    return at


def test_reviews_page_shows_the_ledger_and_the_record_that_breaks_it(reviews: Path) -> None:
    at = open_reviews()
    assert [s.value for s in at.subheader] == ["Ledger"]
    assert any(
        "The ledger holds: 3 records, 3 in one chain" in s.value.replace("\\", "")
        for s in at.success
    ), [s.value for s in at.success]
    # the sign-offs are a static table (a comment wraps); a column with one value in every
    # row is said once in the caption under it
    shown = read_static(static_bodies(at)[0])
    signatures = list(shown["signature"])
    assert signatures == ["unsigned", "unsigned", "signed by ada@example.com, verified"]
    if "chain" in shown.columns:
        assert set(shown["chain"]) == {"chained"}
    else:
        captions = [c.value.replace("\\", "") for c in at.caption]
        assert any(c.startswith("Every row:") and "chain chained" in c for c in captions), captions

    middle = sorted(reviews.glob("*.json"))[1]
    middle.write_bytes(middle.read_bytes().replace(b'"approved"', b'"rejected"'))
    at = open_reviews()
    assert any("The ledger does not hold" in e.value.replace("\\", "") for e in at.error)
    breaks = at.dataframe[0].value  # the one grid: the sign-offs are a static table
    assert list(breaks["record"]) == [middle.name]
    assert list(breaks["break"]) == ["edited"]


def test_the_pages_packet_carries_signatures_criteria_and_trial_digests(reviews: Path) -> None:
    from dashboard.app import packet_download
    from dashboard.app import state as app_state
    from dashboard.render.packet import parse_packet

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()  # loads the catalog the page's packet is built from
    assert not at.exception

    def packet() -> dict[str, Any]:
        data = packet_download.review_packet(
            app_state.version(), "support-agent", "latest", None, None, False
        )
        return parse_packet(data.decode("utf-8"))

    release = packet()["review"]["release"]
    record = {"suite": "support-agent", "release": release, "decision": "approved",
              "time": "2026-12-02T07:30:00Z", "by": "Ada"}  # fmt: skip
    key = reviews.parent / "ada"
    write_signoff(reviews, record, sign=lambda d: sign_bytes(d, key))

    block = packet()
    assert [s["by"] for s in block["signoffs"]] == ["Ada"]
    [signature] = block["signatures"].values()
    assert signature["status_text"] == "signed by ada@example.com, verified"
    assert block["criteria"]["status"] == "criteria not registered"
    assert {f["role"] for f in block["trial_digests"]} == {"release", "base"}
    assert all(f["trials"] > 0 and not f["edited"] for f in block["trial_digests"])
    newest = max(reviews.glob("*.json"), key=lambda p: p.name)  # the sign-off just written
    assert block["ledger_head"]["file"] == newest.name


def test_a_server_key_signs_the_pages_sign_offs(reviews: Path) -> None:
    server = reviews.parent / "server"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(server)], check=True)
    public = " ".join(server.with_suffix(".pub").read_text().split()[:2])
    signers = reviews.parent / "server_signers"
    signers.write_text(f"relidash@reviews.example {public}\n")
    before = set(reviews.glob("*.json"))
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.secrets["review"] = {"sign_key": str(server)}
    at.run()
    at.switch_page("page_scripts/review.py")
    at.run()
    at.text_input(key="signoff_name").set_value("Grace")
    next(b for b in at.button if b.label == "Record the sign-off").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]

    [record] = set(reviews.glob("*.json")) - before
    with record.open("rb") as data:
        done = subprocess.run(
            ["ssh-keygen", "-Y", "verify", "-n", "relidash-signoff", "-f", str(signers),
             "-I", "relidash@reviews.example", "-s", f"{record}.sig"],
            stdin=data, capture_output=True, check=False,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_review_page_says_whether_its_criteria_were_registered(reviews: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("page_scripts/review.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    captions = [c.value.replace("\\", "") for c in at.caption]
    assert any(c.startswith("Criteria not registered: the policy") for c in captions), captions
    assert not [e.value for e in at.error if "edited after it was written" in e.value]


def test_the_review_page_flags_a_report_edited_after_it_was_written(reviews: Path) -> None:
    reports = reviews.parent / "reports" / "support-agent"
    latest = max(reports.glob("*.json"), key=lambda p: p.name)
    document = json.loads(latest.read_text(encoding="utf-8"))
    trial = next(t for c in document["cases"] for t in c.get("trials") or [])
    trial["output"] = f"{trial['output']} (edited)"
    latest.write_text(json.dumps(document), encoding="utf-8")

    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run()
    at.switch_page("page_scripts/review.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    flagged = [e.value.replace("\\", "") for e in at.error if "edited after" in e.value]
    assert len(flagged) == 1, [e.value for e in at.error]
    assert flagged[0].startswith(f"support-agent/{latest.name} (release) was edited after")
