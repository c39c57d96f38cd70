"""`relidash review --attestation`: an in-toto Statement v1 with the test-result predicate.

Checked against the required fields of the in-toto specification (spec/v1/statement.md,
spec/v1/resource_descriptor.md, spec/predicates/test-result.md), the subjects against
hashlib over the evidence files, the configuration against the policy file's bytes, and
the result against the verdict for a passing, a failing and an undecided policy.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli

REPO = Path(__file__).resolve().parents[2]
SUITE = "support-agent"
HEX64 = re.compile(r"[0-9a-f]{64}\Z")


@pytest.fixture
def reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))
    shutil.copytree(REPO / "sample_reports" / SUITE, tmp_path / "reports" / SUITE)
    return tmp_path / "reports"


def attest(
    reports: Path, policy_rule: str, capsys: pytest.CaptureFixture[str], out: Path | None = None
) -> tuple[int, str, dict[str, Any] | None, Path]:
    policy = reports.parent / "policy.toml"
    policy.write_text(f"[[rule]]\n{policy_rule}\n")
    out = out or reports.parent / "statement.json"
    code, _, err = run_cli(
        ["review", str(reports), "--suite", SUITE, "--policy", str(policy),
         "--reviews", str(reports.parent / "reviews"), "--out", str(reports.parent / "p.html"),
         "--attestation", str(out), "--catalog", ":memory:"],
        capsys,
    )  # fmt: skip
    return code, err, (json.loads(out.read_text()) if out.exists() else None), policy


def assert_resource_descriptor(item: Any) -> None:
    """ResourceDescriptor: an object with at least one of uri, digest, content; a digest
    maps algorithm names to hex strings."""
    assert isinstance(item, dict)
    assert {"uri", "digest", "content"} & item.keys()
    if "digest" in item:
        assert item["digest"] and all(isinstance(v, str) for v in item["digest"].values())


def assert_statement(doc: dict[str, Any]) -> None:
    """The fields the specification marks required, with their types."""
    assert doc["_type"] == "https://in-toto.io/Statement/v1"
    assert doc["predicateType"] == "https://in-toto.io/attestation/test-result/v0.1"
    assert isinstance(doc["subject"], list) and doc["subject"]
    for subject in doc["subject"]:
        assert_resource_descriptor(subject)
        assert "digest" in subject  # a Statement's subject must carry a digest
    predicate = doc["predicate"]
    assert isinstance(predicate, dict)
    assert predicate["result"] in ("PASSED", "WARNED", "FAILED")
    assert isinstance(predicate["configuration"], list) and predicate["configuration"]
    for item in predicate["configuration"]:
        assert_resource_descriptor(item)
    for key in ("passedTests", "warnedTests", "failedTests"):
        assert all(isinstance(name, str) for name in predicate.get(key, []))


@pytest.mark.parametrize(
    ("rule", "verdict", "result", "listed"),
    [
        ('name = "steady"\nmetric = "pass^k"\nk = 3\nmin_value = 0.5', "PASSED", "PASSED", "passedTests"),
        ('name = "steady"\nmetric = "pass^k"\nk = 3\nmin_value = 0.99', "FAILED", "FAILED", "failedTests"),
        ('name = "steady"\nmetric = "pass^k"\nk = 4\nmin_ci_low = 0.6', "UNDECIDED", "FAILED", "warnedTests"),
    ],
    ids=["passed", "failed", "undecided"],
)  # fmt: skip
def test_the_statement_has_the_specifications_fields_and_the_reviews_facts(
    reports: Path,
    capsys: pytest.CaptureFixture[str],
    rule: str,
    verdict: str,
    result: str,
    listed: str,
) -> None:
    code, err, doc, policy = attest(reports, rule, capsys)

    assert code == 0, err
    assert doc is not None
    assert_statement(doc)
    predicate = doc["predicate"]
    assert predicate["verdict"] == verdict
    assert predicate["result"] == result
    assert [name.split(":")[0] for name in predicate[listed]] == ["steady"]
    others = {"passedTests", "warnedTests", "failedTests"} - {listed}
    assert all(predicate[key] == [] for key in others)
    assert (
        predicate["configuration"][0]["digest"]["sha256"]
        == hashlib.sha256(policy.read_bytes()).hexdigest()
    )
    # the subjects are the release's and the base's report files, by their bytes now
    subjects = {s["name"]: s["digest"]["sha256"] for s in doc["subject"]}
    assert len(subjects) == 2
    for name, digest in subjects.items():
        assert HEX64.match(digest)
        assert digest == hashlib.sha256((reports / name).read_bytes()).hexdigest()
    assert predicate["criteria"] == "criteria not registered"


def test_an_attestation_inside_the_reports_directory_is_refused(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in reports.rglob("*"))
    code, err, doc, _ = attest(reports, 'metric = "pass^k"\nk = 3\nmin_value = 0.5', capsys,
                               out=reports / "statement.json")  # fmt: skip
    assert code == 2
    assert "relidash never writes there" in err
    assert doc is None
    assert sorted(p.name for p in reports.rglob("*")) == before
