"""One release however a file names it, cases matched across case-id schemes, and the
Review's default base, on a history written by the real multivon-eval 0.15.2, 0.18.0 and
0.20.0 (tests/fixtures/release_identity/, tools/make_identity_fixtures.py):

    file                                   names the release      case ids     time
    01 (0.18.0) support-bot@v1.4.0         model NAME@VERSION     sha256:…     2026-01-05
    02 (0.15.2) support-bot@v1.5.0         model NAME@VERSION     none         none
    03 (0.18.0) support-bot@v1.6.0         model NAME@VERSION     sha256:…     2026-02-02
    04 (0.20.0) v1.6.0                     declared target        SUP-1xx      2026-02-03
    05 (0.20.0) v1.7.0 (2 runs)            declared target        SUP-1xx      2026-02-16
    06 (0.15.2) support-bot@v1.10.0        model NAME@VERSION     none         none
    07 (0.18.0) support-bot@v1.4.1         model NAME@VERSION     sha256:…     2026-02-20

Every file holds the same six inputs, 3 runs per case (v1.7.0: 2).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from report_files import case, write_report

from dashboard.analysis.case_story import case_story, matched_ids_note
from dashboard.analysis.comparing import compare_releases
from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.matching import BY_INPUT_ACROSS_IDS
from dashboard.analysis.releases import LATEST, find_release, naming_notes, suite_releases
from dashboard.analysis.review import build_review
from dashboard.analysis.summary import report_overview
from dashboard.data.catalog import open_catalog

HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "release_identity"
SUITE = "support-agent"
TIMED = ("01", "03", "04", "05", "07")


def load(root: Path) -> Any:
    con = open_catalog(":memory:")
    refresh_catalog(con, root)
    return con


def releases_of(con: Any) -> list[str]:
    return [str(r) for r in suite_releases(report_overview(con), SUITE)["release"]]


def copy_files(tmp_path: Path, prefixes: tuple[str, ...] | None = None) -> Path:
    root = tmp_path / "reports"
    root.mkdir()
    for path in sorted(HISTORY.glob("*.json")):
        if prefixes is None or path.name[:2] in prefixes:
            shutil.copy(path, root / path.name)
    return root


@pytest.fixture
def con() -> Iterator[Any]:
    connection = load(HISTORY)
    yield connection
    connection.close()


def test_the_fixtures_are_what_each_version_wrote() -> None:
    """The history mixes both naming schemes and both case-id schemes (and none)."""
    files = {p.name[:2]: json.loads(p.read_text()) for p in HISTORY.glob("*.json")}
    assert files["01"]["model"] == "support-bot@v1.4.0" and "execution" not in files["01"]
    declared = files["04"]["execution"]["target_before"]["declaration"]["version"]
    assert (files["04"]["model"], declared) == ("support-bot", "v1.6.0")
    assert all(c["case_id"].startswith("sha256:") for c in files["01"]["cases"])
    assert all(c["case_id"].startswith("SUP-") for c in files["05"]["cases"])
    assert all("case_id" not in c for c in files["02"]["cases"])
    inputs = [sorted(c["input"] for c in f["cases"]) for f in files.values()]
    assert all(i == inputs[0] for i in inputs)


# ---- one release, however a file names it ------------------------------------------------


def test_model_and_declared_names_are_one_release(con: Any) -> None:
    overview = report_overview(con)
    # some files carry no time: the version-aware order of the normalised label
    assert releases_of(con) == ["v1.4.0", "v1.4.1", "v1.5.0", "v1.6.0", "v1.7.0", "v1.10.0"]
    v160 = overview[overview["release"] == "v1.6.0"]
    assert sorted(v160["release_source"]) == ["model@version", "target_version"]
    assert find_release(suite_releases(overview, SUITE), LATEST)["release"] == "v1.10.0"
    # the release's shown file is its later run
    shown = suite_releases(overview, SUITE)
    assert shown[shown["release"] == "v1.6.0"]["file"].item() == "04_mv0.20.0_v1.6.0.json"


def test_order_by_time_when_every_report_has_one(tmp_path: Path) -> None:
    con = load(copy_files(tmp_path, TIMED))
    # the hotfix v1.4.1 ran after v1.7.0: by time it is the latest
    assert releases_of(con) == ["v1.4.0", "v1.6.0", "v1.7.0", "v1.4.1"]
    assert build_review(con, SUITE, reports_dir=tmp_path / "reports").release == "v1.4.1"


def test_turned_off_the_schemes_stay_apart_and_sort_by_version(tmp_path: Path) -> None:
    root = copy_files(tmp_path)
    (root / "relidash.toml").write_text("[releases]\njoin_model_versions = false\n")
    con = load(root)
    assert releases_of(con) == [
        "support-bot@v1.4.0",
        "support-bot@v1.4.1",
        "support-bot@v1.5.0",
        "support-bot@v1.6.0",
        "v1.6.0",
        "v1.7.0",
        "support-bot@v1.10.0",  # never after v1.7.0 by raw label
    ]
    assert "kept apart" in " ".join(naming_notes(report_overview(con)))


def test_a_catalog_labelled_by_older_rules_is_labelled_again(tmp_path: Path) -> None:
    root = copy_files(tmp_path)
    catalog = tmp_path / "catalog.duckdb"
    con = open_catalog(str(catalog))
    refresh_catalog(con, root)
    # what an older relidash left: raw labels, and its fingerprint of the (absent) toml
    con.execute("UPDATE reports SET release = model WHERE release_source = 'model@version'")
    con.execute("UPDATE meta SET value = '' WHERE key = 'release_config'")
    refresh_catalog(con, root)
    assert releases_of(con) == ["v1.4.0", "v1.4.1", "v1.5.0", "v1.6.0", "v1.7.0", "v1.10.0"]


def test_data_page_notes_say_how_the_suite_names_releases(con: Any) -> None:
    notes = naming_notes(report_overview(con))
    assert len(notes) == 2
    assert (
        "names its releases two ways" in notes[0] and "2 files declare a target version" in notes[0]
    )
    assert "v1.6.0 has 2 files" in notes[1]
    assert notes[1].count("03_mv0.18.0_support-bot@v1.6.0.json") == 1
    assert "uses 04_mv0.20.0_v1.6.0.json" in notes[1]


def test_summary_lists_one_release_per_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, _ = run_cli(
        ["summary", str(HISTORY), "--json", "--catalog", str(tmp_path / "c.duckdb")], capsys
    )
    assert code == 0
    released = {e["release"] for e in json.loads(out)["reports"] if e["suite"] == SUITE}
    assert released == {"v1.4.0", "v1.4.1", "v1.5.0", "v1.6.0", "v1.7.0", "v1.10.0"}


# ---- cases matched across id schemes ------------------------------------------------------


def test_compare_matches_by_input_across_id_schemes(con: Any) -> None:
    result = compare_releases(con, SUITE, "v1.4.0", "v1.7.0")
    assert result.matched_by == BY_INPUT_ACROSS_IDS
    assert len(result.ledger) == 6 and not result.added and not result.removed
    assert all(d.delta is not None for d in result.deltas)
    assert result.matching_note and "share no case id" in result.matching_note
    assert "sha256:" in result.matching_note and "SUP-" in result.matching_note


def test_compare_command_says_how_cases_matched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["compare", str(HISTORY), "--suite", SUITE, "--base", "v1.4.0", "--head", "v1.7.0"]
    args += ["--catalog", str(tmp_path / "c.duckdb")]
    code, out, _ = run_cli(args, capsys)
    assert code == 0
    assert "6 cases matched" in out and "Cases matched by input" in out
    code, out, _ = run_cli([*args, "--json"], capsys)
    document = json.loads(out)
    assert (document["matched"], document["matched_by"]) == (6, BY_INPUT_ACROSS_IDS)


def test_zero_matched_cases_is_a_loud_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root = tmp_path / "reports"
    write_report(root, "svc", "v1", [case("A", 5, case_id="a"), case("B", 3, case_id="b")])
    write_report(root, "svc", "v2", [case("C", 5, case_id="c"), case("D", 3, case_id="d")])
    args = ["compare", str(root), "--suite", "svc", "--base", "v1", "--head", "v2"]
    code, out, _ = run_cli([*args, "--catalog", str(tmp_path / "c.duckdb")], capsys)
    assert code == 0
    assert "WARNING: 0 cases matched" in out


def test_review_matches_by_input_across_id_schemes(con: Any) -> None:
    review = build_review(con, SUITE, "v1.7.0", "v1.4.0", reports_dir=HISTORY)
    assert review.comparison is not None
    assert review.comparison.matched_by == BY_INPUT_ACROSS_IDS
    assert review.comparison.n_pairs == 4  # two cases are not evaluated in v1.4.0
    hat = next(d for d in review.comparison.deltas if d.key == "pass_hat_k")
    assert hat.delta is not None and hat.delta.n_pairs == 4


def test_case_story_joins_renamed_ids_by_input(con: Any) -> None:
    story = case_story(con, report_overview(con), SUITE, "SUP-101", 2)
    assert story is not None
    assert list(story["cell"]).count("—") == 0  # in every release, whichever id it had
    note = matched_ids_note(story)
    assert note is not None and "sha256:" in note and "SUP-101" in note


# ---- the review's default base -------------------------------------------------------------


def test_default_base_is_the_latest_earlier_release_with_a_delta(con: Any) -> None:
    # at k=3 (v1.10.0's own trials) v1.7.0, just before, ran 2 trials: no Δ against it
    review = build_review(con, SUITE, k=3, reports_dir=HISTORY)
    assert (review.release, review.k, review.base) == ("v1.10.0", 3, "v1.6.0")
    assert "v1.7.0" in review.base_note and not review.base_newer
    hat = next(d for d in review.comparison.deltas if d.key == "pass_hat_k")  # type: ignore[union-attr]
    assert hat.delta is not None
    # by default the review is at the suite's k (analysis/suite_k.py), 2 here, limited by
    # v1.7.0's 2 trials; the base is chosen at that k, so the release just before has a Δ
    review = build_review(con, SUITE, reports_dir=HISTORY)
    assert (review.release, review.k, review.base, review.base_note) == (
        "v1.10.0",
        2,
        "v1.7.0",
        "",
    )
    hat = next(d for d in review.comparison.deltas if d.key == "pass_hat_k")  # type: ignore[union-attr]
    assert hat.delta is not None


def test_a_base_newer_than_the_release_is_flagged(con: Any) -> None:
    review = build_review(con, SUITE, "v1.5.0", "v1.7.0", k=2, reports_dir=HISTORY)
    assert review.base_newer and "newer than the release" in review.base_note
    review = build_review(con, SUITE, "v1.7.0", "v1.5.0", k=2, reports_dir=HISTORY)
    assert not review.base_newer and review.base_note == ""


def test_review_command_says_why_its_base(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    args = ["review", str(HISTORY), "--suite", SUITE, "--out", str(tmp_path / "p.html")]
    catalog = ["--catalog", str(tmp_path / "c.duckdb")]
    code, _, err = run_cli([*args, *catalog, "--k", "3"], capsys)
    assert code == 0
    assert "Compared with v1.6.0, the latest earlier release with a computable Δ at k=3" in err
    # at the suite's k (2, the default) v1.7.0, the release before, has a Δ: nothing to say
    code, _, err = run_cli([*args, *catalog], capsys)
    assert code == 0
    assert "Compared with" not in err and "No earlier release" not in err
