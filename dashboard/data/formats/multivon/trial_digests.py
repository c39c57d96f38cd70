"""Trial records checked against the digests their writer gave them (multivon-eval 0.18+).

multivon-eval writes each trial (`cases[].trials[]`, schema "multivon.trial/v1") with a
`digest`: the SHA-256 of the trial's canonical JSON without that key (sorted keys, no
whitespace, UTF-8, no NaN; multivon_eval.case_manifest.canonical_json), and refuses a
trial whose digest does not match. A report whose trial output, status or verdicts were
edited after it was written, with the digest left as written, no longer matches. The
load does not read this (it reads no trial's output); a review and `verify` do, for
their evidence files only.

Must not: change or write a report, or judge what a mismatch means (analysis does).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from dashboard.data.formats.protocol import TrialDigests

TRIAL_SCHEMA = "multivon.trial/v1"
_MAX_LISTED = 5


def canonical_digest(value: Any) -> str:
    """multivon-eval's digest: SHA-256 of sorted, whitespace-free, UTF-8 JSON."""
    text = json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_trial_digests(path: Path) -> TrialDigests:
    """Every digested trial record of a multivon-eval report file against its digest."""
    try:
        with path.open("rb") as handle:
            document = json.loads(handle.read())
    except (OSError, ValueError, RecursionError):
        return TrialDigests(0, (), 0, readable=False)
    if not isinstance(document, dict) or not isinstance(document.get("cases"), list):
        return TrialDigests(0, (), 0, readable=False)
    checked, mismatched = 0, []
    for case in document["cases"]:
        trials = case.get("trials") if isinstance(case, dict) else None
        for trial in trials if isinstance(trials, list) else []:
            if not isinstance(trial, dict) or trial.get("schema") != TRIAL_SCHEMA:
                continue
            claimed = trial.get("digest")
            if not isinstance(claimed, str):
                continue
            checked += 1
            body = {key: value for key, value in trial.items() if key != "digest"}
            try:
                matches = canonical_digest(body) == claimed
            except ValueError:  # NaN or infinity: not what multivon-eval writes
                matches = False
            if not matches:
                mismatched.append(
                    f"case {trial.get('case_id', case.get('case_id'))} run "
                    f"{trial.get('run_index')} attempt {trial.get('attempt')}"
                )
    return TrialDigests(checked, tuple(mismatched[:_MAX_LISTED]), len(mismatched))
