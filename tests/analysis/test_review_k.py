"""A review asked for at a k other than the suite's shows the paired Δ at that k.

At the suite's own k a Δ computed at the wrong k cannot be told apart, so these tests
review sample_reports/'s support-agent release at k = 3 (its suite k is 5) and check the
Δ the review carries and shows (the Review page's big numbers and table, the packet's
table and block) against `relidash compare --k 3`, and each slice's against compare's
for that tag at k = 3.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli

from dashboard.analysis.comparing import compare_releases
from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.review import Review, build_review, review_json
from dashboard.data.catalog import open_catalog
from dashboard.render import formatting, packet, review_tables

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports"
SUITE = "support-agent"
RELEASE = "v1.11.0"
BASE = "v1.10.0"
K = 3  # not the suite's k (5, the release's run count)
MEMORY = ":memory:"
DELTA_FIELDS = (
    "metric",
    "k",
    "base",
    "head",
    "delta",
    "ci_low",
    "ci_high",
    "n_pairs",
    "unknown_reason",
)


@pytest.fixture(autouse=True)
def _isolated_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(scope="module")
def con() -> Iterator[Any]:
    connection = open_catalog(MEMORY)
    refresh_catalog(connection, SAMPLES)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def review(con: Any) -> Review:
    return build_review(con, SUITE, RELEASE, BASE, K, reports_dir=SAMPLES)


def compared_at(capsys: pytest.CaptureFixture[str], k: int) -> dict[str, Any]:
    argv = ["compare", str(SAMPLES), "--suite", SUITE, "--base", BASE, "--head", RELEASE]
    code, out, err = run_cli([*argv, "--k", str(k), "--json", "--catalog", MEMORY], capsys)
    assert code == 0, err
    deltas: dict[str, Any] = json.loads(out)["deltas"]
    return deltas


def test_the_k_asked_for_is_not_the_suites(con: Any, review: Review) -> None:
    """Otherwise the tests below could not tell the two k apart."""
    assert build_review(con, SUITE, RELEASE, BASE, reports_dir=SAMPLES).k == 5 and review.k == K
    at_5, at_k = (
        {d.key: d.delta.delta for d in compare_releases(con, SUITE, BASE, RELEASE, k=k).deltas}
        for k in (5, K)
    )
    assert at_k["pass_hat_k"] != at_5["pass_hat_k"] and at_k["pass_at_k"] != at_5["pass_at_k"]


def test_review_json_delta_is_compares_at_that_k(
    review: Review, capsys: pytest.CaptureFixture[str]
) -> None:
    compared = compared_at(capsys, K)
    doc = review_json(review)
    assert doc["k"] == K
    assert set(doc["delta"]) == set(compared)
    for key, delta in compared.items():
        assert {f: doc["delta"][key][f] for f in DELTA_FIELDS} == {
            f: delta[f] for f in DELTA_FIELDS
        }, key
    assert compared["pass_at_k"]["k"] == compared["pass_hat_k"]["k"] == K


def test_review_page_shows_the_delta_at_that_k(
    review: Review, capsys: pytest.CaptureFixture[str]
) -> None:
    compared = compared_at(capsys, K)

    def text(key: str, minus: str = "-") -> str:
        d = compared[key]
        return formatting.delta_text(
            d["delta"], d["ci_low"], d["ci_high"], d["n_pairs"], minus=minus
        )

    big = review_tables.headline(review)[3]
    assert big["label"] == f"Δ pass^{K} vs {BASE}"
    assert big["detail"] == text("pass_hat_k")
    assert big["value"] == f"{formatting.points(compared['pass_hat_k']['delta'])} pts"
    table = review_tables.deltas_table(review)
    assert list(table["Δ (paired, 95% CI)"]) == [
        text(key) for key in ("pass_at_1", "pass_at_k", "pass_hat_k")
    ]


def test_packet_shows_the_delta_at_that_k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "packet.html"
    argv = ["review", str(SAMPLES), "--suite", SUITE, "--release", RELEASE, "--base", BASE]
    argv += ["--k", str(K), "--reviews", str(tmp_path / "reviews"), "--out", str(out)]
    code, _, err = run_cli([*argv, "--catalog", MEMORY], capsys)
    assert code == 0, err
    compared = compared_at(capsys, K)
    html = out.read_text(encoding="utf-8")
    block = packet.read_packet_block(html)
    assert block is not None and block["review"]["k"] == K
    for key, delta in compared.items():
        assert {f: block["review"]["delta"][key][f] for f in DELTA_FIELDS} == {
            f: delta[f] for f in DELTA_FIELDS
        }, key
        shown = packet.delta_text(
            delta["delta"], delta["ci_low"], delta["ci_high"], delta["n_pairs"]
        )
        assert f">{shown}<" in html, key


def test_each_slice_delta_is_compares_for_that_tag_at_that_k(con: Any, review: Review) -> None:
    assert review.slices  # the suite's cases carry tags
    for s in review.slices:
        c = compare_releases(con, SUITE, BASE, RELEASE, k=K, tag=s.tag)
        hat = next(d for d in c.deltas if d.key == "pass_hat_k")
        assert hat.k == K
        expected = (
            (hat.delta.delta, hat.delta.ci_low, hat.delta.ci_high, hat.delta.n_pairs)
            if hat.delta
            else (None, None, None, 0)
        )
        assert (s.delta, s.ci_low, s.ci_high, s.pairs) == expected, s.tag
