"""Write tests/fixtures/release_identity/: one suite's history across naming schemes.

Stdlib only; reuses make_fixtures.py's throwaway venvs (one per multivon-eval version)
and tools/fixture_agent.py, so every file is what that version's own save_json writes.

Upstream's numbers for them go with the other fixtures' into tests/expected/fixtures.json
(make_fixtures.write_numbers), which tests/data/test_golden.py compares relidash's with.

The history is what an upgraded team's directory holds: before 0.19 a release is named
by the model (`support-bot@v1.4.0`); from 0.19 by its declared target version (`v1.6.0`,
model `support-bot`). Case ids change scheme too: 0.15 has none, 0.18 derives
`sha256:<digest>` ids (no explicit id), the 0.20 files name cases `SUP-<nnn>`; the inputs
are the same throughout. v1.6.0 has two files (a 0.18 run and a 0.20 rerun); v1.4.1 is a
hotfix run after v1.7.0. The 0.15 files carry no time, so the suite as a whole is ordered
by its labels; without them (every file timed) by time.

Usage::

    python tools/make_identity_fixtures.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS))

from make_fixtures import REPO, ensure_venv, run_agent, write_numbers  # noqa: E402

FIXTURES = REPO / "tests" / "fixtures"

CASES = [
    "billing-price-increase",
    "billing-double-charge",
    "account-merge",
    "privacy-delete-data",
    "feedback-thanks",
    "returns-refund-status",
]
BOT = "support-bot"

# (file stem, multivon-eval version, release, date, runs, case id scheme)
HISTORY: list[tuple[str, str, str, str, int, str]] = [
    ("01_mv0.18.0_support-bot@v1.4.0", "0.18.0", "v1.4.0", "2026-01-05", 3, "none"),
    ("02_mv0.15.2_support-bot@v1.5.0", "0.15.2", "v1.5.0", "2026-01-19", 3, "none"),
    ("03_mv0.18.0_support-bot@v1.6.0", "0.18.0", "v1.6.0", "2026-02-02", 3, "none"),
    ("04_mv0.20.0_v1.6.0", "0.20.0", "v1.6.0", "2026-02-03", 3, "ticket"),
    ("05_mv0.20.0_v1.7.0", "0.20.0", "v1.7.0", "2026-02-16", 2, "ticket"),
    ("06_mv0.15.2_support-bot@v1.10.0", "0.15.2", "v1.10.0", "2026-03-02", 3, "none"),
    # a hotfix of an old line, run after v1.7.0: by time it is the newest of the timed files
    ("07_mv0.18.0_support-bot@v1.4.1", "0.18.0", "v1.4.1", "2026-02-20", 3, "none"),
]


def job(
    stem: str, version: str, release: str, date: str, runs: int, ids: str, out: Path
) -> dict[str, Any]:
    named: dict[str, Any] = (
        {"model_id": BOT, "declare_version": release}
        if version.startswith("0.20")
        else {"model_id": f"{BOT}@{release}"}
    )
    return {
        "suite": "support-agent",
        "release": release,
        "release_index": HISTORY.index(next(h for h in HISTORY if h[0] == stem)),
        "date": date,
        "runs": runs,
        "early_stop": False,
        "cases": CASES,
        "case_ids": ids,
        "out": str(out / f"{stem}.json"),
        **named,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=FIXTURES / "release_identity")
    args = parser.parse_args(argv)
    by_version: dict[str, list[dict[str, Any]]] = {}
    for stem, version, release, date, runs, ids in HISTORY:
        by_version.setdefault(version, []).append(
            job(stem, version, release, date, runs, ids, args.out.resolve())
        )
    for version, jobs in by_version.items():
        ensure_venv(version)
        for line in run_agent(version, jobs).splitlines():
            print(version, json.loads(line)["out"])
    if args.out.resolve().is_relative_to(FIXTURES):
        # the golden test holds every report under tests/fixtures to upstream's numbers
        write_numbers(FIXTURES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
