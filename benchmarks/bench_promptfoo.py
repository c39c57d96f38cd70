"""promptfoo eval benchmark: how fast relidash loads a directory of promptfoo evals.

Synthesizes `--evals` eval files (default 100) of `--rows` rows each (default 300) from
the shape of a real one (tests/fixtures/promptfoo/ticket_routing_v2.json, written by
promptfoo 0.123.1): its four (prompt, provider) pairs, its rows as templates, tests of
five repeats each with seeded outcomes (errors among them), and promptfoo's own counts in
`results.prompts[].metrics` made to agree. Evals are spread over ten descriptions (suites)
and tagged releases. Then, as a subprocess each, `relidash summary DIR --json --catalog
PATH`: cold (no catalog), warm (nothing changed; the median of `--warm-runs`), and after
one new eval is added.

Usage: python benchmarks/bench_promptfoo.py [--evals 100] [--rows 300] [--warm-runs 3]
Writes only to a temporary directory and prints its figures. Not a test.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_load import fresh_bytecode, run_timed  # noqa: E402
from figures import keep  # noqa: E402

TEMPLATE = REPO / "tests" / "fixtures" / "promptfoo" / "ticket_routing_v2.json"
REPEATS = 5
SUITES = 10
TARGET_COLD_S = 5.0
ERROR_RATE = 0.05


def synthesize(template: dict[str, Any], index: int, rows: int, seed: int) -> dict[str, Any]:
    """One eval of `rows` rows shaped like the template: its pairs, its rows' fields."""
    rng = random.Random(seed * 100_003 + index)
    data = copy.deepcopy({k: v for k, v in template.items() if k != "results"})
    results = copy.deepcopy({k: v for k, v in template["results"].items() if k != "results"})
    pairs = results["prompts"]
    by_pair: dict[int, list[dict[str, Any]]] = {}
    for row in template["results"]["results"]:
        by_pair.setdefault(row["promptIdx"], []).append(row)
    suite, release = index % SUITES, index // SUITES
    data["evalId"] = f"eval-b{index:03d}-2026-03-{1 + release % 28:02d}T00:00:{suite:02d}"
    data["config"]["description"] = f"Bench suite {suite:02d}"
    data["config"]["tags"] = {"release": f"v{release + 1}"}
    results["timestamp"] = f"2026-03-{1 + release % 28:02d}T{release // 28:02d}:00:{suite:02d}.000Z"
    counts = [[0, 0, 0] for _ in pairs]
    out = []
    tests = max(1, rows // (len(pairs) * REPEATS))
    for test in range(tests):
        rate = rng.random()
        for repeat in range(REPEATS):
            for pair in range(len(pairs)):
                row = copy.deepcopy(rng.choice(by_pair[pair]))
                row["testIdx"] = test * REPEATS + repeat
                row["testCase"]["metadata"] = {"case_id": f"case-{test:03d}", "tier": test % 3}
                row["metadata"] = dict(row["testCase"]["metadata"])
                draw = rng.random()
                reason = 2 if draw < ERROR_RATE else 0 if draw < rate else 1
                row["failureReason"], row["success"] = reason, reason == 0
                row["score"] = 1.0 if reason == 0 else 0.0
                counts[pair][reason] += 1
                out.append(row)
    for pair, (passed, failed, errored) in zip(pairs, counts, strict=True):
        pair["metrics"] |= {
            "testPassCount": passed,
            "testFailCount": failed,
            "testErrorCount": errored,
        }
    results["results"] = out
    data["results"] = results
    return data


def summary(corpus: Path, catalog: Path) -> tuple[float, float, dict[str, Any]]:
    command = [sys.executable, "-m", "dashboard.cli", "summary", str(corpus), "--json"]
    timed = run_timed([*command, "--catalog", str(catalog)], cwd=REPO)
    return timed.seconds, timed.peak_rss_mb, json.loads(timed.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--evals", type=int, default=100)
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--warm-runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    fresh_bytecode()
    template = json.loads(TEMPLATE.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="relidash-bench-promptfoo-") as scratch:
        corpus, catalog = Path(scratch) / "evals", Path(scratch) / "catalog.duckdb"
        corpus.mkdir()
        size = 0
        for i in range(args.evals):
            target = corpus / f"eval_{i:03d}.json"
            target.write_text(json.dumps(synthesize(template, i, args.rows, args.seed)))
            size += target.stat().st_size
        rows = args.evals * max(1, args.rows // 20) * 20
        print(f"corpus: {args.evals} evals x {rows // args.evals} rows, {size / 2**20:.0f} MiB")
        cold, cold_rss, document = summary(corpus, catalog)
        reports = len(document["reports"])
        assert not document["problems"], document["problems"][:3]
        warm = statistics.median(summary(corpus, catalog)[0] for _ in range(args.warm_runs))
        extra = corpus / f"eval_{args.evals:03d}.json"
        extra.write_text(json.dumps(synthesize(template, args.evals, args.rows, args.seed)))
        one_new, _, after = summary(corpus, catalog)
        assert len(after["reports"]) == reports + len(template["results"]["prompts"])
    verdict = "met" if cold < TARGET_COLD_S else "missed"
    print(f"cold load ({reports} reports): {cold:.2f} s, peak RSS {cold_rss:.0f} MB "
          f"(target < {TARGET_COLD_S:g} s: {verdict})")  # fmt: skip
    print(f"warm load (median of {args.warm_runs}): {warm:.2f} s")
    print(f"one new eval: {one_new:.2f} s")
    keep(
        "bench_promptfoo",
        "python benchmarks/bench_promptfoo.py",
        [
            (
                "promptfoo evals cold",
                f"{cold:.2f} s ({reports} reports), peak RSS {cold_rss:.0f} MB",
                f"< {TARGET_COLD_S:g} s",
                verdict,
            ),
            ("promptfoo evals warm", f"{warm:.2f} s"),
            ("promptfoo: one new eval", f"{one_new:.2f} s"),
        ],  # fmt: skip
        setting=f"{args.evals} evals x {rows // args.evals} rows ({size / 2**20:.0f} MiB)",
    )
    return 0 if cold < TARGET_COLD_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
