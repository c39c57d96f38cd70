"""Long-history benchmark: many small reports, suites of many releases.

Builds (or reuses) a corpus of simulated 0.15-format reports, `--suites` suites of
`--releases` releases each (default 100 x 1,000 = 100,000 files), then measures in one
run, each as a subprocess with its own peak RSS (os.wait4):

- cold `relidash summary DIR --json --catalog PATH` (no catalog): time, files/s, peak RSS,
  and the catalog's size against the reports';
- warm `relidash summary DIR --suite S --json` for one suite of `--releases` releases, and
  again after one of its files changed (each the median of `--repeats` runs, beside the
  floor measured between them: a fresh process importing the CLI while children walk the
  directory, as every such command does before anything else);
- warm whole-history `--json` (every report): time to its first byte (a median) and to
  the end, and its peak RSS; and `--by release` the same;
- the Releases page's server side for one suite (window of the latest 30 releases, as the
  page computes it), in a fresh process.

Usage: python benchmarks/bench_long.py [--suites N] [--releases N] [--out DIR]
Nothing is written inside the repository but the bytecode cache (git-ignored). Figures are
printed, not asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_load import fresh_bytecode, median_run, run_timed, spread_of  # noqa: E402
from figures import keep  # noqa: E402

from dashboard.simulate import simulate_reports  # noqa: E402

TARGET_FILES_PER_S = 1000.0
TARGET_RSS_MB = 1024.0
TARGET_CATALOG_SHARE = 0.10
TARGET_WARM_S = 1.0
TARGET_FIRST_BYTE_S = 1.0

FLOOR_SCRIPT = r"""
import json, sys, time
from pathlib import Path
t0 = time.perf_counter()
from dashboard.data.sources import walk
walk.walk_ahead(sys.argv[1])  # as the command does, before its imports
import dashboard.cli.main, dashboard.analysis.loading, dashboard.analysis.summary
import dashboard.data.catalog
t1 = time.perf_counter()
walked = walk.take_walk(sys.argv[1])
t2 = time.perf_counter()
entries, _ = walk.scan_directory(Path(sys.argv[1]))
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "floor": t2 - t0, "walk": t3 - t2, "files": len(entries),
                  "ahead": walked is not None}))
"""

PAGE_SCRIPT = r"""
import json, sys, time
t0 = time.perf_counter()
from dashboard.analysis import releases, summary
from dashboard.data.catalog import open_catalog
con = open_catalog(sys.argv[1])
t1 = time.perf_counter()
suite = sys.argv[2]
overview = summary.report_overview(con, [suite])  # what the pages read (app/state.py)
names = [str(r) for r in releases.suite_releases(overview, suite)["release"]]
table = releases.release_table(con, overview, suite, 3, False, (names[-30], names[-1]))
t2 = time.perf_counter()
print(json.dumps({"imports_open": t1 - t0, "table": t2 - t1, "rows": len(table)}))
"""


def ensure_corpus(out: Path, suites: int, releases: int) -> Path:
    reports = out / f"reports-{suites}x{releases}"
    marker = reports / ".complete"
    if marker.exists():
        return reports
    started = time.perf_counter()
    simulate_reports(reports, suites=suites, releases=releases, cases=6, runs=3, fmt="0.15")
    marker.write_text("")
    print(f"corpus: {suites * releases} files in {time.perf_counter() - started:.0f} s")
    return reports


def first_byte(command: list[str]) -> tuple[float, float, int]:
    """(seconds to the first byte of stdout, seconds to the end, bytes written)."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    first = proc.stdout.read(1)
    at_first = time.perf_counter() - started
    rest = len(first) + sum(len(chunk) for chunk in iter(lambda: proc.stdout.read(1 << 20), b""))
    proc.wait()
    return at_first, time.perf_counter() - started, rest


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def mark(ok: bool) -> str:
    return "met" if ok else "MISSED"


def cold_rows(
    relidash: list[str], reports: Path, catalog: Path, files: int
) -> list[tuple[str, str, str, str]]:
    """Cold load: time, files per second, peak RSS, and the catalog against the reports."""
    rows: list[tuple[str, str, str, str]] = []
    # the document is not kept: parsing it here would make this process, and with it every
    # child's measured peak RSS (see run_timed), gigabytes large
    cold = run_timed(
        [*relidash, "summary", str(reports), "--json", "--catalog", str(catalog)],
        keep_stdout=False,
    )
    rate = files / cold.seconds
    share = os.path.getsize(catalog) / size_of(reports)
    rows.append(("cold, every report", f"{cold.seconds:.1f} s ({rate:.0f} files/s)",
                 f">= {TARGET_FILES_PER_S:.0f} files/s", mark(rate >= TARGET_FILES_PER_S)))  # fmt: skip
    rows.append(("peak RSS, cold", f"{cold.peak_rss_mb:.0f} MB", f"<= {TARGET_RSS_MB:.0f} MB",
                 mark(cold.peak_rss_mb <= TARGET_RSS_MB)))  # fmt: skip
    rows.append(("catalog on disk", f"{share:.1%} of the reports", f"<= {TARGET_CATALOG_SHARE:.0%}",
                 mark(share <= TARGET_CATALOG_SHARE)))  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", type=int, default=100)
    parser.add_argument("--releases", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "relidash-long")
    parser.add_argument("--relidash", default=str(REPO / ".venv" / "bin" / "relidash"))
    parser.add_argument(
        "--repeats", type=int, default=5, help="runs of each sub-second figure (the median)"
    )
    parser.add_argument(
        "--warm-only", action="store_true", help="keep the last run's catalog; no cold load"
    )
    args = parser.parse_args(argv)
    fresh_bytecode()
    reports = ensure_corpus(args.out, args.suites, args.releases)
    files = args.suites * args.releases
    catalog = args.out / "catalog.duckdb"
    relidash = [args.relidash]
    rows: list[tuple[str, str, str, str]] = []
    if args.warm_only and catalog.exists():
        print(f"warm figures only, against {catalog} as the last run left it")
    else:
        for leftover in args.out.glob("catalog.duckdb*"):
            leftover.unlink()
        rows += cold_rows(relidash, reports, catalog, files)

    suite = sorted(p.name for p in reports.iterdir() if p.is_dir())[0]  # a directory per suite
    one = [
        *relidash,
        "summary",
        str(reports),
        "--suite",
        suite,
        "--json",
        "--catalog",
        str(catalog),
    ]
    victim = sorted((reports / suite).glob("*.json"))[
        len(list((reports / suite).glob("*.json"))) // 2
    ]
    original, stat = victim.read_bytes(), victim.stat()
    shorter = json.loads(original)
    shorter["cases"] = shorter["cases"][:-1]
    versions = [json.dumps(shorter, indent=2).encode(), original]
    warm_runs, changed_runs, floors = [], [], []
    try:
        for i in range(args.repeats):
            warm_runs.append(run_timed(one))
            # each run sees one changed file: the shorter version and the original in turn
            victim.write_bytes(versions[i % 2])
            os.utime(victim, (time.time() - 10, time.time() - 10))  # not mid-write
            changed_runs.append(run_timed(one))
            floor = run_timed([sys.executable, "-c", FLOOR_SCRIPT, str(reports)], cwd=REPO)
            floors.append(json.loads(floor.stdout))
    finally:
        victim.write_bytes(original)
        os.utime(victim, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    warm = median_run(warm_runs, lambda run: run.seconds)
    changed = median_run(changed_runs, lambda run: run.seconds)
    floor = median_run(floors, lambda f: f["floor"])
    rows.append((f"warm --suite {suite} --json ({args.releases} releases)",
                 f"{warm.seconds:.2f} s {spread_of([r.seconds for r in warm_runs])}",
                 f"< {TARGET_WARM_S:.0f} s", mark(warm.seconds < TARGET_WARM_S)))  # fmt: skip
    rows.append(("the same after one of its files changed",
                 f"{changed.seconds:.2f} s {spread_of([r.seconds for r in changed_runs])}",
                 f"< {TARGET_WARM_S:.0f} s", mark(changed.seconds < TARGET_WARM_S)))  # fmt: skip
    rows.append(("floor: fresh process, CLI imports beside the walk ahead",
                 f"{floor['floor']:.2f} s (imports {floor['imports']:.2f} s, walk alone {floor['walk']:.2f} s"
                 f"{'' if floor['ahead'] else '; NOT walked ahead'})", "", ""))  # fmt: skip

    for by in ("file", "release"):
        command = [
            *relidash,
            "summary",
            str(reports),
            "--json",
            "--by",
            by,
            "--catalog",
            str(catalog),
        ]
        # the first byte is sub-second: a median; the whole document's end, from that run
        runs = [first_byte(command) for _ in range(args.repeats)]
        at_first, total, written = median_run(runs, lambda run: run[0])
        # not kept: reading the document into this process would carry its size into the
        # next child's peak RSS (Linux counts a parent's at fork), and --by release's
        # figure would then be far above what it is measured alone
        whole = run_timed(command, keep_stdout=False)
        rows.append((f"warm whole --json --by {by}: first byte / end",
                     f"{at_first:.2f} s {spread_of([r[0] for r in runs])} / {total:.1f} s ({written / 1e6:.0f} MB)",
                     f"first byte < {TARGET_FIRST_BYTE_S:.0f} s", mark(at_first < TARGET_FIRST_BYTE_S)))  # fmt: skip
        rows.append((f"peak RSS, whole --by {by}", f"{whole.peak_rss_mb:.0f} MB",
                     f"<= {TARGET_RSS_MB:.0f} MB", mark(whole.peak_rss_mb <= TARGET_RSS_MB)))  # fmt: skip

    page = run_timed([sys.executable, "-c", PAGE_SCRIPT, str(catalog), suite], cwd=REPO)
    figures = json.loads(page.stdout)
    rows.append(("Releases page server side (latest 30 of the suite)",
                 f"{figures['table']:.2f} s (+{figures['imports_open']:.2f} s imports, open)",
                 "browser < 1.5 s", ""))  # fmt: skip

    width = max(len(r[0]) for r in rows)
    print(f"\n{files} reports ({args.suites} suites x {args.releases} releases), "
          f"{size_of(reports) / 1e9:.2f} GB, {os.cpu_count()} cores")  # fmt: skip
    for label, value, target, verdict in rows:
        print(f"{label:<{width}}  {value:<38} {target:<22} {verdict}")
    keep(
        "bench_long",
        "python benchmarks/bench_long.py",
        rows,
        setting=f"{files} reports ({args.suites} suites x {args.releases} releases), "
        f"{size_of(reports) / 1e9:.2f} GB",
        partial=args.warm_only,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
