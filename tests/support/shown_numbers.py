"""Read back the numbers a page or a CSV download shows, and say what they must equal.

Shared by tests/app/test_page_numbers.py (AppTest) and tests/browser/test_browser_numbers.py
(Chromium). The expectations never come from the analysis function a page calls: they
come from `relidash summary --json` (run as a subprocess), from multivon-eval's own
numbers (tests/expected/sample_reports.json, written by tools/upstream_numbers.py with
multivon-eval 0.20.0), or from an independent computation: pass@k and pass^k of (n, c)
by hand with math.comb, dashboard.stats called directly, and case matching re-implemented
here from its documented rule. Shown text is parsed back to numbers and compared at the
precision it is shown with, one column at a time, so a swapped or mislabelled column
fails.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from math import comb
from pathlib import Path
from typing import Any

from dashboard.analysis.loading import refresh_catalog
from dashboard.data.catalog import open_catalog
from dashboard.data.catalog.queries import fetch_rows
from dashboard.stats.paired import paired_bootstrap_ci

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_reports"
UPSTREAM = ROOT / "tests" / "expected" / "sample_reports.json"

PCT_CI = re.compile(r"(\d+\.\d)% \[(\d+\.\d)–(\d+\.\d)\]")
PCT = re.compile(r"(\d+\.\d)%")
ENVELOPE = re.compile(r"(-?\d+\.\d) pts \((gambler|in between|steady)\)")
DELTA = re.compile(r"([+-]\d+\.\d) pts \[([+-]\d+\.\d), ([+-]\d+\.\d)\] over (\d+) cases( ◆)?")
UNKNOWN = "UNKNOWN"
NO_CHANGE = "—"
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# The paired Δ of the Releases table: dashboard/analysis/deltas.py documents these.
DELTA_CONFIDENCE, DELTA_RESAMPLES, DELTA_SEED = 0.95, 2000, 0


# ---- the sources ---------------------------------------------------------------------------


def run_summary(directory: Path, by: str) -> dict[str, Any]:
    """`relidash summary DIR --json --by BY --catalog :memory:`, as a separate process."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "dashboard.cli",
            "summary",
            str(directory),
            "--json",
            "--by",
            by,
            "--catalog",
            ":memory:",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    return doc


def upstream_numbers() -> dict[str, dict[str, Any]]:
    """multivon-eval 0.20.0's numbers for every sample report, by path under sample_reports/."""
    numbers: dict[str, dict[str, Any]] = json.loads(UPSTREAM.read_text(encoding="utf-8"))
    return numbers


def catalog_case_rows(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Every case row of every loaded report (the data layer's suite_cases query, default
    policy), by report file, in file order: the per-case (n, c) the numbers start from."""
    con = open_catalog(":memory:")
    try:
        refresh_catalog(con, directory)
        rows: dict[str, list[dict[str, Any]]] = {}
        for suite in sorted(
            {r["suite"] for r in fetch_rows(con, "read/report_overview", suites=None, release=None)}
        ):
            for row in fetch_rows(
                con, "read/suite_cases", suite=suite, count_agent_errors=False, report_ids=None
            ):
                rows.setdefault(row["file"], []).append(row)
        return rows
    finally:
        con.close()


def suite_records(by_release: Mapping[str, Any], suite: str) -> list[dict[str, Any]]:
    """The summary's entries of one suite, in release order (as the pages list them)."""
    records = [r for r in by_release["releases"] if r["suite"] == suite]
    return sorted(records, key=lambda r: int(r["release_rank"]))


# ---- parsing what is shown -------------------------------------------------------------------


def within(shown: float, exact: float, decimals: int) -> bool:
    """Whether `shown`, printed with `decimals` decimals, can be `exact` rounded."""
    return abs(shown - exact) <= 0.5 * 10.0**-decimals + 1e-9


def known(cell: Mapping[str, Any] | None) -> bool:
    return cell is not None and cell.get("value") is not None


def pct_ci_errors(where: str, text: str, cell: Mapping[str, Any] | None) -> list[str]:
    """A metric cell as shown ("55.7% [40.0–70.4]" or UNKNOWN) against {value, ci_low, ci_high}
    (None, or a None value, for UNKNOWN)."""
    if text == UNKNOWN:
        return [] if not known(cell) else [f"{where}: shows UNKNOWN, expected {dict(cell or {})}"]
    match = PCT_CI.fullmatch(text)
    if match is None:
        return [f"{where}: {text!r} is neither 'v% [low–high]' nor UNKNOWN"]
    if not known(cell):
        return [f"{where}: shows {text!r}, expected UNKNOWN"]
    assert cell is not None
    shown = [float(g) for g in match.groups()]
    exact = [100 * float(cell[f]) for f in ("value", "ci_low", "ci_high")]
    wrong = [
        f"{name} {s} != {e:.4f}"
        for name, s, e in zip(("value", "ci_low", "ci_high"), shown, exact, strict=True)
        if not within(s, e, 1)
    ]
    return [f"{where}: shows {text!r}: {', '.join(wrong)}"] if wrong else []


def envelope_errors(
    where: str, text: str, at: Mapping[str, Any] | None, hat: Mapping[str, Any] | None
) -> list[str]:
    """`37.5 pts (in between)` against 100 × (pass@k − pass^k) and its reading."""
    if not (known(at) and known(hat)):
        return [] if text == UNKNOWN else [f"{where}: shows {text!r}, expected UNKNOWN"]
    assert at is not None and hat is not None
    width = 100 * (float(at["value"]) - float(hat["value"]))
    reading = "gambler" if width > 50 else ("steady" if width < 20 else "in between")
    match = ENVELOPE.fullmatch(text)
    if match is None:
        return [f"{where}: {text!r} is not 'w pts (reading)'"]
    if not within(float(match[1]), width, 1) or match[2] != reading:
        return [f"{where}: shows {text!r}, expected {width:.4f} pts ({reading})"]
    return []


def delta_errors(
    where: str, text: str, expected: tuple[float, float, float, int] | None
) -> list[str]:
    """`+4.3 pts [+0.0, +13.0] over 23 cases ◆` against (Δ, low, high, pairs), or — for none."""
    if expected is None:
        return [] if text == NO_CHANGE else [f"{where}: shows {text!r}, expected {NO_CHANGE}"]
    match = DELTA.fullmatch(text)
    if match is None:
        return [f"{where}: {text!r} is not a paired change, expected {expected}"]
    delta, low, high, pairs = expected
    shown = [float(match[i]) for i in (1, 2, 3)]
    wrong = [
        f"{name} {s} != {100 * e:.4f}"
        for name, s, e in zip(("Δ", "low", "high"), shown, (delta, low, high), strict=True)
        if not within(s, 100 * e, 1)
    ]
    if int(match[4]) != pairs:
        wrong.append(f"pairs {match[4]} != {pairs}")
    if bool(match[5]) != (low > 0 or high < 0):
        wrong.append(f"◆ shown {bool(match[5])}, interval [{low:.4f}, {high:.4f}]")
    return [f"{where}: shows {text!r}: {', '.join(wrong)}"] if wrong else []


def pct_errors(where: str, text: str, exact: float) -> list[str]:
    """A bare percentage ("59.0%") against a fraction."""
    match = PCT.fullmatch(text)
    if match is None or not within(float(match[1]), 100 * exact, 1):
        return [f"{where}: shows {text!r}, expected {100 * exact:.4f}%"]
    return []


def same_id(shown: Any, full: Any) -> bool:
    """Whether a shown case id is the case's id, in full or cut short with an ellipsis (the
    pages shorten digest ids; links and CSV downloads keep them whole)."""
    if not (isinstance(full, str) and full):
        return not (isinstance(shown, str) and shown)
    if not isinstance(shown, str):
        return False
    return shown == full or (shown.endswith("…") and len(shown) > 8 and full.startswith(shown[:-1]))


def csv_rows(data: bytes) -> tuple[list[str], list[dict[str, str]]]:
    """A downloaded CSV: its header and rows, the formula-neutralising apostrophe taken off."""

    def plain(cell: str) -> str:
        return cell[1:] if cell.startswith("'") and cell[1:].startswith(FORMULA_STARTS) else cell

    table = list(csv.reader(io.StringIO(data.decode("utf-8"))))
    assert table, "the CSV is empty"
    header = [plain(c) for c in table[0]]
    return header, [dict(zip(header, map(plain, row), strict=True)) for row in table[1:]]


# ---- independent computations ------------------------------------------------------------------


def pass_at(n: int, c: int, k: int) -> float:
    """pass@k of one case by hand: 1 − C(n−c, k)/C(n, k) (Chen et al. 2021)."""
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat(n: int, c: int, k: int) -> float:
    """pass^k of one case by hand: C(c, k)/C(n, k) (Yao et al. 2024)."""
    return comb(c, k) / comb(n, k)


def evaluated(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The rows of cases that enter the metrics (the catalog leaves n NULL for the others)."""
    return [r for r in rows if r["n"] is not None]


def case_keys(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The documented matching rule (dashboard/analysis/matching.py): by case_id where a case
    has one, else by input text, joined to the one id ever seen with that input."""
    ids_by_input: dict[str, set[str]] = {}
    for r in rows:
        if isinstance(r["case_id"], str) and r["case_id"]:
            ids_by_input.setdefault(r["input"] or "", set()).add(r["case_id"])
    keys = []
    for r in rows:
        if isinstance(r["case_id"], str) and r["case_id"]:
            keys.append("id:" + r["case_id"])
            continue
        ids = ids_by_input.get(r["input"] or "", set())
        keys.append("id:" + next(iter(ids)) if len(ids) == 1 else "input:" + (r["input"] or ""))
    return keys


def paired_change(
    base: Sequence[Mapping[str, Any]], head: Sequence[Mapping[str, Any]], k: int
) -> tuple[float, float, float, int] | None:
    """Δpass^k of head against base over the cases evaluated in both (in head's file order),
    with the paired bootstrap interval; None when no pair exists or k exceeds a pair's runs."""
    sides = [("base", r) for r in base] + [("head", r) for r in head]
    seen: Counter[tuple[str, str]] = Counter()
    unique = []
    for (side, _), key in zip(sides, case_keys([r for _, r in sides]), strict=True):
        seen[(side, key)] += 1
        unique.append(key if seen[(side, key)] == 1 else f"{key}#{seen[(side, key)]}")
    base_by_key = {key: r for (side, r), key in zip(sides, unique, strict=True) if side == "base"}
    pairs = [
        (base_by_key[key], r)
        for (side, r), key in zip(sides, unique, strict=True)
        if side == "head"
        and key in base_by_key
        and base_by_key[key]["n"] is not None
        and r["n"] is not None
    ]
    if not pairs or k > min(min(b["n"], h["n"]) for b, h in pairs):
        return None
    before = [pass_hat(b["n"], b["c"], k) for b, _ in pairs]
    after = [pass_hat(h["n"], h["c"], k) for _, h in pairs]
    d = paired_bootstrap_ci(before, after, DELTA_CONFIDENCE, DELTA_RESAMPLES, DELTA_SEED)
    return d.delta, d.ci_low, d.ci_high, d.n_pairs


# ---- the Releases table ----------------------------------------------------------------------


def release_columns(k: int) -> list[str]:
    """The Releases table's columns (in no particular order: the page chooses it)."""
    return [
        "release",
        "cases (evaluated / errored / skipped)",
        "runs",
        "pass@1",
        f"pass@{k}",
        f"pass^{k}",
        "envelope",
        f"Δ pass^{k}",
        "format",
    ]


def runs_text(runs: Mapping[str, Any]) -> str:
    low, high = runs["min"], runs["max"]
    return "—" if high is None else (str(high) if low == high else f"{low}–{high}")


def release_table_errors(
    rows: Sequence[Mapping[str, str]],
    k: int,
    records: Sequence[Mapping[str, Any]],
    upstream: Mapping[str, Mapping[str, Any]],
    case_rows: Mapping[str, Sequence[Mapping[str, Any]]],
) -> tuple[list[str], int]:
    """Every cell of the Releases table (rows of column name -> shown text) against the
    summary document's entries of the suite, multivon-eval's numbers for the files it has,
    and the paired Δ computed here from the catalog's case rows.

    Returns the mismatches and how many rows were checked against upstream.
    """
    errors: list[str] = []
    if [r["release"] for r in rows] != [r["release"] for r in records]:
        return [
            f"releases shown {[r['release'] for r in rows]}, "
            f"summary has {[r['release'] for r in records]}"
        ], 0
    against_upstream = 0
    previous: Mapping[str, Any] | None = None
    for row, rec in zip(rows, records, strict=True):
        where = f"{rec['suite']} {rec['release']} k={k}"
        if set(row) != set(release_columns(k)):  # read by name: the order is the page's choice
            errors.append(f"{where}: columns {list(row)}, expected {release_columns(k)}")
            continue
        cases = rec["cases"]
        counts = f"{cases['evaluated']} / {cases['errored']} / {cases['skipped']}"
        if row["cases (evaluated / errored / skipped)"] != counts:
            errors.append(f"{where} cases: shows {row['cases (evaluated / errored / skipped)']!r}")
        if row["runs"] != runs_text(rec["runs"]):
            errors.append(f"{where} runs: shows {row['runs']!r}, summary {rec['runs']}")
        at, hat = rec["pass_at_k"].get(str(k)), rec["pass_hat_k"].get(str(k))
        errors += pct_ci_errors(f"{where} pass@1 vs summary", row["pass@1"], rec["pass_at_k"]["1"])
        errors += pct_ci_errors(f"{where} pass@{k} vs summary", row[f"pass@{k}"], at)
        errors += pct_ci_errors(f"{where} pass^{k} vs summary", row[f"pass^{k}"], hat)
        errors += envelope_errors(f"{where} envelope vs summary", row["envelope"], at, hat)
        up = upstream.get(rec["file"])
        if up is not None:
            against_upstream += 1
            shown = f"{up['evaluated']} / {up['errors']} / {up['skipped']}"
            if row["cases (evaluated / errored / skipped)"] != shown:
                errors.append(f"{where} cases vs upstream: shows {counts!r}, upstream {shown!r}")
            if row["runs"].split("–")[-1] != str(up["runs_per_case"]):
                errors.append(f"{where} runs vs upstream runs_per_case {up['runs_per_case']}")
            up_at, up_hat = up["pass_at_k"].get(str(k)), up["pass_hat_k"].get(str(k))
            errors += pct_ci_errors(
                f"{where} pass@1 vs upstream", row["pass@1"], up["pass_at_k"]["1"]
            )
            errors += pct_ci_errors(f"{where} pass@{k} vs upstream", row[f"pass@{k}"], up_at)
            errors += pct_ci_errors(f"{where} pass^{k} vs upstream", row[f"pass^{k}"], up_hat)
            errors += envelope_errors(
                f"{where} envelope vs upstream", row["envelope"], up_at, up_hat
            )
        change = (
            None
            if previous is None
            else paired_change(case_rows[previous["file"]], case_rows[rec["file"]], k)
        )
        errors += delta_errors(f"{where} Δ pass^{k}", row[f"Δ pass^{k}"], change)
        fmt = rec["format"] + (" (upgraded)" if rec["upgraded"] else "")
        if row["format"] != fmt:
            errors.append(f"{where} format: shows {row['format']!r}, summary {fmt!r}")
        previous = rec
    return errors, against_upstream
