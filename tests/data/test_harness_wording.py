"""An UNKNOWN says why in the words of the harness that wrote the report.

multivon-eval records more trials with `--runs`, Inspect with `--epochs`; a number that
is UNKNOWN because k exceeds the trials recorded names the harness's own option, on every
surface that estimates on the fly: the Slices page, the pass-k curve under the Releases
table, the Releases table under the agent-errors policy, the Gates table, a rule of
`relidash gate`, and `compare`'s deltas. The words come from one place
(dashboard/data/formats/unknown_wording.py), and multivon-eval's are the ones the stats
floor writes, which mirror multivon-eval's own.

A directory holding both harnesses' suites is loaded once; every reason for the Inspect
suite names `--epochs` and samples and never `--runs` or multivon-eval, and every reason
for the multivon-eval suite stays multivon-eval's.
"""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from app_env import app_serving
from streamlit.testing.v1 import AppTest

from dashboard.analysis import loading
from dashboard.analysis.comparing import compare_releases
from dashboard.analysis.gating import gate_table, run_gate
from dashboard.analysis.policy import GateRule
from dashboard.analysis.releases import passk_curve, release_table
from dashboard.analysis.slices import slice_metrics
from dashboard.analysis.summary import report_overview
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.formats import INSPECT, MULTIVON
from dashboard.data.formats.unknown_wording import k_beyond_runs, no_cases
from dashboard.render.formatting import WORD_JOINER
from dashboard.stats import METRIC_PASS_AT_K, METRIC_PASS_HAT_K, suite_pass_k

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "dashboard" / "app" / "main.py"
INSPECT_SUITE, MULTIVON_SUITE = "ticket_triage", "support-agent"
MULTIVON_FILES = ("mv-0.16.0_runs3.json", "mv-0.17.0_skipped-case_runs5.json")
K = 9  # more than any report of either suite records


def build(root: Path) -> Path:
    shutil.copytree(REPO / "tests" / "fixtures" / "inspect", root / "inspect")
    for name in MULTIVON_FILES:
        shutil.copyfile(REPO / "tests" / "fixtures" / name, root / name)
    return root


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    connection = open_catalog(MEMORY)
    loading.refresh_catalog(connection, build(tmp_path_factory.mktemp("mixed") / "reports"))
    yield connection
    connection.close()


def in_inspect_words(reason: str) -> bool:
    return (
        reason.startswith("UNKNOWN — k=")
        and f"--epochs >= {K}" in reason
        and "sample" in reason
        and "--runs" not in reason
        and "multivon-eval" not in reason
    )


def in_multivon_words(reason: str) -> bool:
    return (
        reason.startswith("UNKNOWN — k=")
        and f"--runs >= {K}" in reason
        and "multivon-eval does not extrapolate." in reason
        and "--epochs" not in reason
    )


WORDS = {INSPECT_SUITE: in_inspect_words, MULTIVON_SUITE: in_multivon_words}


# ---- one place: multivon-eval's words are the stats floor's -----------------------------


def test_no_cases_words() -> None:
    (result,) = suite_pass_k(
        np.array([], dtype=np.int64), np.array([], dtype=np.int64), [1], METRIC_PASS_AT_K
    )
    assert no_cases(MULTIVON) == result.unknown_reason
    assert no_cases(INSPECT).startswith("UNKNOWN — no sample has a scored epoch")


def test_multivon_words_are_the_stats_text() -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = rng.integers(1, 6, size=int(rng.integers(1, 8)))
        c = rng.integers(0, n + 1)
        k = int(n.min()) + int(rng.integers(1, 4))
        for metric in (METRIC_PASS_AT_K, METRIC_PASS_HAT_K):
            (result,) = suite_pass_k(n, c, [k], metric)
            uneven = bool((n != n.min()).any())
            assert k_beyond_runs(MULTIVON, k, int(n.min()), uneven) == result.unknown_reason


def test_inspect_words_name_epochs_and_samples() -> None:
    assert k_beyond_runs(INSPECT, 5, 3, False) == (
        "UNKNOWN — k=5 exceeds the 3 scored epochs of each sample; rerun with --epochs >= 5 "
        "or pass k <= 3. relidash does not extrapolate."
    )
    assert "1 scored epoch of the shortest sample" in k_beyond_runs(INSPECT, 2, 1, True)


# ---- every surface that estimates on the fly ----------------------------------------------


@pytest.mark.parametrize("suite", [INSPECT_SUITE, MULTIVON_SUITE])
def test_slices_speak_the_suites_harness(con: Any, suite: str) -> None:
    overview = report_overview(con)
    dim = "priority" if suite == INSPECT_SUITE else "risk_tier"
    table = slice_metrics(con, overview, suite, dim, K)
    reasons = list(table["unknown_reason"])
    assert reasons and all(WORDS[suite](r) for r in reasons), reasons


@pytest.mark.parametrize("suite", [INSPECT_SUITE, MULTIVON_SUITE])
def test_passk_curve_speaks_the_reports_harness(con: Any, suite: str) -> None:
    overview = report_overview(con)
    for report_id in overview[overview["suite"] == suite]["report_id"]:
        curve = passk_curve(con, int(report_id), K)
        reasons = list(curve[curve["k"] == K]["unknown_reason"])
        assert len(reasons) == 2 and all(WORDS[suite](r) for r in reasons), reasons


@pytest.mark.parametrize("suite", [INSPECT_SUITE, MULTIVON_SUITE])
def test_release_table_estimated_on_the_fly_speaks_the_harness(con: Any, suite: str) -> None:
    table = release_table(con, report_overview(con), suite, K, count_agent_errors=True)
    reasons = list(table["pass_hat_k_unknown"]) + list(table["pass_at_k_unknown"])
    assert reasons and all(WORDS[suite](r) for r in reasons), reasons


@pytest.mark.parametrize("suite", [INSPECT_SUITE, MULTIVON_SUITE])
def test_gates_speak_the_harness(con: Any, suite: str) -> None:
    overview = report_overview(con)
    table = gate_table(con, overview, suite, K, [(None, 0.5)])
    assert set(table["verdict"]) == {"UNKNOWN"}
    assert all(WORDS[suite](r) for r in table["reason"]), list(table["reason"])
    release = str(overview[overview["suite"] == suite]["release"].iloc[-1])
    report = run_gate(con, suite, release, [GateRule(METRIC_PASS_HAT_K, K, 0.5, "ci_low")])
    assert all(WORDS[suite](r.verdict.reason) for r in report.results)


def test_compare_speaks_the_harness(con: Any) -> None:
    inspect = compare_releases(con, INSPECT_SUITE, "v2.1.0", "v2.2.0", k=K)
    multivon = compare_releases(con, MULTIVON_SUITE, "v0.16.0-fixture", "v0.17.0-fixture", k=K)
    for comparison, words in ((inspect, in_inspect_words), (multivon, in_multivon_words)):
        reasons = [d.unknown_reason for d in comparison.deltas if d.k == K]
        assert len(reasons) == 2 and all(words(r) for r in reasons), reasons
    assert "matched sample" in inspect.deltas[-1].unknown_reason


# ---- the pages ----------------------------------------------------------------------------


@pytest.fixture
def app_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    root = build(tmp_path / "reports")
    with app_serving(root, tmp_path / "reviews", monkeypatch):
        yield root


def page_text(at: AppTest) -> str:
    """The page's captions, Markdown, HTML tables (unescaped) and grids, as text. Captions
    and Markdown are read as a reader sees them: without md()'s escapes and word joiners."""
    parts = [
        re.sub(r"\\(.)", r"\1", str(e.value)).replace(WORD_JOINER, "")
        for e in [*at.caption, *at.markdown]
    ]
    parts += [html.unescape(h.value) for h in at.html]
    for frame in at.dataframe:
        parts += [str(v) for v in frame.value.to_numpy().ravel()]
    return "\n".join(str(p) for p in parts)


def test_slices_and_releases_pages_speak_inspect(app_on: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run(timeout=60)
    at.query_params.update({"suite": INSPECT_SUITE, "k": "8", "release": "v2.0.0"})
    for page in ("slices", "releases"):
        at.switch_page(f"page_scripts/{page}.py")
        at.run(timeout=60)
        assert not at.exception, (page, [e.value for e in at.exception])
        text = page_text(at)
        assert "rerun with --epochs >= " in text, page
        assert "--runs" not in text and "multivon-eval does not extrapolate" not in text, page
