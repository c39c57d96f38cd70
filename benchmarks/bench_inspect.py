"""Inspect log benchmark: relidash's load of Inspect AI logs against Inspect's own reader.

Builds (or reuses) a corpus of Inspect `.eval` logs of 100 samples x 5 epochs each:
a few base logs written by the real inspect-ai in the throwaway venv (the scripted agent
of tools/make_inspect_fixtures.py on `mockllm/model`), then copies of them as further
suites and releases (header.json rewritten: task, release, creation time; every other
member copied byte for byte, so each copy is a complete log Inspect reads). Then, on the
same files:

- `relidash summary DIR --json --catalog PATH` as a subprocess: cold (no catalog), and
  warm (unchanged directory, existing catalog), the median of several runs, with peak RSS;
- `inspect_ai.log.read_eval_log(path)` in the throwaway venv (what Inspect does to read a
  log: every sample), on a sample of the files, scaled per file to the corpus; and, for
  reference, Inspect's lighter listing read (`header_only=True` plus
  `read_eval_log_sample_summaries`), the part of a log relidash reads too.

Usage: python benchmarks/bench_inspect.py [--logs 500] [--inspect-files 50] [--out DIR]
Prints its figures; nothing is written inside the repository. Not a test.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO / "benchmarks"))

import make_inspect_fixtures as fixtures  # noqa: E402
import zstandard  # noqa: E402
from bench_load import fresh_bytecode, run_timed  # noqa: E402
from figures import keep  # noqa: E402

from dashboard.data.formats.inspect.zip_members import read_directory  # noqa: E402

SAMPLES, EPOCHS = 100, 5
BASE_RELEASES = ("v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0", "v2.4.0")
SUITES = 10
CORPUS_LAYOUT = "1"  # bump when the corpus plan changes
TARGET_SPEEDUP = 4.0
TARGET_WARM_S = 1.0

BASE_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import make_inspect_fixtures as m
for run in json.loads(sys.argv[2]):
    m.run_one(run)
"""

INSPECT_SCRIPT = r"""
import json, sys, time
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries
rows = []
for path in json.load(sys.stdin):
    t0 = time.perf_counter()
    log = read_eval_log(path)
    t1 = time.perf_counter()
    header = read_eval_log(path, header_only=True)
    summaries = read_eval_log_sample_summaries(path)
    t2 = time.perf_counter()
    assert len(log.samples) == len(summaries)
    rows.append({"full": t1 - t0, "listing": t2 - t1, "samples": len(log.samples)})
json.dump(rows, sys.stdout)
"""


def base_logs(out: Path, python: Path) -> list[Path]:
    """The real logs the corpus is copied from (written once, then reused)."""
    base = out / "base"
    wanted = [base / f"base-{r}.eval" for r in BASE_RELEASES]
    if all(p.exists() for p in wanted):
        return wanted
    base.mkdir(parents=True, exist_ok=True)
    runs = [
        {
            "dir": "bench",
            "out": str(base),
            "name": f"base-{r}",
            "release": r,
            "epochs": EPOCHS,
            "samples": SAMPLES,
        }  # fmt: skip
        for r in BASE_RELEASES
    ]
    started = time.perf_counter()
    subprocess.run(
        [str(python), "-c", BASE_SCRIPT, str(REPO / "tools"), json.dumps(runs)],
        cwd=REPO,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"base logs: {len(runs)} written by inspect-ai in {time.perf_counter() - started:.0f} s")
    return wanted


def rewritten(base: bytes, replace: dict[str, bytes]) -> bytes:
    """The archive with some members replaced (Zstandard, as Inspect writes them) and every
    other member's compressed bytes copied as they are."""
    out, central = bytearray(), bytearray()
    members = read_directory(io.BytesIO(base), len(base))
    for name, member in members.items():
        if name in replace:
            data = replace[name]
            raw = zstandard.ZstdCompressor().compress(data)
            crc, size = zlib.crc32(data), len(data)
        else:
            name_len, extra_len = struct.unpack_from("<HH", base, member.offset + 26)
            start = member.offset + 30 + name_len + extra_len
            raw, crc, size = base[start : start + member.compressed_size], member.crc, member.size
        encoded, offset = name.encode(), len(out)
        out += struct.pack(
            "<4sHHHHHLLLHH", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(raw), size, len(encoded), 0
        )
        out += encoded + raw
        central += struct.pack(
            "<4sHHHHHHLLLHHHHHLL", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(raw), size,
            len(encoded), 0, 0, 0, 0, 0, offset,
        ) + encoded  # fmt: skip
    start = len(out)
    out += central + struct.pack(
        "<4sHHHHLLH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0
    )
    return bytes(out)


def ensure_corpus(out: Path, logs: int, python: Path) -> Path:
    corpus = out / f"corpus-{logs}"
    marker = corpus / f".layout-{CORPUS_LAYOUT}"
    if marker.exists():
        return corpus
    shutil.rmtree(corpus, ignore_errors=True)
    bases = [p.read_bytes() for p in base_logs(out, python)]
    per_suite = -(-logs // SUITES)
    for i in range(logs):
        suite, release = i % SUITES, i // SUITES
        base = bases[i % len(bases)]
        header = json.loads(_member(base, "header.json"))
        header["eval"]["task"] = f"bench_suite_{suite:02d}"
        header["eval"]["metadata"] = {"release": f"v3.{release}.0"}
        header["eval"]["created"] = f"2026-{1 + release * 11 // per_suite:02d}-01T00:00:00+00:00"
        target = corpus / f"suite-{suite:02d}" / f"v3.{release}.0.eval"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(rewritten(base, {"header.json": json.dumps(header).encode()}))
    marker.touch()
    return corpus


def _member(archive: bytes, name: str) -> bytes:
    from dashboard.data.formats.inspect.zip_members import read_member

    handle = io.BytesIO(archive)
    return read_member(handle, read_directory(handle, len(archive))[name], 1 << 30)


def timed(command: list[str], stdin: bytes | None = None) -> tuple[float, float, bytes]:
    """(wall seconds, the child's own peak RSS in MB, stdout): bench_load's run_timed."""
    result = run_timed(command, stdin, cwd=REPO)
    return result.seconds, result.peak_rss_mb, result.stdout


def relidash_summary(corpus: Path, catalog: Path) -> tuple[float, float, dict[str, Any]]:
    seconds, rss, stdout = timed(
        [
            sys.executable,
            "-m",
            "dashboard.cli",
            "summary",
            str(corpus),
            "--json",
            "--catalog",
            str(catalog),
        ]  # fmt: skip
    )
    return seconds, rss, json.loads(stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logs", type=int, default=500)
    parser.add_argument("--inspect-files", type=int, default=50, help="files Inspect reads")
    parser.add_argument("--warm-runs", type=int, default=5)
    default_out = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--out", type=Path, default=default_out / "relidash-bench-inspect")
    args = parser.parse_args(argv)
    fresh_bytecode()

    python = fixtures.ensure_venv()
    corpus = ensure_corpus(args.out, args.logs, python)
    files = sorted(corpus.rglob("*.eval"))
    size = sum(p.stat().st_size for p in files)
    print(f"corpus: {len(files)} Inspect logs of {SAMPLES} samples x {EPOCHS} epochs, "
          f"{size / 1e6:.0f} MB, in {corpus}")  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.duckdb"
        cold, cold_rss, document = relidash_summary(corpus, catalog)
        assert len(document["reports"]) == len(files), document["problems"][:3]
        assert not document["problems"], document["problems"][:3]
        warm = [relidash_summary(corpus, catalog)[0] for _ in range(args.warm_runs)]

    step = max(1, len(files) // args.inspect_files)
    chosen = files[::step][: args.inspect_files]
    _, _, out = timed(
        [str(python), "-c", INSPECT_SCRIPT], json.dumps([str(p) for p in chosen]).encode()
    )
    rows = json.loads(out)
    full = statistics.mean(r["full"] for r in rows) * len(files)
    listing = statistics.mean(r["listing"] for r in rows) * len(files)

    speedup = full / cold
    print()
    print(f"{'measure':<58} {'seconds':>9}")
    print("-" * 68)
    print(f"{'relidash summary --json, cold (empty catalog)':<58} {cold:>9.2f}")
    print(f"{'  peak RSS of that process (MB)':<58} {cold_rss:>9.0f}")
    print(f"{f'relidash summary --json, warm (median of {len(warm)})':<58} "
          f"{statistics.median(warm):>9.2f}  ({min(warm):.2f}-{max(warm):.2f})")  # fmt: skip
    print(f"{f'Inspect read_eval_log, every log (scaled from {len(rows)} files)':<58} {full:>9.1f}")
    print(f"{'Inspect header_only + sample summaries (scaled, reference)':<58} {listing:>9.1f}")
    print()
    print(f"cold: relidash {speedup:.1f}x faster than read_eval_log (target >= "
          f"{TARGET_SPEEDUP:g}x: {'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}); "
          f"{listing / cold:.1f}x faster than Inspect's listing read")  # fmt: skip
    median_warm = statistics.median(warm)
    print(f"warm: {median_warm:.2f} s to the complete summary (target < {TARGET_WARM_S:g} s: "
          f"{'met' if median_warm < TARGET_WARM_S else 'NOT met'})")  # fmt: skip
    per_log = cold / len(files) * 1000
    print(
        f"per log: relidash {per_log:.1f} ms cold, read_eval_log {full / len(files) * 1000:.0f} ms"
    )
    keep(
        "bench_inspect",
        "python benchmarks/bench_inspect.py",
        [
            (
                "Inspect logs cold: summary --json against read_eval_log",
                f"{cold:.1f} s vs {full:.0f} s (peak RSS {cold_rss:.0f} MB)",
                f">= {TARGET_SPEEDUP:g}x faster",
                f"{speedup:.0f}x {'met' if speedup >= TARGET_SPEEDUP else 'NOT met'}",
            ),
            (
                f"Inspect logs warm: summary --json (median of {len(warm)})",
                f"{median_warm:.2f} s",
                f"< {TARGET_WARM_S:g} s",
                "met" if median_warm < TARGET_WARM_S else "NOT met",
            ),
        ],
        setting=f"{len(files)} Inspect .eval logs copied from logs inspect-ai wrote",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
