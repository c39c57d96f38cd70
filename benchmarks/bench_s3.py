"""Object-storage benchmark: `relidash summary s3://bucket/prefix` against moto's S3 server on
the loopback interface.

Builds (or reuses) a corpus of simulated multivon-eval reports (`relidash simulate`, the
0.15 format: 30 cases x 5 runs a report), uploads it to a bucket in moto's
server (`moto[server]`, started on 127.0.0.1 as the tests start it), and times, each as a
subprocess with interpreter start and imports included:

- the floor for a cold load: listing and downloading every object in parallel (s3fs,
  16 threads, as relidash's mirror does) plus the local cold load of the same files
  (`relidash summary DIR --json`, empty catalog);
- relidash's cold load from the bucket (empty catalog and mirror);
- the warm load (unchanged bucket, existing catalog and mirror), median of 5: one listing,
  no download; target under 1 s;
- one changed object among them, median of 3;
- a running server's warm check (what a new session on an unchanged bucket costs: one
  listing compared with the catalog, in-process, no interpreter start or imports), median
  of 5, and its first start on an existing catalog (copy, attach, one listing).

Usage: python benchmarks/bench_s3.py [--objects 2000] [--out DIR]
Prints its figures; nothing is written inside the repository. Not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests" / "support"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_load import fresh_bytecode  # noqa: E402
from figures import keep  # noqa: E402
from s3_server import AWS_CLEARED, aws_variables, moto_server, s3_client  # noqa: E402

BUCKET = "relidash-bench"
PREFIX = "reports"
SUITES = 20
TARGET_WARM_S = 1.0
WORKERS = 16

SERVER_CHECK = r"""
import statistics, sys, time
from dashboard.analysis import opening
from dashboard.data.sources.reports import open_source
started = time.perf_counter()
source = open_source(sys.argv[1])
options = opening.LoadOptions()
served = opening.served_catalog(source, options)
opening.refresh_served(served, options)
first = time.perf_counter() - started
checks = []
for _ in range(5):
    t = time.perf_counter()
    assert served.stale() is False, served.notice
    checks.append(time.perf_counter() - t)
print(f"{first:.3f} {statistics.median(checks):.3f} {min(checks):.3f} {max(checks):.3f}")
"""

FETCH_ALL = r"""
import os, sys, time
from concurrent.futures import ThreadPoolExecutor
import s3fs
root, out = sys.argv[1], sys.argv[2]
fs = s3fs.S3FileSystem(endpoint_url=os.environ["AWS_ENDPOINT_URL"], skip_instance_cache=True)
found = [p for p in fs.find(root) if p.endswith(".json")]
def get(path):
    target = os.path.join(out, path.replace("/", "_"))
    fs.get_file(path, target)
    return os.path.getsize(target)
with ThreadPoolExecutor(max_workers=int(sys.argv[3])) as pool:
    sizes = list(pool.map(get, found))
print(len(found), sum(sizes))
"""


@dataclass(frozen=True)
class Timed:
    seconds: float
    peak_rss_mb: float
    stdout: bytes
    stderr: bytes


def run_timed(command: Sequence[str], env: dict[str, str]) -> Timed:
    """Wall time and the child's own peak RSS (os.wait4 rusage)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, cwd=REPO
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = Timed(seconds, usage.ru_maxrss / 1024, out.read(), err.read())
    if code != 0:
        sys.stderr.write(result.stderr.decode(errors="replace"))
        raise SystemExit(f"bench_s3: {command[:3]} exited with {code}")
    return result


def relidash() -> list[str]:
    script = Path(sys.executable).with_name("relidash")
    return [str(script)] if script.exists() else [sys.executable, "-m", "dashboard.cli"]


def build_corpus(out: Path, objects: int) -> Path:
    corpus = out / f"corpus-{objects}"
    if corpus.is_dir() and len(list(corpus.rglob("*.json"))) == objects:
        return corpus
    shutil.rmtree(corpus, ignore_errors=True)
    releases = -(-objects // SUITES)
    subprocess.run(
        [*relidash(), "simulate", "--out", str(corpus), "--suites", str(SUITES),
         "--releases", str(releases), "--cases", "30", "--runs", "5", "--format", "0.15"],
        check=True, cwd=REPO,
    )  # fmt: skip
    extra = sorted(corpus.rglob("*.json"))[objects:]
    for path in extra:
        path.unlink()
    return corpus


def upload(client: Any, corpus: Path) -> tuple[int, int]:
    files = sorted(corpus.rglob("*.json"))

    def put(path: Path) -> int:
        body = path.read_bytes()
        key = f"{PREFIX}/{path.relative_to(corpus).as_posix()}"
        client.put_object(Bucket=BUCKET, Key=key, Body=body)
        return len(body)

    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        sizes = list(pool.map(put, files))
    return len(files), sum(sizes)


def environment(endpoint: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in AWS_CLEARED}
    env.update(aws_variables(endpoint, home))
    return env


def last_line(timed: Timed) -> str:
    lines = timed.stderr.decode(errors="replace").strip().splitlines()
    return lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=2000)
    default_out = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    parser.add_argument("--out", type=Path, default=default_out / "relidash-bench-s3")
    args = parser.parse_args()
    fresh_bytecode()
    args.out.mkdir(parents=True, exist_ok=True)
    corpus = build_corpus(args.out, args.objects)
    url = f"s3://{BUCKET}/{PREFIX}"

    with tempfile.TemporaryDirectory(prefix="relidash-bench-s3-") as scratch_dir:
        scratch = Path(scratch_dir)
        with moto_server(scratch / "moto.log") as endpoint:
            client = s3_client(endpoint)
            client.create_bucket(Bucket=BUCKET)
            started = time.perf_counter()
            count, total = upload(client, corpus)
            print(
                f"corpus: {count} objects, {total / 1e6:.1f} MB, in moto's server on "
                f"{endpoint} (uploaded in {time.perf_counter() - started:.1f} s)"
            )
            env = environment(endpoint, scratch / "home")

            fetched = scratch / "fetched"
            fetched.mkdir()
            fetch = run_timed(
                [sys.executable, "-c", FETCH_ALL, f"{BUCKET}/{PREFIX}", str(fetched), str(WORKERS)],
                env,
            )
            local = run_timed(
                [*relidash(), "summary", str(corpus), "--json",
                 "--catalog", str(scratch / "local.duckdb")],
                env,
            )  # fmt: skip
            floor = fetch.seconds + local.seconds
            cold = run_timed([*relidash(), "summary", url, "--json"], env)
            print(
                f"list + download every object in parallel ({WORKERS} threads): {fetch.seconds:.2f} s"
            )
            print(f"local cold load of the same files:                     {local.seconds:.2f} s")
            print(f"  floor (the two added):                              {floor:.2f} s")
            print(
                f"relidash cold load from the bucket:                    {cold.seconds:.2f} s "
                f"({cold.seconds / floor:.2f}x the floor; peak RSS {cold.peak_rss_mb:.0f} MB)"
            )
            print(f"  {last_line(cold)}")

            warm = [run_timed([*relidash(), "summary", url, "--json"], env) for _ in range(5)]
            warm_s = [t.seconds for t in warm]
            print(
                f"warm load, unchanged bucket (median of 5):             "
                f"{statistics.median(warm_s):.2f} s ({min(warm_s):.2f}-{max(warm_s):.2f}; "
                f"target < {TARGET_WARM_S:.0f} s: "
                f"{'met' if statistics.median(warm_s) < TARGET_WARM_S else 'NOT met'})"
            )
            print(f"  {last_line(warm[-1])}")

            keys = sorted(corpus.rglob("*.json"))
            one = []
            for i in range(3):
                path = keys[i * 7]
                body = path.read_bytes() + b" " * (i + 1)
                key = f"{PREFIX}/{path.relative_to(corpus).as_posix()}"
                client.put_object(Bucket=BUCKET, Key=key, Body=body)
                one.append(run_timed([*relidash(), "summary", url, "--json"], env))
            one_s = [t.seconds for t in one]
            print(
                f"one changed object among {count} (median of 3):       "
                f"{statistics.median(one_s):.2f} s ({min(one_s):.2f}-{max(one_s):.2f})"
            )
            print(f"  {last_line(one[-1])}")
            first, check, low, high = (
                float(v)
                for v in run_timed([sys.executable, "-c", SERVER_CHECK, url], env).stdout.split()
            )
            print(
                f"server: first start on the existing catalog:          {first:.2f} s "
                "(imports, copy, one listing)"
            )
            print(
                f"server: warm check of a new session (median of 5):    {check:.2f} s "
                f"({low:.2f}-{high:.2f}; target < {TARGET_WARM_S:.0f} s: "
                f"{'met' if check < TARGET_WARM_S else 'NOT met'})"
            )
            local_warm = [
                run_timed(
                    [*relidash(), "summary", str(corpus), "--json",
                     "--catalog", str(scratch / "local.duckdb")],
                    env,
                ).seconds
                for _ in range(5)
            ]  # fmt: skip
            print(
                f"for reference, local warm load (median of 5):         "
                f"{statistics.median(local_warm):.2f} s"
            )
            warm_median = statistics.median(warm_s)
            keep(
                "bench_s3",
                "python benchmarks/bench_s3.py",
                [
                    (
                        "S3 cold: summary --json, empty catalog and mirror",
                        f"{cold.seconds:.2f} s (peak RSS {cold.peak_rss_mb:.0f} MB)",
                        f"floor {floor:.2f} s (parallel download + local cold load)",
                        f"{cold.seconds / floor:.2f}x the floor",
                    ),
                    (
                        "S3 warm: unchanged bucket, a new process (median of 5)",
                        f"{warm_median:.2f} s",
                        f"< {TARGET_WARM_S:.0f} s",
                        "met" if warm_median < TARGET_WARM_S else "NOT met",
                    ),
                    (
                        "S3 warm: a running server's check for a new session",
                        f"{check:.2f} s",
                        f"< {TARGET_WARM_S:.0f} s",
                        "met" if check < TARGET_WARM_S else "NOT met",
                    ),
                    (
                        f"S3: one changed object among {count} (median of 3)",
                        f"{statistics.median(one_s):.2f} s",
                        "",
                        "",
                    ),
                ],
                setting=f"{count} objects, {total / 1e6:.0f} MB, in moto's S3 server on 127.0.0.1",
            )


if __name__ == "__main__":
    main()
