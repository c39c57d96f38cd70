"""`relidash verify` against packets edited each way a forger or a careless hand would: the
visible verdict, a visible number, the evidence swapped to other releases' files or
emptied, a sign-off fabricated or left out, a damaged review block, a page that is no
packet; the untouched packet holds; and what it prints is readable (the verdict held or
flipped, moved numbers by metric and slice in percentages, the sign-offs touched, what to
do, paths only with --verbose).

The packet under test is written once by `relidash review` from sample_reports/ under a
strict policy (so its verdict is FAILED) with one recorded sign-off; each test edits a
copy. Catalogs, sign-offs and packets live under tmp paths.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli

from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.review import build_review
from dashboard.cli.main import main
from dashboard.data.catalog import open_catalog
from dashboard.render.packet import read_packet_block, render_packet
from dashboard.render.packet_diff import visible_differences

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports"
SUITE = "support-agent"
RELEASE = "v1.11.0"
RELEASE_FILE = "support-agent/2026-04-13_v1.11.0.json"
BASE_FILE = "support-agent/2026-03-30_v1.10.0.json"
OTHER_FILES = ("support-agent/2026-03-16_v1.9.0.json", "support-agent/2026-03-02_v1.8.0.json")
BLOCK = re.compile(r'(<script type="application/json" id="relidash-review">)(.*?)(</script>)', re.S)


@dataclass(frozen=True)
class Made:
    root: Path
    packet: Path
    reviews: Path
    catalog: Path
    policy: Path


def write_policy(path: Path, min_ci_low: float, k: int = 5) -> Path:
    path.write_text(
        f'[[rule]]\nname = "steady"\nmetric = "pass^k"\nk = {k}\nmin_ci_low = {min_ci_low}\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Made]:
    root = tmp_path_factory.mktemp("verify")
    with pytest.MonkeyPatch.context() as mp:  # a missed option lands here, not in $HOME
        mp.setenv("XDG_DATA_HOME", str(root / "xdg-data"))
        mp.setenv("XDG_CACHE_HOME", str(root / "xdg-cache"))
        m = Made(
            root,
            root / "packet.html",
            root / "reviews",
            root / "catalog.duckdb",
            write_policy(root / "strict.toml", 0.9),
        )
        common = ["--suite", SUITE, "--release", RELEASE, "--policy", str(m.policy)]
        common += ["--reviews", str(m.reviews), "--catalog", str(m.catalog)]
        signed = ["signoff", str(SAMPLES), *common, "--decision", "rejected", "--by", "Bob"]
        assert main([*signed, "--comment", "too flaky"]) == 0
        assert main(["review", str(SAMPLES), *common, "--out", str(m.packet)]) == 0
        yield m


def verify(
    capsys: pytest.CaptureFixture[str], made: Made, packet: Path, *extra: str
) -> tuple[int, str, str]:
    argv = ["verify", str(packet), str(SAMPLES), "--reviews", str(made.reviews)]
    return run_cli([*argv, "--catalog", str(made.catalog), *extra], capsys)


def edited(made: Made, name: str, text: str) -> Path:
    path = made.root / f"{name}.html"
    path.write_text(text, encoding="utf-8")
    return path


def with_block(html: str, doc: Any) -> str:
    return BLOCK.sub(lambda m: m.group(1) + json.dumps(doc) + m.group(3), html, count=1)


def block_of(made: Made) -> dict[str, Any]:
    return block_of_packet(made.packet)


def block_of_packet(packet: Path) -> dict[str, Any]:
    doc = read_packet_block(packet.read_text(encoding="utf-8"))
    assert doc is not None
    return doc


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_readable_failure(code: int, out: str, err: str, cause: str) -> None:
    assert code == 1, out + err
    assert "Traceback" not in out + err
    assert f"does NOT hold: {cause}" in err
    assert "What to do:" in out
    # no raw file path or digest without --verbose
    assert RELEASE_FILE not in out and sha256(SAMPLES / RELEASE_FILE) not in out


# ---- the untouched packet ----------------------------------------------------------------


def test_the_untouched_packet_holds_and_says_so_without_paths(
    capsys: pytest.CaptureFixture[str], made: Made
) -> None:
    assert block_of(made)["review"]["verdict"] == "FAILED"  # the strict policy fails it
    code, out, err = verify(capsys, made, made.packet)
    assert code == 0, out + err
    assert "Verdict: FAILED, as when written (held)." in out.splitlines()
    assert "the 2 evidence file(s) and the 1 sign-off(s) shown match" in out
    assert "the packet holds" in err
    assert RELEASE_FILE not in out and str(made.reviews) not in out

    code, out, err = verify(capsys, made, made.packet, "--verbose")
    assert code == 0, out + err
    assert f"evidence: release: {RELEASE_FILE}: {sha256(SAMPLES / RELEASE_FILE)}" in out
    assert f"evidence: base: {BASE_FILE}: {sha256(SAMPLES / BASE_FILE)}" in out


# ---- the visible document --------------------------------------------------------------------


def test_a_visible_verdict_changed_from_failed_to_passed_does_not_hold(
    capsys: pytest.CaptureFixture[str], made: Made
) -> None:
    html = made.packet.read_text(encoding="utf-8")
    forged = html.replace(
        'class="verdict FAILED"><h1>FAILED</h1>', 'class="verdict PASSED"><h1>PASSED</h1>'
    )
    forged = forged.replace(f"{RELEASE} — FAILED</title>", f"{RELEASE} — PASSED</title>")
    assert forged.count("PASSED") == html.count("PASSED") + 3  # the banner, its class, the title
    code, out, err = verify(capsys, made, edited(made, "verdict", forged))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert "Verdict: FAILED, as when written (held)." in out.splitlines()
    assert 'verdict banner: shows "PASSED" where relidash renders "FAILED"' in out
    assert "what it shows is not what relidash renders from its data" in out

    doc = block_of(made)  # the block says PASSED as well
    doc["review"]["verdict"] = doc["review"]["rules"][0]["verdict"] = "PASSED"
    code, out, err = verify(capsys, made, edited(made, "verdict-both", with_block(forged, doc)))
    assert_readable_failure(code, out, err, "the packet was changed")
    line = "Verdict: the packet says PASSED; relidash computes FAILED from the same report bytes."
    assert line in out.splitlines()
    assert "its numbers are not the ones relidash computes from the same report bytes" in out


def test_a_visible_number_changed_does_not_hold(
    capsys: pytest.CaptureFixture[str], made: Made
) -> None:
    html = made.packet.read_text(encoding="utf-8")
    headline = html.index('<section id="headline">')
    # the third big cell of the headline is pass^k with its CI
    spans = [m.start() for m in re.finditer('<span class="big">', html[headline:])]
    start = headline + spans[2] + len('<span class="big">')
    end = html.index("</span>", start)
    true_text = html[start:end]
    forged = html[:start] + "97.0% [93.3–100.0]" + html[end:]
    code, out, err = verify(capsys, made, edited(made, "number", forged))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert (
        f'Headline section: shows "97.0% [93.3–100.0]" where relidash renders "{true_text}"' in out
    )


def test_a_hidden_banner_is_a_markup_difference(made: Made) -> None:
    html = made.packet.read_text(encoding="utf-8")
    forged = html.replace(
        '<header class="verdict FAILED">', '<header class="verdict FAILED" style="display:none">'
    )
    assert forged != html
    [difference] = visible_differences(forged, html)
    assert difference.region == "verdict banner" and difference.markup_only
    assert visible_differences(html, html) == []


# ---- the evidence ----------------------------------------------------------------------------


def test_evidence_swapped_to_other_releases_files_does_not_hold(
    capsys: pytest.CaptureFixture[str], made: Made
) -> None:
    html = made.packet.read_text(encoding="utf-8")
    doc = block_of(made)
    forged = html
    # every mention, visible and in the block, names another release's file and its real bytes
    for entry, other in zip(doc["review"]["evidence"], OTHER_FILES, strict=True):
        real = SAMPLES / other
        for field, value in (("path", other), ("sha256", sha256(real))):
            forged = forged.replace(entry[field], value)
        entry.update(path=other, sha256=sha256(real), bytes=real.stat().st_size)
    code, out, err = verify(capsys, made, edited(made, "swapped", with_block(forged, doc)))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert "its evidence list is not the files of the reviewed release(s)" in out
    assert "2 of its files are not the reviewed release's or its base's" in out


def test_evidence_emptied_does_not_hold(capsys: pytest.CaptureFixture[str], made: Made) -> None:
    doc = block_of(made)
    doc["review"]["evidence"] = []
    forged = with_block(made.packet.read_text(encoding="utf-8"), doc)
    code, out, err = verify(capsys, made, edited(made, "emptied", forged))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert "it names no evidence file" in out


# ---- the sign-offs ----------------------------------------------------------------------------


def _review_and_records(made: Made) -> tuple[Any, dict[str, Any]]:
    con = open_catalog(":memory:")
    try:
        refresh_catalog(con, SAMPLES)
        review = build_review(con, SUITE, RELEASE, policy_file=made.policy, reports_dir=SAMPLES)
    finally:
        con.close()
    return review, block_of(made)


def test_a_fabricated_verified_signoff_does_not_hold(
    capsys: pytest.CaptureFixture[str], made: Made
) -> None:
    review, doc = _review_and_records(made)
    [real] = doc["signoffs"]
    fake = {
        **real,
        "by": "Chief Risk Officer",
        "decision": "approved",
        "comment": "approved for release",
        "identity_verified": True,
        "identity": {"email": "cro@example.com", "issuer": "https://login.example.com"},
    }
    # as relidash itself would draw it: the block and the visible table agree
    forged = render_packet(review, signoffs=[real, fake], generated_at=doc["generated_at"])
    assert "verified: cro@example.com" in forged
    code, out, err = verify(capsys, made, edited(made, "fabricated", forged))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert "it shows a sign-off that is not a record in the reviews directory" in out
    assert (
        "Sign-off shown but not recorded: approved by Chief Risk Officer (identity verified)" in out
    )

    # the same row added to the visible table only
    html = made.packet.read_text(encoding="utf-8")
    row = "<tr><td>2026-04-14T10:00:00Z</td><td>Chief Risk Officer</td><td>verified</td>"
    row += "<td><b>approved</b></td><td></td><td>the files of this packet</td></tr>"
    table_end = html.index("</tbody>", html.index('<section id="signoffs"'))
    visible_only = html[:table_end] + row + html[table_end:]
    code, out, err = verify(capsys, made, edited(made, "fabricated-visible", visible_only))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert re.search(
        r'Sign-offs section: shows ".*Chief Risk Officer.*", which relidash does not render', out
    )


def test_a_signoff_left_out_does_not_hold(capsys: pytest.CaptureFixture[str], made: Made) -> None:
    review, _ = _review_and_records(made)
    # a packet written later, without the rejection recorded before it
    forged = render_packet(review, signoffs=[], generated_at="2030-01-01T00:00:00Z")
    code, out, err = verify(capsys, made, edited(made, "left-out", forged))
    assert_readable_failure(code, out, err, "the packet was changed")
    assert "Sign-off recorded but left out of the packet: rejected by Bob (name typed)" in out


def test_signoffs_with_no_reviews_directory_cannot_be_checked(
    capsys: pytest.CaptureFixture[str], made: Made
) -> None:
    argv = ["verify", str(made.packet), str(SAMPLES), "--catalog", str(made.catalog)]
    code, out, err = run_cli([*argv, "--reviews", str(made.root / "nowhere")], capsys)
    assert code == 2, out + err
    assert "shows 1 sign-off(s)" in err and "--reviews" in err and "Traceback" not in err


# ---- files that are not a readable packet --------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("bad-json", "its review block is not valid JSON"),
        ("no-release", "its review block has no valid 'review.release'"),
        ("evidence-text", "its review block has no valid 'review.evidence[0]'"),
        ("review-list", "its review block has no 'review' object"),
        ("no-block", "not a relidash review packet"),
    ],
)
def test_a_damaged_block_or_a_page_that_is_no_packet_exits_2(
    capsys: pytest.CaptureFixture[str], made: Made, kind: str, says: str
) -> None:
    html = made.packet.read_text(encoding="utf-8")
    doc = block_of(made)
    if kind == "bad-json":
        text = BLOCK.sub(lambda m: m.group(1) + '{"review": {' + m.group(3), html, count=1)
    elif kind == "no-release":
        del doc["review"]["release"]
        text = with_block(html, doc)
    elif kind == "evidence-text":
        doc["review"]["evidence"] = ["abc"]
        text = with_block(html, doc)
    elif kind == "review-list":
        text = with_block(html, {**doc, "review": []})
    else:
        text = "<!doctype html><html><head><title>v1.11.0</title></head><body><h1>PASSED</h1></body></html>"
    path = edited(made, kind, text)
    code, out, err = verify(capsys, made, path)
    assert code == 2, out + err
    assert says in err and str(path) in err and "Traceback" not in out + err


def test_the_exit_codes_are_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["verify", "--help"], capsys)
    assert code == 0
    assert "exit status:" in out
    for code_line in (
        "  0  the packet holds",
        "  1  it does not hold",
        "  2  it cannot be checked",
    ):
        assert code_line in out


# ---- when the reports changed: readable -----------------------------------------------------


def flip_passes(report: Path, cases: int) -> None:
    """Make the last trial of `cases` fully passing cases fail, consistently."""
    doc = json.loads(report.read_text(encoding="utf-8"))
    flipped = 0
    for case in doc["cases"]:
        trials = case.get("trials") or []
        if (
            flipped < cases
            and case.get("status") == "passed"
            and case["pass_count"] == case["runs"] == len(trials)
        ):
            case["pass_count"] -= 1
            case["run_pass_rate"] = case["pass_count"] / case["runs"]
            case.update(passed=False, status="failed_quality", is_flaky=True)
            trials[-1]["status"] = "failed_quality"
            flipped += 1
    assert flipped == cases
    report.write_text(json.dumps(doc, indent=2), encoding="utf-8")


def test_changed_reports_flip_the_verdict_and_name_the_moved_numbers_and_signoffs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    reports, rdir, packet = tmp_path / "reports", tmp_path / "reviews", tmp_path / "p.html"
    shutil.copytree(SAMPLES, reports)
    policy = write_policy(tmp_path / "policy.toml", 0.5, k=4)  # passes: ci_low 50.7%
    common = ["--suite", SUITE, "--policy", str(policy), "--reviews", str(rdir)]
    common += ["--catalog", ":memory:"]
    code, _, err = run_cli(
        ["signoff", str(reports), *common, "--decision", "approved", "--by", "Ada"], capsys
    )
    assert code == 0, err
    code, _, err = run_cli(["review", str(reports), *common, "--out", str(packet)], capsys)
    assert code == 0, err
    flip_passes(reports / RELEASE_FILE, 1)

    argv = ["verify", str(packet), str(reports), "--reviews", str(rdir), "--catalog", ":memory:"]
    code, out, err = run_cli(argv, capsys)
    assert code == 1, out + err
    lines = out.splitlines()
    # the CI now straddles the threshold: UNDECIDED, not a pass
    assert "Verdict: FLIPPED, PASSED when written, UNDECIDED now." in lines
    # the policy judges at k = 4, so the review is at the suite's k, 4
    assert "The reports changed since: 1 of the packet's 2 report files (the release's)" in out
    assert re.search(
        r"^    pass\^4: \d+\.\d% \[[\d.]+–[\d.]+\] → \d+\.\d% \[[\d.]+–[\d.]+\]$", out, re.M
    )
    assert re.search(r'^    slice ".+" Δ: [+-]\d+\.\d pts .* → -\d+\.\d pts ', out, re.M)
    assert re.search(
        r'^    rule "steady.*": PASSED \(\d+\.\d%\) → UNDECIDED \(\d+\.\d%\)$', out, re.M
    )
    assert "Sign-offs this touches (made on report bytes that have changed since):" in lines
    assert "    approved by Ada (name typed)," in out
    assert "Review the release again on the reports as they are now" in out
    assert "the reports changed" in err and "the packet was changed" not in err
    assert RELEASE_FILE not in out

    code, out, err = run_cli([*argv, "--verbose"], capsys)
    assert code == 1
    assert f"changed: {RELEASE_FILE}: " in out and "moved: verdict: PASSED -> UNDECIDED" in out

    # verified by another relidash, the moved numbers may be its own: it says so, and
    # which relidash would check what the packet shows; it still does not hold
    then = block_of_packet(packet)["review"]["relidash_version"]
    monkeypatch.setattr("dashboard.data.catalog.relidash_version", lambda: "99.0.0")
    code, out, err = run_cli(argv, capsys)
    assert code == 1
    assert (
        f"It was written by relidash {then}; this is relidash 99.0.0, whose numbers or layout "
        "may differ." in out
    )
    assert f"    To check what it shows, verify it with relidash {then}." in out.splitlines()


def test_another_relidash_says_nothing_of_versions_when_the_packet_holds(
    capsys: pytest.CaptureFixture[str], made: Made, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("dashboard.data.catalog.relidash_version", lambda: "99.0.0")
    code, out, err = verify(capsys, made, made.packet)
    assert code == 0, out + err
    assert "99.0.0" not in out and "verify it with relidash" not in out


def test_a_release_added_after_the_packet_leaves_it_holding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chart and the release list are the suite's as the packet was written: a later
    release changes neither what relidash renders for it nor the verdict."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    reports, packet = tmp_path / "reports", tmp_path / "p.html"
    shutil.copytree(SAMPLES, reports)
    latest = reports / RELEASE_FILE
    kept = latest.read_bytes()
    latest.unlink()  # the packet is written before v1.11.0 exists
    common = ["--suite", SUITE, "--reviews", str(tmp_path / "reviews"), "--catalog", ":memory:"]
    code, _, err = run_cli(["review", str(reports), *common, "--out", str(packet)], capsys)
    assert code == 0, err
    doc = read_packet_block(packet.read_text(encoding="utf-8"))
    assert doc is not None and doc["review"]["release"] == "v1.10.0"
    assert RELEASE not in doc["suite_releases"]

    latest.write_bytes(kept)
    argv = ["verify", str(packet), str(reports), *common[2:]]
    code, out, err = run_cli(argv, capsys)
    assert code == 0, out + err
    assert "the packet holds" in err

    # the same packet without the list the block carries is drawn with v1.11.0 and differs
    del doc["suite_releases"]
    old_style = tmp_path / "old.html"
    old_style.write_text(with_block(packet.read_text(encoding="utf-8"), doc), encoding="utf-8")
    code, out, err = run_cli(["verify", str(old_style), str(reports), *common[2:]], capsys)
    assert code == 1, out + err
    assert "Provenance section" in out
