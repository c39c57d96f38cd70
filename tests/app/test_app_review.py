"""The Review and Reviews pages (AppTest): the meeting's page shows the review's own
numbers, a sign-off made on it is recorded bound to its evidence and listed on Reviews,
and a failed write keeps what the reviewer typed.

The numbers are checked against `analysis.review.build_review` on a catalog of our own
and against `relidash summary --json` for the same file, so a page showing another
release's, another k's or a swapped number fails.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from cli_run import run_cli
from page_tables import tables
from streamlit.testing.v1 import AppTest

from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.review import build_review
from dashboard.data.catalog import open_catalog
from dashboard.data.records.signoffs import read_signoffs
from dashboard.render.compact import short_sha

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
TIMEOUT = 60
SUITE = "support-agent"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    reports = tmp_path / "reports"
    shutil.copytree(SAMPLE, reports)
    reviews = tmp_path / "reviews"
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(reviews))
    monkeypatch.delenv("RELIDASH_POLICY", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    yield reports, reviews
    st.cache_data.clear()
    st.cache_resource.clear()


def open_review(**params: str) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    at.run()  # AppTest switches pages only after a first run (the Releases page)
    at.query_params.clear()  # what the Releases page mirrored there (its k) is not the link
    at.query_params.update(params)
    at.switch_page("page_scripts/review.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert [t.value for t in at.title] == ["Release review"]
    return at


def own_review(reports: Path, release: str = "latest", base: str | None = None) -> Any:
    con = open_catalog(":memory:")
    refresh_catalog(con, reports)
    return build_review(con, SUITE, release, base, reports_dir=reports)


def test_review_page_shows_the_reviews_numbers(
    setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    reports, _ = setup
    at = open_review(suite=SUITE)
    review = own_review(reports)
    assert at.selectbox(key="review_release").value == review.release  # the latest
    assert at.selectbox(key="review_base").value == review.base  # the one before
    k = review.k
    labels = [m.label.replace("\\", "") for m in at.metric]  # md() escapes punctuation
    assert labels == ["pass@1", f"pass@{k}", f"pass^{k}", f"Δ pass^{k} vs {review.base}"]
    # the big numbers, against relidash summary --json for the same file
    code, out, _ = run_cli(["summary", str(reports), "--json", "--catalog", ":memory:"], capsys)
    assert code == 0
    (record,) = [r for r in json.loads(out)["reports"] if r["file"] == review.evidence[0].path]
    want = [
        record["pass_at_k"]["1"]["value"],
        record["pass_at_k"][str(k)]["value"],
        record["pass_hat_k"][str(k)]["value"],
    ]
    shown = [float(m.value.rstrip("%")) / 100 for m in at.metric[:3]]
    assert shown == pytest.approx(want, abs=0.0005)
    # the verdict comes first, in the banner, and names the release
    banners = [*at.success, *at.error, *at.warning]
    unescaped = [b.value.replace("\\", "") for b in banners]  # md() escapes punctuation
    assert any(review.verdict in b and review.release in b for b in unescaped), unescaped
    # provenance: the evidence files with their digests
    # (cut to fit the table; in full, as sha256sum prints them, in the block under it)
    provenance = next(t for t in tables(at) if "SHA-256" in t.columns)
    assert list(provenance["SHA-256"]) == [short_sha(e.sha256) for e in review.evidence]
    full = "\n".join(c.value for c in at.code)
    assert all(f"{e.sha256}  {e.path}" in full for e in review.evidence)


def test_a_sign_off_is_recorded_and_listed(setup: tuple[Path, Path]) -> None:
    reports, reviews = setup
    at = open_review(suite=SUITE)
    at.radio(key="signoff_decision").set_value("conditional")
    at.text_area(key="signoff_comment").set_value("ship behind the flag")
    at.text_input(key="signoff_name").set_value("Ada Lovelace")
    next(b for b in at.button if b.label == "Record the sign-off").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    stored, problems = read_signoffs(reviews)
    assert problems == []
    (signoff,) = stored
    record = signoff.record
    review = own_review(reports)
    assert (record["suite"], record["release"], record["base"]) == (
        SUITE,
        review.release,
        review.base,
    )
    assert (record["decision"], record["by"], record["identity_verified"]) == (
        "conditional",
        "Ada Lovelace",
        False,
    )
    assert record["comment"] == "ship behind the flag"
    assert record["evidence"] == [{"path": e.path, "sha256": e.sha256} for e in review.evidence]
    assert record["review"]["headline"]["pass_hat_k"]["value"] == pytest.approx(
        review.headline["pass_hat_k"]
    )
    # the Reviews page lists it with its evidence unchanged
    at.switch_page("page_scripts/reviews.py")
    at.run()
    assert [t.value for t in at.title] == ["Reviews"]
    table = tables(at)[0]
    assert list(table["decision"]) == ["conditional"]
    assert list(table["by"]) == ["Ada Lovelace"]
    assert list(table["evidence"]) == ["unchanged"]
    assert list(table["identity"]) == ["unverified"]


def test_changed_evidence_after_approval_is_flagged(
    setup: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    reports, reviews = setup
    review = own_review(reports)
    code, _, err = run_cli(
        [
            "signoff",
            str(reports),
            "--suite",
            SUITE,
            "--release",
            review.release,
            "--decision",
            "approved",
            "--by",
            "Ada",
            "--reviews",
            str(reviews),
            "--catalog",
            ":memory:",
        ],  # fmt: skip
        capsys,
    )
    assert code == 0, err
    evidence = reports / review.evidence[0].path
    evidence.write_bytes(evidence.read_bytes() + b"\n")  # same numbers, other bytes
    at = open_review(suite=SUITE)
    flagged = [e.value.replace("\\", "") for e in at.error if "was approved" in e.value]
    assert flagged and review.evidence[0].path in flagged[0], flagged
    at.switch_page("page_scripts/releases.py")
    at.run()
    assert any("was approved" in e.value for e in at.error)
    at.switch_page("page_scripts/reviews.py")
    at.run()
    assert list(tables(at)[0]["evidence"]) == ["changed"]


def test_an_unwritable_reviews_dir_keeps_what_was_typed(
    setup: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    reports, reviews = setup
    blocker = reviews.parent / "not-a-dir"
    blocker.write_text("a file where the reviews directory should be\n")
    monkeypatch.setenv("RELIDASH_REVIEWS", str(blocker / "reviews"))
    at = open_review(suite=SUITE)
    at.radio(key="signoff_decision").set_value("rejected")
    at.text_area(key="signoff_comment").set_value("regressed on refunds")
    at.text_input(key="signoff_name").set_value("Grace")
    next(b for b in at.button if b.label == "Record the sign-off").click()
    at.run()
    errors = [e.value for e in at.error]
    assert any("not recorded" in e and "rejected" in e and "refunds" in e for e in errors), errors
    assert at.text_area(key="signoff_comment").value == "regressed on refunds"


def test_review_deep_link_to_an_older_release(setup: tuple[Path, Path]) -> None:
    reports, _ = setup
    review = own_review(reports, "v1.8.0", "v1.6.0")
    at = open_review(suite=SUITE, release="v1.8.0", base="v1.6.0")
    assert at.selectbox(key="review_release").value == "v1.8.0"
    assert at.selectbox(key="review_base").value == "v1.6.0"
    assert at.metric[2].value == f"{100 * review.headline['pass_hat_k']:.1f}%"
    assert at.query_params["release"] == ["v1.8.0"] or at.query_params["release"] == "v1.8.0"
