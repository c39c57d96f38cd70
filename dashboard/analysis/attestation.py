"""A release review as an in-toto Statement v1 with the test-result predicate (v0.1), the
form supply-chain tools read and sign (`cosign attest-blob`, in-toto's own tooling).

The subjects are the review's evidence files, each named by its path in the reports source
and its SHA-256; the predicate's `configuration` is the gate policy (its source and
SHA-256); `passedTests`, `warnedTests` and `failedTests` name the rules. The predicate's
`result` allows only PASSED, WARNED and FAILED: a relidash verdict of UNDECIDED or UNKNOWN
is not a pass, so it is FAILED there, its rules are listed under `warnedTests`, and the
verdict itself is carried as `verdict` (consumers ignore fields they do not know, by the
framework's parsing rules). References: in-toto Attestation Framework, spec/v1/statement.md
and spec/predicates/test-result.md.

Must not: sign (a signature belongs to the tool that holds the key), write the file (the
CLI does), or decide a verdict (gating does).
"""

from __future__ import annotations

from typing import Any, Final

from dashboard.analysis.gating import FAILED, PASSED
from dashboard.analysis.review import Review

STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
TEST_RESULT_TYPE: Final = "https://in-toto.io/attestation/test-result/v0.1"


def statement(review: Review, criteria: dict[str, Any] | None = None) -> dict[str, Any]:
    """The review's in-toto Statement (a JSON object); `criteria` is the preregistration's
    as_json, carried when given."""
    passed, warned, failed = [], [], []
    for result in review.gate.results:
        name = result.rule.label()
        verdict = result.verdict.verdict
        if verdict == PASSED:
            passed.append(name)
        elif verdict == FAILED:
            failed.append(name)
        else:
            warned.append(f"{name} ({verdict})")
    predicate: dict[str, Any] = {
        "result": PASSED if review.verdict == PASSED else FAILED,
        "configuration": [
            {"name": review.policy.source, "digest": {"sha256": review.policy.sha256}}
        ],
        "passedTests": passed,
        "warnedTests": warned,
        "failedTests": failed,
        "verdict": review.verdict,
        "suite": review.suite,
        "release": review.release,
        "base": review.base,
        "k": review.k,
        "relidashVersion": review.relidash_version,
    }
    if criteria is not None:
        predicate["criteria"] = criteria["status"]
    return {
        "_type": STATEMENT_TYPE,
        "subject": [
            {"name": e.path, "digest": {"sha256": e.sha256}, "annotations": {"role": e.role}}
            for e in review.evidence
        ],
        "predicateType": TEST_RESULT_TYPE,
        "predicate": predicate,
    }
