"""Every number a page table or CSV download shows, read back and checked column by column.

The app runs under streamlit.testing.v1.AppTest on a private copy of sample_reports/ plus
three problems (a truncated file, two impossible cases, stored pass@k blocks that then
disagree) in a suite of their own. Each test reads what a page shows (its grids and static
tables, `page_tables.tables(at)[i]`, or `at.dataframe[i]` on a page of grids only; and the
bytes of its download buttons, recorded from Streamlit's media store as the script hands
them over) and compares it with `relidash summary --json` for the same files, with
multivon-eval 0.20.0's own numbers where the file is a sample report, and, for what the
summary does not hold (slices, gates per slice, lottery cases, the paired Δ, the
calculator), with an independent computation: math.comb by hand or dashboard.stats called
directly on the catalog's case rows. Never with the analysis
function the page calls. Text such as "55.7% [40.0–70.4]" is parsed back to numbers and
compared at the precision shown, so a swapped or mislabelled column fails.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from app_env import clear_caches
from page_tables import tables
from shown_numbers import (
    ROOT,
    SAMPLE,
    UNKNOWN,
    case_keys,
    catalog_case_rows,
    csv_rows,
    envelope_errors,
    evaluated,
    known,
    pass_at,
    pass_hat,
    pct_ci_errors,
    pct_errors,
    release_columns,
    release_table_errors,
    run_summary,
    same_id,
    suite_records,
    upstream_numbers,
    within,
)
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from dashboard.analysis import loading
from dashboard.analysis.estimates import WIDEN_CASES
from dashboard.analysis.suite_k import suite_ks
from dashboard.data.catalog import open_catalog
from dashboard.stats import METRIC_PASS_HAT_K, PassKResult, suite_pass_k
from dashboard.stats.covering import suite_verdict_bounds
from dashboard.stats.intervals import wilson_interval

APP = ROOT / "dashboard" / "app" / "main.py"
TIMEOUT = 60  # AppTest's 3 s default is too short for a first load on a busy machine
PROBLEM_SUITE = "problems-agent"
SUITES = ["code-agent", "support-agent", PROBLEM_SUITE]
EXACT = 1e-12  # a CSV cell is the float itself: equal to the summary's but for summation order
UPSTREAM_TOLERANCE = 1e-9  # what the README promises against multivon-eval
SHOWN = 0.5e-4  # a float in a page's static table: 4 decimals (formatting.html_table)

Rows = Mapping[str, Sequence[Mapping[str, Any]]]


# ---- the reports, the expectations -------------------------------------------------------------


def add_problem_files(reports: Path) -> None:
    """A truncated file, and a copy of the latest 0.19+ support-agent report in a suite of its
    own with two impossible cases (whose removal makes its stored pass@k blocks disagree)."""
    (reports / "broken.json").write_text('{"cases": [', encoding="utf-8")
    source = sorted((reports / "support-agent").glob("*.json"))[-1]
    report = json.loads(source.read_text(encoding="utf-8"))
    report["suite"] = PROBLEM_SUITE
    report["cases"][0]["pass_count"] = report["cases"][0]["runs"] + 2
    report["cases"][1]["runs"] = 0
    target = reports / PROBLEM_SUITE / "2026-05-01_problems.json"
    target.parent.mkdir()
    target.write_text(json.dumps(report), encoding="utf-8")


@pytest.fixture(scope="module")
def reports_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("page_numbers") / "reports"
    # multivon-eval's numbers only: the Inspect sample suite has its own (tests/data/test_inspect.py)
    shutil.copytree(SAMPLE, copy, ignore=shutil.ignore_patterns("*.eval"))
    add_problem_files(copy)
    return copy


@pytest.fixture(scope="module")
def by_release(reports_dir: Path) -> dict[str, Any]:
    doc = run_summary(reports_dir, "release")
    assert set(SUITES) <= {r["suite"] for r in doc["releases"]}, doc["problems"]
    return doc


@pytest.fixture(scope="module")
def by_file(reports_dir: Path) -> dict[str, Any]:
    return run_summary(reports_dir, "file")


@pytest.fixture(scope="module")
def case_rows(reports_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return catalog_case_rows(reports_dir)


@pytest.fixture(scope="module")
def the_suite_ks(reports_dir: Path) -> dict[str, int]:
    """Each suite's k (analysis/suite_k.py): the k a page opens it at."""
    con = open_catalog(":memory:")
    try:
        loading.refresh_catalog(con, reports_dir)
        return {s: c.k for s, c in suite_ks(con, SUITES, reports_dir).items()}
    finally:
        con.close()


@pytest.fixture(scope="module")
def upstream() -> dict[str, dict[str, Any]]:
    return upstream_numbers()


# ---- the app -----------------------------------------------------------------------------------


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """The bytes of every file the script hands Streamlit's media store, by file id.

    AppTest exposes a download button's URL (`/mock/media/<id>.csv`) but not its data, and
    drops its media store after each run; this records what the browser would download.
    """
    store: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def recording(self: MemoryMediaFileStorage, *args: Any, **kwargs: Any) -> str:
        file_id: str = original(self, *args, **kwargs)
        store[file_id] = self.get_file(file_id).content
        return file_id

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", recording)
    return store


@pytest.fixture
def at(
    reports_dir: Path, monkeypatch: pytest.MonkeyPatch, downloads: dict[str, bytes]
) -> Iterator[AppTest]:
    monkeypatch.setenv("RELIDASH_REPORTS", str(reports_dir))
    monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
    monkeypatch.delenv("RELIDASH_MAX_FILE_MB", raising=False)
    clear_caches()
    yield AppTest.from_file(str(APP), default_timeout=TIMEOUT)
    clear_caches()


def run(target: Any, heading: str) -> AppTest:
    """Run the script (from the AppTest or a widget just set) and check the page's heading."""
    done: AppTest = target.run(timeout=TIMEOUT)
    assert not done.exception, [e.value for e in done.exception]
    assert [t.value for t in done.title] == [heading]
    return done


def open_page(at: AppTest, page: str, heading: str, **link: str) -> AppTest:
    """Open a page through a deep link (the page's widgets start from its parameters)."""
    run(at, "Releases")
    at.query_params.clear()
    at.query_params.update(link)
    at.switch_page(f"page_scripts/{page}.py")
    run(at, heading)
    assert not at.warning, [w.value for w in at.warning]
    return at


def download(at: AppTest, store: Mapping[str, bytes], name: str) -> bytes:
    """What the page's download button `name` serves."""
    button = at.download_button(key=f"dl_{name}")
    assert not button.proto.deferred_file_id, f"{name} builds its CSV only when clicked"
    file_id = Path(button.proto.url).stem
    assert file_id in store, f"the download {name} handed Streamlit no data"
    return store[file_id]


def column_labels(at: AppTest, i: int) -> dict[str, dict[str, Any]]:
    """The column_config of dataframe i: how each column is labelled and formatted."""
    config: dict[str, dict[str, Any]] = json.loads(at.dataframe[i].proto.columns or "{}")
    return config


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dict("records")  # type: ignore[return-value]


def number(cell: Any) -> float | None:
    """A table or CSV cell as a float (None for NaN or an empty CSV cell)."""
    if cell is None or cell == "":
        return None
    value = float(cell)
    return None if math.isnan(value) else value


def text(cell: Any) -> str | None:
    """A text cell, None when missing (None, NaN or NA in a frame; empty in a CSV)."""
    return cell if isinstance(cell, str) and cell else None


def close(shown: Any, exact: float | None, tolerance: float = EXACT) -> bool:
    value = number(shown)
    if exact is None:
        return value is None
    return value is not None and abs(value - exact) <= tolerance


def report(errors: Sequence[str]) -> str:
    shown = "\n".join(errors[:40])
    return shown + (f"\n… and {len(errors) - 40} more" if len(errors) > 40 else "")


def split_tag(tag: str) -> tuple[str, str]:
    """`dim:value`, or a plain tag in the dimension "tag" (as the Slices page documents)."""
    if ":" in tag:
        dim, value = tag.split(":", 1)
        return dim, value
    return "tag", tag


def slice_of(row: Mapping[str, Any], dim: str) -> str:
    for tag in row["tags"] or []:
        d, value = split_tag(str(tag))
        if d == dim:
            return value
    return "(untagged)"


def pass_hat_result(rows: Sequence[Mapping[str, Any]], k: int) -> PassKResult:
    """pass^k with its interval over the evaluated rows, from dashboard.stats directly, its
    point estimate checked against the mean of C(c, k)/C(n, k) by hand."""
    counted = evaluated(rows)
    n = [int(r["n"]) for r in counted]
    c = [int(r["c"]) for r in counted]
    result = suite_pass_k(n, c, [k], METRIC_PASS_HAT_K)[0]
    if result.value is not None:
        by_hand = sum(pass_hat(a, b, k) for a, b in zip(n, c, strict=True)) / len(n)
        assert abs(result.value - by_hand) < EXACT
    return result


def cell_of(result: PassKResult) -> dict[str, Any]:
    return {"value": result.value, "ci_low": result.ci_low, "ci_high": result.ci_high}


INTERVAL_START = {
    "cluster-bootstrap": "cluster bootstrap over cases",
    "wilson": "Wilson",
    "": "none",
}


# ---- the inputs of the independent computations ------------------------------------------------


def test_case_rows_give_upstreams_own_numbers(
    case_rows: Rows, upstream: Mapping[str, Mapping[str, Any]]
) -> None:
    """The per-case (n, c) the other tests compute from give multivon-eval's numbers for
    every sample report and k: by hand for the values, dashboard.stats for the intervals."""
    errors = []
    for file, numbers in upstream.items():
        rows = evaluated(case_rows[file])
        if len(rows) != numbers["evaluated"]:
            errors.append(f"{file}: {len(rows)} evaluated cases, upstream {numbers['evaluated']}")
            continue
        n = [int(r["n"]) for r in rows]
        c = [int(r["c"]) for r in rows]
        for key, estimator, metric in (
            ("pass_at_k", pass_at, "pass@k"),
            ("pass_hat_k", pass_hat, "pass^k"),
        ):
            ks = [int(k) for k in numbers[key]]
            results = suite_pass_k(n, c, ks, metric)
            for k, result in zip(ks, results, strict=True):
                cell = numbers[key][str(k)]
                if cell["value"] is None:
                    if result.value is not None:
                        errors.append(f"{file} {metric} k={k}: known here, UNKNOWN upstream")
                    continue
                hand = sum(estimator(a, b, k) for a, b in zip(n, c, strict=True)) / len(n)
                for name, ours in (
                    ("by hand", hand),
                    ("value", result.value),
                    ("ci_low", result.ci_low),
                    ("ci_high", result.ci_high),
                ):
                    theirs = cell["value"] if name == "by hand" else cell[name]
                    if ours is None or abs(ours - theirs) > UPSTREAM_TOLERANCE:
                        errors.append(f"{file} {metric} k={k} {name}: {ours} vs {theirs}")
    assert not errors, report(errors)


# ---- Releases ----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [None, 2, 8], ids=["default-k", "k2", "k8"])
@pytest.mark.parametrize("suite", SUITES)
def test_releases_table_and_its_csv(
    at: AppTest,
    downloads: dict[str, bytes],
    by_release: Mapping[str, Any],
    upstream: Mapping[str, Mapping[str, Any]],
    case_rows: Rows,
    the_suite_ks: Mapping[str, int],
    suite: str,
    k: int | None,
) -> None:
    rels = suite_records(by_release, suite)
    at.query_params.update({"suite": suite, **({"k": str(k)} if k else {})})
    run(at, "Releases")
    assert not at.warning, [w.value for w in at.warning]
    shown_k = int(at.selectbox(key="releases_k").value)
    assert shown_k == (k or the_suite_ks[suite])

    table = tables(at)[0]
    assert set(table.columns) == set(release_columns(shown_k))
    # the table and its CSV list the newest release first
    errors, against_upstream = release_table_errors(
        records(table)[::-1], shown_k, rels, upstream, case_rows
    )
    header, rows = csv_rows(download(at, downloads, f"releases-{suite}-k{shown_k}"))
    assert header == list(table.columns)
    csv_errors, _ = release_table_errors(rows[::-1], shown_k, rels, upstream, case_rows)
    assert not errors + csv_errors, report(errors + [f"CSV: {e}" for e in csv_errors])
    if suite != PROBLEM_SUITE:
        assert against_upstream == len(rels), "every sample release is checked against upstream"


@pytest.mark.parametrize("suite", SUITES)
def test_releases_curve_csv_for_every_release(
    at: AppTest,
    downloads: dict[str, bytes],
    by_release: Mapping[str, Any],
    upstream: Mapping[str, Mapping[str, Any]],
    suite: str,
) -> None:
    """pass@k and pass^k against k (the curve the page draws and offers as CSV), k = 1..k_max."""
    rels = suite_records(by_release, suite)
    k_max = max(8, *(r["runs"]["max"] or 1 for r in rels))
    at.query_params.update(suite=suite)
    run(at, "Releases")
    errors: list[str] = []
    for rec in rels:
        run(at.selectbox(key="releases_release").set_value(rec["release"]), "Releases")
        header, rows = csv_rows(download(at, downloads, f"curve-{suite}-{rec['release']}"))
        assert header[:6] == ["k", "metric", "value", "ci_low", "ci_high", "n_cases"]
        assert "unknown_reason" in header
        expected = [(k, m) for m in ("pass@k", "pass^k") for k in range(1, k_max + 1)]
        assert [(int(r["k"]), r["metric"]) for r in rows] == expected
        up = upstream.get(rec["file"])
        for row in rows:
            k, key = row["k"], "pass_at_k" if row["metric"] == "pass@k" else "pass_hat_k"
            where = f"{suite} {rec['release']} curve {row['metric']} k={k}"
            cell = rec[key].get(k)  # the summary's K can stop below the suite's k_max
            sources = [("summary", cell, EXACT)]
            if up is not None:
                sources.append(("upstream", up[key].get(k), UPSTREAM_TOLERANCE))
            for source, expect, tolerance in sources:
                for field in ("value", "ci_low", "ci_high"):
                    exact = expect[field] if expect else None
                    if not close(row[field], exact, tolerance):
                        errors.append(f"{where} {field}: {row[field]!r}, {source} {exact}")
                reason = (expect or {}).get("unknown_reason") or ""
                if expect is not None and row["unknown_reason"] != reason:
                    errors.append(f"{where} reason: {row['unknown_reason']!r}, {source} {reason!r}")
            if int(row["n_cases"]) != rec["cases"]["evaluated"]:
                errors.append(f"{where} n_cases {row['n_cases']}, summary {rec['cases']}")
    assert not errors, report(errors)


# ---- Slices ------------------------------------------------------------------------------------


def expected_slices(
    rels: Sequence[Mapping[str, Any]], case_rows: Rows, dim: str, k: int
) -> list[dict[str, Any]]:
    """One row per (slice value, release) with cases, ordered by slice then release."""
    out = []
    for rank, rec in enumerate(rels):
        groups: dict[str, list[Mapping[str, Any]]] = {}
        for row in case_rows[rec["file"]]:
            groups.setdefault(slice_of(row, dim), []).append(row)
        for value, rows in groups.items():
            result = pass_hat_result(rows, k)
            out.append(
                {
                    "slice": value,
                    "release": rec["release"],
                    "rank": rank,
                    "cases_total": len(rows),
                    "cases_evaluated": len(evaluated(rows)),
                    "result": result,
                }
            )
    return sorted(out, key=lambda r: (r["slice"], r["rank"]))


def slice_metric_errors(
    shown: Sequence[Mapping[str, Any]], expected: Sequence[Mapping[str, Any]], k: int, where: str
) -> list[str]:
    if [(r["slice"], r["release"]) for r in shown] != [
        (e["slice"], e["release"]) for e in expected
    ]:
        return [f"{where}: rows {[(r['slice'], r['release']) for r in shown]}"]
    errors = []
    for row, exp in zip(shown, expected, strict=True):
        at = f"{where} {exp['slice']} {exp['release']}"
        for column in ("cases_total", "cases_evaluated"):
            if int(row[column]) != exp[column]:
                errors.append(f"{at} {column}: {row[column]}, expected {exp[column]}")
        result = exp["result"]
        errors += pct_ci_errors(f"{at} pass^{k}", str(row[f"pass^{k}"]), cell_of(result))
        if not str(row["interval"]).startswith(INTERVAL_START[result.method]):
            errors.append(f"{at} interval {row['interval']!r}, method {result.method!r}")
        if (row["unknown_reason"] or "") != result.unknown_reason:
            errors.append(f"{at} unknown_reason {row['unknown_reason']!r}")
    return errors


def history_errors(
    shown: Sequence[Mapping[str, Any]],
    rels: Sequence[Mapping[str, Any]],
    case_rows: Rows,
    tag: str,
    where: str,
) -> list[str]:
    """The case history of a slice: passes/runs (or the status) of each case in each release."""
    rows = [(rec["release"], r) for rec in rels for r in case_rows[rec["file"]]]
    expected: dict[str, dict[str, str]] = {}
    for (release, r), key in zip(rows, case_keys([r for _, r in rows]), strict=True):
        if tag in [str(t) for t in r["tags"] or []]:
            cell = f"{r['c']}/{r['n']}" if r["n"] is not None else str(r["status"])
            expected.setdefault(key, {}).setdefault(release, cell)

    def is_case(row: Mapping[str, Any], key: str) -> bool:
        if key.startswith("id:"):
            return same_id(row["case_id"], key[3:])
        return not text(row["case_id"]) and key == "input:" + str(row["input"] or "")

    errors = []
    for row in shown:
        keys = [key for key in expected if is_case(row, key)]
        cells = {
            rec["release"]: str(row[rec["release"]])
            for rec in rels
            if str(row[rec["release"]]) != "—"
        }
        if len(keys) != 1:
            errors.append(f"{where}: row {row['case_id']!r} {row['input']!r} is {len(keys)} cases")
        elif cells != expected.pop(keys[0]):
            errors.append(f"{where} {keys[0]}: shown {cells}")
    return errors + [f"{where} {key}: not shown" for key in expected]


@pytest.mark.parametrize("suite", SUITES)
def test_slices_tables_and_csvs(
    at: AppTest,
    downloads: dict[str, bytes],
    by_release: Mapping[str, Any],
    case_rows: Rows,
    suite: str,
) -> None:
    rels = suite_records(by_release, suite)
    open_page(at, "slices", "Slices", suite=suite)
    errors: list[str] = []
    dims = list(at.selectbox(key="slices_dim").options)
    assert len(dims) >= 2
    default_k = int(at.selectbox(key="slices_k").value)
    assert default_k == min(r["runs"]["max"] for r in rels)
    for dim in dims:
        for k in sorted({default_k, 2}):
            run(at.selectbox(key="slices_dim").set_value(dim), "Slices")
            run(at.selectbox(key="slices_k").set_value(k), "Slices")
            where = f"{suite} {dim} k={k}"
            expected = expected_slices(rels, case_rows, dim, k)
            # the slices partition each release's cases, as the summary counts them
            for rec in rels:
                mine = [e for e in expected if e["release"] == rec["release"]]
                assert sum(e["cases_total"] for e in mine) == rec["cases"]["total"]
                assert sum(e["cases_evaluated"] for e in mine) == rec["cases"]["evaluated"]

            counts = tables(at)[0]
            assert list(counts.columns) == [r["release"] for r in rels if r["release"] in counts]
            expected_counts = {(e["slice"], e["release"]): e["cases_evaluated"] for e in expected}
            shown_counts = {
                (value, release): int(n)
                for value, row in counts.iterrows()
                for release, n in row.items()
                if not pd.isna(n)
            }
            if shown_counts != expected_counts:
                errors.append(f"{where} counts {shown_counts} != {expected_counts}")
            header, rows = csv_rows(download(at, downloads, f"slice-counts-{suite}-{dim}"))
            assert header == ["slice", *counts.columns]
            csv_counts = {
                (row["slice"], release): int(float(n))
                for row in rows
                for release, n in row.items()
                if release != "slice" and n != ""
            }
            if csv_counts != expected_counts:
                errors.append(f"{where} counts CSV {csv_counts} != {expected_counts}")

            metrics = tables(at)[1]
            header, rows = csv_rows(download(at, downloads, f"slices-{suite}-{dim}-k{k}"))
            assert header == [
                "slice",
                "release",
                "cases_total",
                "cases_evaluated",
                f"pass^{k}",
                "interval",
                "unknown_reason",
            ]
            errors += slice_metric_errors(rows, expected, k, f"{where} CSV")
            # the page leaves out the columns every row holds alike (said under the
            # table); read back, each row takes them from its CSV row
            said_once = [c for c in header if c not in metrics.columns]
            assert {"slice", "release", f"pass^{k}"} <= set(metrics.columns)
            assert all(len({r[c] for r in rows}) == 1 for c in said_once), said_once
            shown_rows = [
                {**{c: row[c] for c in said_once}, **shown}
                for row, shown in zip(rows, records(metrics), strict=True)
            ]
            errors += slice_metric_errors(shown_rows, expected, k, where)

        values = [v for v in at.selectbox(key="slices_slice").options if v != "(untagged)"]
        for value in values if dim == dims[0] else values[:1]:
            run(at.selectbox(key="slices_slice").set_value(value), "Slices")
            tag = value if dim == "tag" else f"{dim}:{value}"
            history = tables(at)[2]
            errors += history_errors(records(history), rels, case_rows, tag, f"{suite} {tag}")
            _, rows = csv_rows(download(at, downloads, f"cases-{suite}-{dim}-{value}"))
            errors += history_errors(rows, rels, case_rows, tag, f"{suite} {tag} CSV")
    assert not errors, report(errors)


# ---- Lottery cases -----------------------------------------------------------------------------


def lottery_at(rows: Sequence[Mapping[str, Any]], k: int) -> list[tuple[int, Mapping[str, Any]]]:
    """(file position, row) of the lottery cases at k, closest to reliable first: n >= k and
    pass@k − pass^k > 0, i.e. 0 < c < n for k >= 2; then by c/n, runs, file order."""
    cases = [
        (i, r)
        for i, r in enumerate(rows)
        if r["n"] is not None and k >= 2 and r["n"] >= k and 0 < r["c"] < r["n"]
    ]
    return sorted(cases, key=lambda ir: (-ir[1]["c"] / ir[1]["n"], -ir[1]["n"], ir[0]))


def lottery_streaks(
    rels: Sequence[Mapping[str, Any]], case_rows: Rows, upto: int, k: int
) -> dict[str, int]:
    """How many releases in a row, ending at release `upto`, each case key has been a lottery
    case (each release judged at min(k, its largest run count))."""
    rows = [(i, r) for i, rec in enumerate(rels) for r in case_rows[rec["file"]]]
    flags: list[set[str]] = [set() for _ in rels]
    by_release: dict[int, list[tuple[str, Mapping[str, Any]]]] = {}
    for (i, r), key in zip(rows, case_keys([r for _, r in rows]), strict=True):
        by_release.setdefault(i, []).append((key, r))
    for i, keyed in by_release.items():
        counted = [(key, r) for key, r in keyed if r["n"] is not None]
        kk = min(k, max((r["n"] for _, r in counted), default=k))
        flags[i] = {key for key, r in counted if kk >= 2 and r["n"] >= kk and 0 < r["c"] < r["n"]}
    streaks = {}
    for key, _ in by_release.get(upto, []):
        streak = 0
        for i in range(upto, -1, -1):
            if key not in flags[i]:
                break
            streak += 1
        streaks[key] = streak
    return streaks


def same_cases(shown: Sequence[Mapping[str, Any]], cases: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the shown rows are these cases, in this order (by id, else by input)."""
    return len(shown) == len(cases) and all(
        same_id(row["case_id"], case["case_id"]) and text(row["input"]) == text(case["input"])
        for row, case in zip(shown, cases, strict=True)
    )


LOTTERY_COLUMNS = {
    "rank",
    "input",
    "case_id",
    "passes",
    "runs",
    "pass_at_k",
    "pass_hat_k",
    "releases_as_lottery",
}


def lottery_errors(
    shown: Sequence[Mapping[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    streaks: Mapping[str, int],
    keys: Sequence[str],
    k: int,
    where: str,
    said_once: tuple[str, ...] = (),
) -> list[str]:
    """`said_once`: the columns the page said once under the table (their percentages
    have one decimal there)."""
    expected = lottery_at(rows, k)
    if not same_cases(shown, [r for _, r in expected]):
        got = [(r["case_id"], r["input"]) for r in shown]
        return [f"{where}: cases {got} != {[(r['case_id'], r['input']) for _, r in expected]}"]
    errors = []

    def rounded(column: str) -> float:
        return 0.0005 if column in said_once else EXACT

    for rank, (row, (i, case)) in enumerate(zip(shown, expected, strict=True), start=1):
        at = f"{where} #{rank} {case['case_id'] or case['input'][:30]}"
        n, c = int(case["n"]), int(case["c"])
        checks = [
            ("rank", int(row["rank"]) == rank),
            ("passes", int(row["passes"]) == c),
            ("runs", int(row["runs"]) == n),
            ("pass_at_k", close(row["pass_at_k"], pass_at(n, c, k), rounded("pass_at_k"))),
            ("pass_hat_k", close(row["pass_hat_k"], pass_hat(n, c, k), rounded("pass_hat_k"))),
            ("releases_as_lottery", int(row["releases_as_lottery"]) == streaks[keys[i]]),
        ]
        errors += [f"{at} {name}: {row[name]!r}" for name, good in checks if not good]
    return errors


EVERY_ROW = {
    "pass_at_k": re.compile(r"pass@\d+ (\d+\.\d)%"),
    "pass_hat_k": re.compile(r"pass\^\d+ (\d+\.\d)%"),
    "releases_as_lottery": re.compile(r"streak (\d+)"),
}


def shown_lottery(at: AppTest) -> tuple[list[dict[str, Any]], tuple[str, ...]]:
    """The Lottery table's rows as the page shows them, put back in the CSV's columns:
    `passes/runs` split, and a column said once under the table ("Every row: pass@5
    100.0%") given to every row; with the names of the columns said once."""
    rows = records(at.dataframe[0].value)
    said = " ".join(c.value.replace("\\", "") for c in at.caption if "Every row" in c.value)
    once = {}
    for column, pattern in EVERY_ROW.items():
        if rows and column not in rows[0]:
            match = pattern.search(said)
            assert match, f"{column} is neither a column nor said once: {said!r}"
            value = float(match[1])
            once[column] = value / 100 if column != "releases_as_lottery" else int(value)
    for row in rows:
        passes, runs = str(row.pop("passes_runs")).split("/")
        row.update(passes=int(passes), runs=int(runs), **once)
    return rows, tuple(once)


@pytest.mark.parametrize("suite", SUITES)
def test_lottery_table_and_csv_for_every_release(
    at: AppTest,
    downloads: dict[str, bytes],
    by_release: Mapping[str, Any],
    upstream: Mapping[str, Mapping[str, Any]],
    case_rows: Rows,
    suite: str,
) -> None:
    rels = suite_records(by_release, suite)
    # closest to reliable first, the order of the summary's and upstream's lists
    open_page(at, "lottery", "Lottery cases", suite=suite, order="reliable")
    errors: list[str] = []
    all_rows = [r for rec in rels for r in case_rows[rec["file"]]]
    all_keys = case_keys(all_rows)
    start = 0
    checked_default = 0
    for i, rec in enumerate(rels):
        rows = case_rows[rec["file"]]
        keys = all_keys[start : start + len(rows)]
        start += len(rows)
        runs_max = rec["runs"]["max"]
        run(at.selectbox(key="lottery_release").set_value(rec["release"]), "Lottery cases")
        for k in sorted({max(runs_max, 2), 2}):
            run(at.selectbox(key="lottery_k").set_value(k), "Lottery cases")
            where = f"{suite} {rec['release']} k={k}"
            streaks = lottery_streaks(rels, case_rows, i, k)
            if not lottery_at(rows, k):
                assert not at.dataframe, f"{where}: a lottery table where none is expected"
                assert any("No lottery cases" in m.value for m in at.info)
                continue
            labels = column_labels(at, 0)
            table, said_once = shown_lottery(at)
            for column, label in (("pass_at_k", f"pass@{k}"), ("pass_hat_k", f"pass^{k}")):
                if column in said_once:
                    continue
                assert labels[column]["label"] == label, labels
                assert labels[column]["type_config"]["format"] == "percent", labels
            assert set(table[0]) >= LOTTERY_COLUMNS
            errors += lottery_errors(table, rows, streaks, keys, k, where, said_once)
            name = f"lottery-{suite}-{rec['release']}-k{k}"
            header, csv_table = csv_rows(download(at, downloads, name))
            assert set(header) >= LOTTERY_COLUMNS
            errors += lottery_errors(csv_table, rows, streaks, keys, k, f"{where} CSV")
            if k == runs_max:  # the summary's and upstream's lottery cases are at k = runs
                checked_default += 1
                for source, shown in (("table", table), ("CSV", csv_table)):
                    counts = [(int(r["passes"]), int(r["runs"])) for r in shown]
                    summary = rec["lottery"]
                    if not same_cases(shown, summary) or counts != [
                        (c["passes"], c["runs"]) for c in summary
                    ]:
                        errors.append(f"{where} {source}: {shown} != summary {summary}")
                up = upstream.get(rec["file"])
                if up is not None:  # upstream lists the same set in file order
                    ours = sorted(
                        (str(r["case_id"]), r["input"], int(r["passes"]), int(r["runs"]))
                        for r in csv_table
                    )
                    theirs = sorted(
                        (str(c["case_id"] or ""), c["input"], c["pass_count"], c["runs"])
                        for c in up["lottery"]
                    )
                    if ours != theirs:
                        errors.append(f"{where}: {ours} != upstream's set {theirs}")
    assert checked_default, "no release was compared with the summary's lottery cases"
    assert not errors, report(errors)


# ---- Gates -------------------------------------------------------------------------------------

# Verdicts are three-way (UNDECIDED when the CI straddles the threshold) and read a
# widened interval where the reported one is too narrow: the sentence for each.
_GATE_NUMBERS = (
    r"\(pass\^\d+ = (?P<value>\d+\.\d+), (?P<widened>widened )?CI "
    r"\[(?P<low>\d+\.\d+), (?P<high>\d+\.\d+)\], (?P<cases>\d+) cases\)"
)
_GATE_REQUIRED = r"required (?P<required>\d+\.\d+)"
GATE_DETAIL = {
    "PASSED": re.compile(
        rf"pass\^(?P<k>\d+) gate PASSED: CI lower bound (?P<bound>\d+\.\d+) >= {_GATE_REQUIRED} "
        + _GATE_NUMBERS
    ),
    "FAILED": re.compile(
        rf"pass\^(?P<k>\d+) gate FAILED: the whole CI is below the {_GATE_REQUIRED} "
        + _GATE_NUMBERS
    ),
    "UNDECIDED": re.compile(
        rf"pass\^(?P<k>\d+) gate UNDECIDED \(fails\): the (?:widened )?CI \[\d+\.\d+, \d+\.\d+\] "
        rf"straddles the {_GATE_REQUIRED}; the evidence neither meets nor rules it out "
        + _GATE_NUMBERS
    ),
}
PERFECTION_REFUTED = re.compile(
    r"pass\^(?P<k>\d+) gate FAILED: a failed trial rules out pass\^\d+ >= \d+\.\d+ "
    r"\(pass\^\d+ = (?P<value>\d+\.\d+) < (?P<required>\d+\.\d+), (?P<widened>widened )?CI "
    r"\[(?P<low>\d+\.\d+), (?P<high>\d+\.\d+)\], (?P<cases>\d+) cases\)"
)


def decimals(number_text: str) -> int:
    return len(number_text.split(".")[1])


def verdict_interval(cell: Mapping[str, Any], values: Sequence[float]) -> tuple[float, float]:
    """The CI a verdict reads (and `relidash gate` prints): the reported one widened to hold
    the BCa interval on the same resamples, and at WIDEN_CASES cases or fewer the Wilson
    interval of the value as a proportion; from dashboard.stats on the per-case values."""
    low, high = float(cell["ci_low"]), float(cell["ci_high"])
    wide_low, wide_high = suite_verdict_bounds([list(values)], [low], [high])
    if len(values) <= WIDEN_CASES:
        wilson_low, wilson_high = wilson_interval(float(cell["value"]) * len(values), len(values))
        assert wide_low[0] <= wilson_low and wide_high[0] >= wilson_high
    return float(wide_low[0]), float(wide_high[0])


def expected_verdict(value: float, low: float, high: float, threshold: float) -> str:
    if low >= threshold:
        return "PASSED"
    if high < threshold or (threshold >= 1.0 and value < 1.0):
        return "FAILED"
    return "UNDECIDED"


def gate_row_errors(
    row: Mapping[str, Any],
    release: str,
    tag: str | None,
    threshold: float,
    k: int,
    expected: Sequence[tuple[str, Mapping[str, Any] | None, float]],
    n_cases: int,
    reason: str,
    values: Sequence[float],
    rounding: float = 0.0,
) -> list[str]:
    """One row of the Gates table against its expected cell(s) (the first one decides),
    `values` the per-case pass^k of its cases in file order; `rounding`: how far a number
    shown may be from its value (the page's 4 decimals)."""
    where = f"{release} {tag or '(all cases)'} k={k}"
    errors = []
    if (row["release"], row["slice"]) != (release, tag or "(all cases)"):
        return [f"{where}: row is {row['release']} {row['slice']}"]
    if not close(row["threshold"], threshold):
        errors.append(f"{where} threshold {row['threshold']}, rule {threshold}")
    if int(row["n_cases"]) != n_cases:
        errors.append(f"{where} n_cases {row['n_cases']}, expected {n_cases}")
    for source, cell, tolerance in expected:
        low, high = verdict_interval(cell, values) if known(cell) else (None, None)
        for column, exact in (
            ("pass_hat_k", cell["value"] if cell else None),
            ("ci_low", low),
            ("ci_high", high),
        ):
            if not close(row[column], exact, max(tolerance, rounding)):
                errors.append(f"{where} {column}: {row[column]!r}, {source} {exact}")
    cell = expected[0][1]
    detail = str(row["detail"])
    if not known(cell):
        if row["verdict"] != "UNKNOWN":
            errors.append(f"{where} verdict {row['verdict']}, expected UNKNOWN")
        if detail != f"pass^{k} gate UNKNOWN (fails): {reason}":
            errors.append(f"{where} detail {detail!r}")
        return errors
    assert cell is not None
    value = float(cell["value"])
    low, high = verdict_interval(cell, values)
    verdict = expected_verdict(value, low, high, threshold)
    if row["verdict"] != verdict:
        errors.append(f"{where} verdict {row['verdict']}, expected {verdict}")
    perfection = verdict == "FAILED" and high >= threshold
    pattern = PERFECTION_REFUTED if perfection else GATE_DETAIL[verdict]
    match = pattern.fullmatch(detail)
    if match is None:
        return [*errors, f"{where} detail {detail!r} is not a {verdict} gate sentence"]
    widened = (low, high) != (cell["ci_low"], cell["ci_high"])
    if bool(match["widened"]) != widened:
        errors.append(f"{where} detail {detail!r}: widened is {widened}")
    required = float(match["required"])
    numbers = [
        ("k", float(match["k"]), k, 0),
        ("required", required, threshold, decimals(match["required"])),
        ("value", float(match["value"]), value, decimals(match["value"])),
        ("CI low", float(match["low"]), low, decimals(match["low"])),
        ("CI high", float(match["high"]), high, decimals(match["high"])),
        ("cases", float(match["cases"]), n_cases, 0),
    ]
    if verdict == "PASSED":
        numbers.append(("CI lower bound", float(match["bound"]), low, decimals(match["bound"])))
    errors += [
        f"{where} detail {name} {shown} != {exact}"
        for name, shown, exact, places in numbers
        if not within(shown, exact, places)
    ]
    # the comparison the sentence states reads true in the digits it prints
    reads_true = {
        "PASSED": lambda: float(match["bound"]) >= required,
        "FAILED": lambda: float(match["value" if perfection else "high"]) < required,
        "UNDECIDED": lambda: float(match["low"]) < required <= float(match["high"]),
    }[verdict]()
    if not reads_true:
        errors.append(f"{where} detail {detail!r} does not read true as printed")
    return errors


def gates_errors(
    shown: Sequence[Mapping[str, Any]],
    rels: Sequence[Mapping[str, Any]],
    upstream: Mapping[str, Mapping[str, Any]],
    case_rows: Rows,
    rules: Sequence[tuple[str | None, float]],
    k: int,
    rounding: float = 0.0,
) -> list[str]:
    expected_rows = [(rec, tag, threshold) for rec in rels for tag, threshold in rules]
    if len(shown) != len(expected_rows):
        return [f"{len(shown)} gate rows, expected {len(expected_rows)}"]
    errors: list[str] = []
    for row, (rec, tag, threshold) in zip(shown, expected_rows, strict=True):
        if tag is None:
            cell = rec["pass_hat_k"].get(str(k))
            sources: list[tuple[str, Mapping[str, Any] | None, float]] = [("summary", cell, EXACT)]
            up = upstream.get(rec["file"])
            if up is not None:
                sources.append(("upstream", up["pass_hat_k"].get(str(k)), UPSTREAM_TOLERANCE))
            n_cases = rec["cases"]["evaluated"]
            reason = (cell or {}).get("unknown_reason") or ""
            members = case_rows[rec["file"]]
        else:
            members = [
                r for r in case_rows[rec["file"]] if tag in [str(t) for t in r["tags"] or []]
            ]
            result = pass_hat_result(members, k)
            sources = [("dashboard.stats", cell_of(result), EXACT)]
            n_cases, reason = result.n_cases, result.unknown_reason
        counted = evaluated(members)
        within_trials = counted and k <= min(r["n"] for r in counted)  # else UNKNOWN
        values = [pass_hat(r["n"], r["c"], k) for r in counted] if within_trials else []
        errors += gate_row_errors(
            row, rec["release"], tag, threshold, k, sources, n_cases, reason, values, rounding
        )
    return errors


@pytest.mark.parametrize("suite", SUITES)
def test_gates_table_and_csv(
    at: AppTest,
    downloads: dict[str, bytes],
    by_release: Mapping[str, Any],
    upstream: Mapping[str, Mapping[str, Any]],
    case_rows: Rows,
    suite: str,
) -> None:
    rels = suite_records(by_release, suite)
    open_page(at, "gates", "Gates", suite=suite)
    tags = list(at.multiselect(key="gate_slices").options)
    chosen = [t for t in tags if "safety" in t][:1] + [t for t in tags if "safety" not in t][:1]
    assert chosen
    errors: list[str] = []
    steps: list[Callable[[], Any]] = [
        lambda: at,
        lambda: at.multiselect(key="gate_slices").set_value(chosen),
        lambda: at.number_input(key="gate_threshold").set_value(0.3),
        lambda: at.selectbox(key="gates_k").set_value(2),
        lambda: at.selectbox(key="gates_k").set_value(max(at.selectbox(key="gates_k").options)),
    ]
    for step in steps:
        run(step(), "Gates")
        k = int(at.selectbox(key="gates_k").value)
        threshold = float(at.number_input(key="gate_threshold").value)
        rules = [(None, threshold)] + [
            (t, float(at.number_input(key=f"gate_rule_{t}").value))
            for t in at.multiselect(key="gate_slices").value
        ]
        table = tables(at)[0]
        # the page shows a float with 4 decimals; its CSV holds every digit
        errors += gates_errors(records(table), rels, upstream, case_rows, rules, k, SHOWN)
        header, rows = csv_rows(download(at, downloads, f"gates-{suite}-k{k}"))
        assert header == list(table.columns)
        errors += [f"CSV: {e}" for e in gates_errors(rows, rels, upstream, case_rows, rules, k)]
        # the verdict lines above the table are the latest release's rows
        latest = [r for r in records(table) if r["release"] == rels[-1]["release"]]
        # UNDECIDED shows as st.info and UNKNOWN as st.warning; each line is sent as Markdown
        # with its punctuation escaped
        # (the page's last section, the suite's own policy, has banners of its own: only
        # the threshold table's, which name a release and a slice, are read here)
        said = sorted(
            line
            for line in (
                re.sub(r"\\(.)", r"\1", m.value).replace("\u2060", "")
                for m in [*at.success, *at.error, *at.info, *at.warning]
            )
            if line.startswith(f"{rels[-1]['release']} · ")
        )
        if said != sorted(f"{r['release']} · {r['slice']}: {r['detail']}" for r in latest):
            errors.append(f"verdict lines {said} at k={k}, rules {rules}")
    assert not errors, report(errors)


# ---- Data --------------------------------------------------------------------------------------

FILE_COUNTS = ("total", "evaluated", "errored", "skipped", "excluded")


def file_errors(
    shown: Sequence[Mapping[str, Any]],
    doc: Mapping[str, Any],
    upstream: Mapping[str, Mapping[str, Any]],
    reports_dir: Path,
) -> list[str]:
    reports = doc["reports"]
    if [r["file"] for r in shown] != [r["file"] for r in reports]:
        return [f"files {[r['file'] for r in shown]} != {[r['file'] for r in reports]}"]
    errors = []
    for row, rec in zip(shown, reports, strict=True):
        expected: dict[str, Any] = {
            "suite": rec["suite"],
            "release": rec["release"],
            "format": rec["format"],
            "upgraded": rec["upgraded"],
            **{f"cases_{name}": rec["cases"][name] for name in FILE_COUNTS},
            "runs_min": rec["runs"]["min"],
            "runs_max": rec["runs"]["max"],
        }
        if rec["file"].endswith(".json"):  # multivon-eval's reports: count from the file
            data = json.loads((reports_dir / rec["file"]).read_text(encoding="utf-8"))
            expected["cases_with_trials"] = sum(1 for case in data["cases"] if case.get("trials"))
        up = upstream.get(rec["file"])
        if up is not None:
            theirs = {
                "cases_total": up["total"],
                "cases_evaluated": up["evaluated"],
                "cases_errored": up["errors"],
                "cases_skipped": up["skipped"],
                "runs_max": up["runs_per_case"],
            }
            errors += [
                f"{rec['file']} {column}: summary {expected[column]}, upstream {value}"
                for column, value in theirs.items()
                if expected[column] != value
            ]
        for column, value in expected.items():
            cell = row[column]
            if column == "upgraded":
                cell = cell == "True" if isinstance(cell, str) else bool(cell)
            elif isinstance(value, int) and not isinstance(value, bool):
                cell = None if number(cell) is None else int(float(cell))
            if cell != value:
                errors.append(f"{rec['file']} {column}: shows {row[column]!r}, expected {value!r}")
    return errors


def test_data_files_and_problems_with_their_csvs(
    at: AppTest,
    downloads: dict[str, bytes],
    by_file: Mapping[str, Any],
    upstream: Mapping[str, Mapping[str, Any]],
    reports_dir: Path,
) -> None:
    open_page(at, "data", "Data")
    files = at.dataframe[0].value
    errors = file_errors(records(files), by_file, upstream, reports_dir)
    header, rows = csv_rows(download(at, downloads, "report-files"))
    assert header == list(files.columns)
    errors += [f"CSV: {e}" for e in file_errors(rows, by_file, upstream, reports_dir)]

    problems = at.dataframe[1].value
    expected = [(p["file"], p["scope"], p["reason"]) for p in by_file["problems"]]
    assert {scope for _, scope, _ in expected} == {"file", "case", "report"}
    assert [(r["file"], r["scope"], r["reason"]) for r in records(problems)] == expected
    header, rows = csv_rows(download(at, downloads, "problems"))
    assert header == list(problems.columns)
    assert [(r["file"], r["scope"], r["reason"]) for r in rows] == expected
    subheaders = [s.value for s in at.subheader]
    assert subheaders == [
        f"Report files ({len(by_file['reports'])})",
        f"Problems ({len(expected)})",
    ]
    assert not errors, report(errors)


# ---- Calculator --------------------------------------------------------------------------------


def rate_errors(rows: Sequence[Mapping[str, Any]], p: float, ks: Sequence[int]) -> list[str]:
    """The rate table (pass@k, pass^k as text) against 1 − (1 − p)^k and p^k by hand."""
    if [int(r["k"]) for r in rows] != list(ks):
        return [f"p={p}: ks {[r['k'] for r in rows]} != {list(ks)}"]
    errors = []
    for row in rows:
        k = int(row["k"])
        at, hat = 1 - (1 - p) ** k, p**k
        errors += pct_errors(f"p={p} k={k} pass@k", str(row["pass@k"]), at)
        errors += pct_errors(f"p={p} k={k} pass^k", str(row["pass^k"]), hat)
        errors += envelope_errors(
            f"p={p} k={k} envelope", str(row["envelope"]), {"value": at}, {"value": hat}
        )
    return errors


def curve_errors(rows: Sequence[Mapping[str, Any]], p: float, k_max: int) -> list[str]:
    if [int(r["k"]) for r in rows] != list(range(1, k_max + 1)):
        return [f"p={p}: curve ks {[r['k'] for r in rows]}"]
    errors = []
    for row in rows:
        k = int(row["k"])
        for column, exact in (
            ("pass_at_k", 1 - (1 - p) ** k),
            ("pass_hat_k", p**k),
            ("envelope_points", 100 * ((1 - (1 - p) ** k) - p**k)),
        ):
            if not close(row[column], exact, 1e-9):
                errors.append(f"p={p} curve k={k} {column}: {row[column]!r} != {exact}")
    return errors


RUNS_LABELS = {
    "pass_at_k": "pass@k (unbiased)",
    "plug_in_pass_at_k": "1−(1−c/n)^k (plug-in)",
    "pass_hat_k": "pass^k (unbiased)",
    "plug_in_pass_hat_k": "(c/n)^k (plug-in)",
}


def runs_errors(rows: Sequence[Mapping[str, Any]], n: int, c: int) -> list[str]:
    if [int(r["k"]) for r in rows] != list(range(1, n + 1)):
        return [f"n={n} c={c}: ks {[r['k'] for r in rows]}"]
    errors = []
    for row in rows:
        k = int(row["k"])
        for column, exact in (
            ("pass_at_k", pass_at(n, c, k)),
            ("plug_in_pass_at_k", 1 - (1 - c / n) ** k),
            ("pass_hat_k", pass_hat(n, c, k)),
            ("plug_in_pass_hat_k", (c / n) ** k),
        ):
            if not close(row[column], exact):
                errors.append(f"n={n} c={c} k={k} {column}: {row[column]!r} != {exact}")
    return errors


def test_calculator_tables_and_csvs(at: AppTest, downloads: dict[str, bytes]) -> None:
    open_page(at, "calculator", "Calculator")
    errors: list[str] = []
    run(at.slider(key="calc_kmax").set_value(12), "Calculator")
    for p in (0.9, 0.73, 0.42, 0.99):
        run(at.slider(key="calc_p").set_value(p), "Calculator")
        table = at.dataframe[0].value
        assert list(table.columns) == ["k", "pass@k", "pass^k", "envelope"]
        errors += rate_errors(records(table), p, [5, 10])
        header, rows = csv_rows(download(at, downloads, "calculator-rate"))
        assert header[:3] == ["k", "pass_at_k", "pass_hat_k"]
        errors += curve_errors(rows, p, 12)
    for n, c in ((20, 17), (7, 3), (5, 0), (9, 9)):
        run(at.number_input(key="calc_n").set_value(n), "Calculator")
        run(at.number_input(key="calc_c").set_value(c), "Calculator")
        labels = column_labels(at, 1)
        for column, label in RUNS_LABELS.items():
            assert labels[column]["label"] == label, labels
            assert labels[column]["type_config"]["format"] == "percent", labels
        table = at.dataframe[1].value
        assert list(table.columns) == ["k", *RUNS_LABELS]
        errors += runs_errors(records(table), n, c)
        header, rows = csv_rows(download(at, downloads, "calculator-runs"))
        assert header == ["k", *RUNS_LABELS]
        errors += [f"CSV: {e}" for e in runs_errors(rows, n, c)]
    assert not errors, report(errors)


def test_unknown_cells_say_so() -> None:
    """The parser the other tests use refuses what it must: a shown number for an UNKNOWN
    cell, UNKNOWN for a known one, a value off by more than the shown precision."""
    cell = {"value": 0.557, "ci_low": 0.4, "ci_high": 0.704}
    assert not pct_ci_errors("x", "55.7% [40.0–70.4]", cell)
    assert pct_ci_errors("x", "55.8% [40.0–70.4]", cell)
    assert pct_ci_errors("x", "55.7% [40.0–70.5]", cell)
    assert pct_ci_errors("x", UNKNOWN, cell)
    assert pct_ci_errors("x", "55.7% [40.0–70.4]", None)
    assert not pct_ci_errors("x", UNKNOWN, {"value": None})
