"""An Inspect log whose scorer is NaN for every sample (Inspect's "unscored" sentinel).

Inspect leaves NaN scores out: its metrics skip unscored samples (NaN when none is left)
and its reducers skip unscored epochs (`inspect_ai/_eval/task/results.py`,
`scorer/_reducer/reducer.py`). relidash does the same: an unscored epoch is a skipped
trial, a sample with no scored epoch is not evaluated, and a log with no evaluated sample
loads with every pass@k and pass^k UNKNOWN, a reason that says the scorer scored nothing,
and a report-scope problem; the other logs load with their numbers. The logs are real
fixtures (a `.eval` and a JSON log) with every value of the chosen scorer set to NaN in
their summaries, sample files and reductions, as Inspect writes an unscored run.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import summaries
from app_env import app_serving
from streamlit.testing.v1 import AppTest
from test_inspect_input import members_of, write_eval

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.load.transcripts import read_case_trials

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "dashboard" / "app" / "main.py"
FIXTURES = REPO / "tests" / "fixtures" / "inspect" / "ticket_triage"
GOOD_EVAL = FIXTURES / "v2.0.0_epochs3.eval"
GOOD_JSON = FIXTURES / "v2.1.0_epochs5_json.json"
SCORER = "resolution"  # the fixtures' first scorer, the one relidash reads
NAN = float("nan")


def unscored(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample (or summary) whose chosen scorer gave NaN, as Score.unscored() writes."""
    score = (sample.get("scores") or {}).get(SCORER)
    if isinstance(score, dict):
        score["value"] = NAN
    return sample


def unscored_reductions(reductions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for reduction in reductions:
        if reduction.get("scorer") == SCORER:
            for sample in reduction.get("samples") or []:
                sample["value"] = NAN
    return reductions


def unscored_eval(path: Path) -> None:
    members = members_of(GOOD_EVAL)
    out = {}
    for name, raw in members.items():
        data = json.loads(raw)
        if name == "summaries.json" or name.startswith("_journal/summaries/"):
            data = [unscored(s) for s in data]
        elif name.startswith("samples/"):
            data = unscored(data)
        elif name == "reductions.json":
            data = unscored_reductions(data)
        out[name] = json.dumps(data).encode()  # bare NaN, as Inspect writes
    write_eval(path, out)


def unscored_json(path: Path) -> None:
    data = json.loads(GOOD_JSON.read_text(encoding="utf-8"))
    data["samples"] = [unscored(s) for s in data["samples"]]
    data["reductions"] = unscored_reductions(data.get("reductions") or [])
    path.write_text(json.dumps(data), encoding="utf-8")


def test_an_all_unscored_log_loads_unknown_and_the_rest_loads(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    shutil.copytree(FIXTURES, root / "good")
    unscored_eval(root / "unscored.eval")
    unscored_json(root / "unscored.json")
    assert "NaN" in (root / "unscored.json").read_text(encoding="utf-8")

    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    document = summaries.summary_json(con)

    by_file = {r["file"]: r for r in document["reports"]}
    assert set(by_file) == {f"good/{p.name}" for p in FIXTURES.iterdir()} | {
        "unscored.eval",
        "unscored.json",
    }
    for good in FIXTURES.iterdir():
        assert by_file[f"good/{good.name}"]["pass_at_k"]["1"]["value"] is not None
    problems = {p["file"]: p for p in document["problems"]}
    assert set(problems) == {"unscored.eval", "unscored.json"}, document["problems"]
    for name in ("unscored.eval", "unscored.json"):
        report = by_file[name]
        assert report["cases"]["evaluated"] == 0
        cases = report["cases"]
        assert cases["skipped"] > 0
        assert cases["skipped"] + cases["errored"] == cases["total"]
        for metric in ("pass_at_k", "pass_hat_k"):
            for k, cell in report[metric].items():
                assert cell["value"] is None, (name, metric, k)
                assert cell["unknown_reason"].startswith(
                    f"UNKNOWN — no sample has an epoch scored by {SCORER!r}: "
                ), cell["unknown_reason"]
                assert "left unscored (NaN" in cell["unknown_reason"]
        problem = problems[name]
        assert problem["scope"] == "report"
        assert problem["reason"].startswith(f"its scorer {SCORER!r} scored no sample: ")

    # the case view shows the epochs, each marked unscored, as it does any sample
    (report_id,) = con.execute(
        "SELECT report_id FROM reports WHERE file = 'unscored.eval'"
    ).fetchone()
    trials = read_case_trials(con, report_id, 1)
    assert len(trials) >= 1 and set(trials["status"]) == {"skipped"}
    assert all(f"[score {SCORER}: NaN, unscored]" in text for text in trials["output"])
    con.close()


def test_nan_epochs_are_left_out_as_inspects_reducers_leave_them(tmp_path: Path) -> None:
    """One sample's epochs all NaN, another's first epoch NaN: the first is not evaluated,
    the second counts its other epochs, as Inspect's pass_at reducer does."""
    members = members_of(GOOD_EVAL)
    epoch_summaries = json.loads(members["summaries.json"])
    ids = list(dict.fromkeys(s["id"] for s in epoch_summaries))
    gone, short = ids[0], ids[1]
    for s in epoch_summaries:
        if s["id"] == gone or (s["id"] == short and s["epoch"] == 1):
            unscored(s)
    root = tmp_path / "reports"
    root.mkdir()
    write_eval(
        root / "partly.eval", {**members, "summaries.json": json.dumps(epoch_summaries).encode()}
    )
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    rows = con.execute("SELECT case_id, status, n FROM cases ORDER BY case_idx").fetchall()
    document = summaries.summary_json(con)
    con.close()
    by_id = {case_id: (status, n) for case_id, status, n in rows}
    epochs = max(s["epoch"] for s in epoch_summaries)
    assert by_id[str(gone)] == ("skipped", None)
    assert by_id[str(short)][1] == epochs - 1
    assert document["problems"] == []  # some samples are scored: nothing to report
    (report,) = document["reports"]
    assert report["cases"]["evaluated"] == len(ids) - 1
    cell = report["pass_hat_k"][str(epochs)]
    assert cell["value"] is None and "1 of" in cell["unknown_reason"]
    assert not math.isnan(report["pass_at_k"]["1"]["value"])


# ---- the pages -----------------------------------------------------------------------------

PAGE_TITLES = {
    "releases": "Releases",
    "slices": "Slices",
    "lottery": "Lottery cases",
    "case": "Case",
    "gates": "Gates",
    "data": "Data",
    "review": "Release review",
}


@pytest.fixture
def app_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """The fixtures and, as the suite's latest release, a log its scorer never scored."""
    root = tmp_path / "reports"
    shutil.copytree(FIXTURES, root / "good")
    unscored_eval(root / "unscored.eval")
    members = members_of(root / "unscored.eval")
    header = json.loads(members["header.json"])
    header["eval"]["metadata"] = {**(header["eval"].get("metadata") or {}), "release": "v9.0.0"}
    write_eval(root / "unscored.eval", {**members, "header.json": json.dumps(header).encode()})
    with app_serving(root, tmp_path / "reviews", monkeypatch):
        yield root


def test_every_page_works_with_an_all_unscored_release(app_on: Path) -> None:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.run(timeout=60)
    at.query_params.update({"suite": "ticket_triage", "release": "v9.0.0"})
    for page, title in PAGE_TITLES.items():
        at.switch_page(f"page_scripts/{page}.py")
        at.run(timeout=60)
        assert not at.exception, (page, [e.value for e in at.exception])
        assert [t.value for t in at.title] == [title], page
        if page == "releases":  # the pass-k curve of the unscored release says why
            at.selectbox(key="releases_release").set_value("v9.0.0").run(timeout=60)
            assert not at.exception, [e.value for e in at.exception]
            captions = [c.value for c in at.caption]
            assert any("no sample has an epoch scored by 'resolution'" in c for c in captions)
            curve = "k ≥ 1: UNKNOWN — no sample has a scored epoch to estimate from"
            assert any(c.startswith(curve) for c in captions), captions
