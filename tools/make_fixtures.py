"""Regenerate sample_reports/ and tests/fixtures/ with real multivon-eval versions.

Orchestrator, stdlib only, any Python >= 3.11. It creates one throwaway venv
per multivon-eval version under ``${XDG_CACHE_HOME:-~/.cache}/relidash-fixtures/
venv-<version>`` (reused when present), runs ``tools/fixture_agent.py`` inside
each to write reports with that version's own ``save_json``, then runs
``tools/upstream_numbers.py`` in the 0.20.0 venv to record the numbers
multivon-eval computes for every file (``tests/expected/<dir>.json``).

multivon-eval is never installed into relidash's environment: it exists only
in these venvs.

Usage::

    python tools/make_fixtures.py                    # everything
    python tools/make_fixtures.py --only-numbers     # recompute tests/expected/*.json
    python tools/make_fixtures.py --out-samples DIR --out-fixtures DIR

Determinism: the simulated agent is a pure function of (suite, case,
release, run), and fixture_agent pins the package's clock, uuids and machine
facts, so a rerun rewrites byte-identical files. File mtimes are set to the
release date (multivon-eval's directory viewer shows mtime as "when").

Naming: before 0.19 the release lives in ``model`` (EvalSuite model_id), e.g.
``v1.9.0``, so every file of a suite names its release the same way; 0.19+ reports carry
``model = "<bot>"`` and the release in
``execution.target_before.declaration.version`` (``declare_target``).
Files are ``<suite>/<YYYY-MM-DD>_<release>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
REPO = TOOLS.parent
VERSIONS = ("0.6.1", "0.15.2", "0.16.0", "0.17.0", "0.18.0", "0.20.0")
NUMBERS_VERSION = "0.20.0"
DECLARE_TARGET_SINCE = (0, 19)

BOTS = {"support-agent": "support-bot", "code-agent": "code-bot"}

# (release, date, multivon-eval version, runs, extra job keys)
SUPPORT_HISTORY: list[tuple[str, str, str, int, dict[str, Any]]] = [
    ("v1.4.0", "2026-01-05", "0.6.1", 5, {}),
    ("v1.5.0", "2026-01-19", "0.6.1", 5, {}),
    ("v1.6.0", "2026-02-02", "0.15.2", 8, {}),
    ("v1.7.0", "2026-02-16", "0.16.0", 8, {}),
    ("v1.8.0", "2026-03-02", "0.17.0", 8, {}),
    ("v1.9.0", "2026-03-16", "0.18.0", 8, {}),
    # 0.20 trials carry kilobytes of evidence each, megabytes per report:
    # runs=5, not 8, keeps sample_reports/ small.
    ("v1.10.0", "2026-03-30", "0.20.0", 5, {}),
    ("v1.11.0", "2026-04-13", "0.20.0", 5, {}),
]
CODE_HISTORY: list[tuple[str, str, str, int, dict[str, Any]]] = [
    ("v1.6.0", "2026-01-08", "0.6.1", 5, {}),
    ("v1.7.0", "2026-01-22", "0.15.2", 5, {}),
    ("v1.8.0", "2026-02-05", "0.16.0", 8, {}),
    ("v1.9.0", "2026-02-19", "0.17.0", 8, {}),
    ("v1.9.1", "2026-02-24", "0.18.0", 8, {"early_stop": True}),
    ("v1.10.0", "2026-03-05", "0.18.0", 3, {}),
    ("v1.11.0", "2026-03-19", "0.20.0", 5, {}),
]

# Small reports, one or two per version, each built around an edge case.
# "arche" overrides pin a case's behaviour (S always passes, B never, F/L
# flaky, E one timed-out run, O every run raises) so the edge is guaranteed.
SUPPORT_MIX = [
    "billing-price-increase",
    "billing-double-charge",
    "billing-cancel-proration",
    "account-merge",
    "shipping-international-customs",
    "privacy-delete-data",
    "product-charger-compat",
    "account-child-profile",
    "feedback-thanks",
    "returns-refund-status",
]
FIXTURES: list[dict[str, Any]] = [
    {
        "name": "mv-0.6.1_runs5_model-errors",
        "mv": "0.6.1",
        "suite": "support-agent",
        "release": "v0.6.1-fixture",
        "runs": 5,
        "cases": SUPPORT_MIX,
        "force_errors": True,
        "arche": {"billing-double-charge": "F", "account-merge": "L"},
    },
    {
        "name": "mv-0.6.1_runs1",
        "mv": "0.6.1",
        "suite": "code-agent",
        "release": "v0.6.1-fixture",
        "runs": 1,
        "max_cases": 8,
        "force_errors": True,
        "arche": {"flaky-test-sleep": "O", "timezone-naive-datetime": "F"},
    },
    {
        "name": "mv-0.15.2_early-stop_runs8",
        "mv": "0.15.2",
        "suite": "code-agent",
        "release": "v0.15.2-fixture",
        "runs": 8,
        "early_stop": True,
        "cases": [
            "csv-export-unicode",
            "pagination-off-by-one",
            "timezone-naive-datetime",
            "memory-leak-cache",
            "race-condition-counter",
            "n-plus-one-orders",
            "typo-in-docs",
            "upgrade-pydantic-v2",
            "secret-in-logs",
            "cli-missing-flag",
        ],
        "arche": {"secret-in-logs": "F"},
    },
    {
        "name": "mv-0.16.0_runs3",
        "mv": "0.16.0",
        "suite": "support-agent",
        "release": "v0.16.0-fixture",
        "runs": 3,
        "cases": SUPPORT_MIX,
        "force_errors": True,
    },
    {
        "name": "mv-0.16.0_all-pass_runs5",
        "mv": "0.16.0",
        "suite": "code-agent",
        "release": "v0.16.0-fixture",
        "runs": 5,
        "max_cases": 6,
        "all_pass": True,
    },
    {
        "name": "mv-0.17.0_skipped-case_runs5",
        "mv": "0.17.0",
        "suite": "support-agent",
        "release": "v0.17.0-fixture",
        "runs": 5,
        "cases": SUPPORT_MIX,
        "force_errors": True,
        "arche": {"privacy-delete-data": "F"},
    },
    {
        "name": "mv-0.18.0_runs1",
        "mv": "0.18.0",
        "suite": "support-agent",
        "release": "v0.18.0-fixture",
        "runs": 1,
        "cases": SUPPORT_MIX,
        "force_errors": True,
    },
    {
        "name": "mv-0.18.0_early-stop_runs8",
        "mv": "0.18.0",
        "suite": "support-agent",
        "release": "v0.18.0-fixture",
        "runs": 8,
        "early_stop": True,
        "cases": SUPPORT_MIX,
        "force_errors": True,
    },
    {
        "name": "mv-0.20.0_early-stop_runs8",
        "mv": "0.20.0",
        "suite": "support-agent",
        "release": "v0.20.0-fixture",
        "runs": 8,
        "early_stop": True,
        "cases": [
            "billing-price-increase",
            "billing-cancel-proration",
            "account-merge",
            "shipping-international-customs",
            "product-charger-compat",
            "account-child-profile",
            "feedback-thanks",
            "returns-refund-status",
        ],
        "force_errors": True,
    },
    {
        "name": "mv-0.20.0_all-pass_runs3",
        "mv": "0.20.0",
        "suite": "code-agent",
        "release": "v0.20.0-fixture",
        "runs": 3,
        "max_cases": 4,
        "all_pass": True,
    },
]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relidash-fixtures"


def venv_python(version: str) -> Path:
    return cache_dir() / f"venv-{version}" / "bin" / "python"


def installed_version(python: Path) -> str | None:
    if not python.exists():
        return None
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "from importlib.metadata import version; print(version('multivon-eval'))",
        ],
        capture_output=True,
        text=True,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure_venv(version: str) -> Path:
    """Create (or reuse) the throwaway venv holding multivon-eval==version."""
    python = venv_python(version)
    if installed_version(python) == version:
        return python
    venv = python.parent.parent
    venv.parent.mkdir(parents=True, exist_ok=True)
    print(f"creating {venv} (multivon-eval=={version})", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            f"multivon-eval=={version}",
        ],
        check=True,
    )
    if installed_version(python) != version:
        raise SystemExit(f"multivon-eval=={version} did not install into {venv}")
    return python


def model_fields(suite: str, release: str, version: str) -> dict[str, Any]:
    """Where the release label goes for a given multivon-eval version."""
    bot = BOTS[suite]
    if tuple(int(p) for p in version.split(".")[:2]) >= DECLARE_TARGET_SINCE:
        return {"model_id": bot, "declare_version": release}
    return {"model_id": release}


def sample_jobs(out: Path) -> dict[str, list[dict[str, Any]]]:
    jobs: dict[str, list[dict[str, Any]]] = {}
    for suite, history in (("support-agent", SUPPORT_HISTORY), ("code-agent", CODE_HISTORY)):
        for index, (release, date, version, runs, extra) in enumerate(history):
            job = {
                "suite": suite,
                "release": release,
                "release_index": index,
                "date": date,
                "runs": runs,
                "early_stop": False,
                "out": str(out / suite / f"{date}_{release}.json"),
                **model_fields(suite, release, version),
                **extra,
            }
            jobs.setdefault(version, []).append(job)
    return jobs


def fixture_jobs(out: Path) -> dict[str, list[dict[str, Any]]]:
    jobs: dict[str, list[dict[str, Any]]] = {}
    for spec in FIXTURES:
        job = {k: v for k, v in spec.items() if k not in ("name", "mv")}
        job.setdefault("early_stop", False)
        job.update(
            release_index=0,
            date="2026-02-01",
            out=str(out / f"{spec['name']}.json"),
            **model_fields(spec["suite"], spec["release"], spec["mv"]),
        )
        jobs.setdefault(spec["mv"], []).append(job)
    return jobs


def run_agent(version: str, jobs: list[dict[str, Any]]) -> str:
    python = venv_python(version)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(jobs, fh)
        spec = fh.name
    try:
        # -I would drop the script dir from sys.path: not needed, the agent is
        # self-contained. Run from the repo root so nothing else is importable.
        done = subprocess.run(
            [str(python), str(TOOLS / "fixture_agent.py"), spec],
            cwd=REPO,
            capture_output=True,
            text=True,
        )
    finally:
        os.unlink(spec)
    if done.returncode != 0:
        raise SystemExit(f"fixture_agent failed under multivon-eval {version}:\n{done.stderr}")
    return done.stdout


def expected_path(directory: Path) -> Path:
    """Where the numbers for a reports directory go: outside it, so it holds only reports."""
    return REPO / "tests" / "expected" / f"{directory.name}.json"


def is_report(path: Path) -> bool:
    """A multivon-eval report: a JSON object with `cases`. Inspect logs kept beside the
    reports (tests/expected/inspect.json holds their numbers) are not, and upstream's
    from_dict would only refuse them."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "cases" in data


def write_numbers(directory: Path) -> None:
    files = sorted(p for p in directory.rglob("*.json") if is_report(p))
    if not files:
        print(f"no reports under {directory}", file=sys.stderr)
        return
    python = ensure_venv(NUMBERS_VERSION)
    subprocess.run(
        [
            str(python),
            str(TOOLS / "upstream_numbers.py"),
            "--root",
            str(directory),
            "--out",
            str(expected_path(directory)),
            *map(str, files),
        ],
        cwd=REPO,
        check=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out-samples", type=Path, default=REPO / "sample_reports")
    parser.add_argument("--out-fixtures", type=Path, default=REPO / "tests" / "fixtures")
    parser.add_argument(
        "--only-numbers",
        action="store_true",
        help="recompute tests/expected/*.json for the existing files",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    samples, fixtures = args.out_samples.resolve(), args.out_fixtures.resolve()

    if not args.only_numbers:
        by_version: dict[str, list[dict[str, Any]]] = {v: [] for v in VERSIONS}
        for group in (sample_jobs(samples), fixture_jobs(fixtures)):
            for version, jobs in group.items():
                by_version[version].extend(jobs)
        with ThreadPoolExecutor(max_workers=len(VERSIONS)) as pool:
            list(pool.map(ensure_venv, VERSIONS))  # list(): surface install errors
            outputs = pool.map(lambda v: (v, run_agent(v, by_version[v])), VERSIONS)
            for version, stdout in outputs:
                for line in stdout.splitlines():
                    info = json.loads(line)
                    print(
                        f"multivon-eval {version:>6}  {info['cases']:>2} cases  "
                        f"{Path(info['out']).relative_to(REPO) if Path(info['out']).is_relative_to(REPO) else info['out']}"
                    )

    for directory in (samples, fixtures):
        write_numbers(directory)
    print(f"done in {time.monotonic() - started:.1f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
