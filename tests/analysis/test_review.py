"""Release reviews end to end: `relidash review`, `signoff`, `reviews` and `verify`.

The review's headline, Δ, ledger and rule verdicts are checked against the commands that
already own them (`summary --json`, `compare --json`, `gate`); what a sign-off or a packet
carries against review_json of a fresh catalog; digests against hashlib over the files. Everything that modifies a file works on a
copy of sample_reports/ in tmp_path, every catalog is `:memory:` or under tmp_path, every
sign-off goes to a `--reviews` directory under tmp_path, and XDG_DATA_HOME /
XDG_CACHE_HOME point into tmp_path so a missed option cannot reach the real defaults.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli

from dashboard.analysis import review as review_module
from dashboard.analysis.loading import refresh_catalog
from dashboard.analysis.policy import DEFAULT_POLICY_TEXT, PolicyError, resolve_policy
from dashboard.analysis.review import (
    CHANGED,
    MISSING,
    UNCHANGED,
    EvidenceChanged,
    EvidenceStatus,
    build_review,
    evidence_status,
    moved_numbers,
    review_json,
    signoff_record,
)
from dashboard.data.catalog import open_catalog

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports"
SUITE = "support-agent"
RELEASE = "v1.11.0"  # the suite's latest release (0.19-0.20 format, 5 runs per case)
BASE = "v1.10.0"  # the one before it
RELEASE_FILE = "support-agent/2026-04-13_v1.11.0.json"
BASE_FILE = "support-agent/2026-03-30_v1.10.0.json"
SUITE_RELEASES = (
    "v1.4.0", "v1.5.0", "v1.6.0", "v1.7.0", "v1.8.0", "v1.9.0", "v1.10.0", "v1.11.0",
)  # fmt: skip
MEMORY = ":memory:"
GATE_LINE = re.compile(
    r"^(?P<name>.+?) (?P<metric>pass[@^]\d+) gate (?P<verdict>PASSED|FAILED|UNDECIDED|UNKNOWN)",
    re.M,
)
BLOCK = re.compile(r'(<script type="application/json"[^>]*>)(.*?)(</script>)', re.S)


# ---- helpers ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _isolated_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that forgot --reviews or --catalog would land here, not in $HOME."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture
def reports(tmp_path: Path) -> Path:
    """A private copy of sample_reports/ that a test may modify."""
    target = tmp_path / "reports"
    shutil.copytree(SAMPLES, target)
    return target


@pytest.fixture
def rdir(tmp_path: Path) -> Path:
    return tmp_path / "reviews"  # not created: the first sign-off creates it


@pytest.fixture(scope="module")
def sample_review() -> review_module.Review:
    con = open_catalog(MEMORY)
    try:
        refresh_catalog(con, SAMPLES)
        return build_review(con, SUITE, reports_dir=SAMPLES)
    finally:
        con.close()


def fresh_review(
    directory: Path,
    suite: str = SUITE,
    release: str = "latest",
    *,
    policy: Path | None = None,
) -> dict[str, Any]:
    """review_json of a review built from a fresh in-memory catalog of `directory`."""
    con = open_catalog(MEMORY)
    try:
        refresh_catalog(con, directory)
        return review_json(
            build_review(con, suite, release, policy_file=policy, reports_dir=directory)
        )
    finally:
        con.close()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(root: Path) -> list[tuple[str, bool, int, int]]:
    """Every entry under root with its size and mtime: any write shows up."""
    out = [(".", True, 0, root.stat().st_mtime_ns)]
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out.append((str(p.relative_to(root)), p.is_dir(), st.st_size, st.st_mtime_ns))
    return out


def records_in(directory: Path) -> list[Path]:
    if not directory.exists():
        return []
    return sorted(p for p in directory.iterdir() if p.suffix == ".json" and p.name[0] != ".")


def json_out(out: str) -> Any:
    return json.loads(out)


def signoff(
    capsys: pytest.CaptureFixture[str],
    reports: Path,
    rdir: Path,
    *extra: str,
    suite: str = SUITE,
    release: str | None = RELEASE,
    decision: str = "approved",
    by: str = "Ada",
    comment: str = "ship it",
) -> tuple[int, str, str]:
    argv = ["signoff", str(reports), "--suite", suite, "--decision", decision, "--by", by]
    argv += ["--comment", comment, "--reviews", str(rdir), "--catalog", MEMORY]
    if release is not None:
        argv += ["--release", release]
    return run_cli(argv + list(extra), capsys)


def reviews_json(
    capsys: pytest.CaptureFixture[str], reports: Path, rdir: Path, *extra: str
) -> dict[str, Any]:
    code, out, err = run_cli(
        ["reviews", str(reports), "--reviews", str(rdir), "--json", *extra], capsys
    )
    assert code == 0, err
    return json_out(out)


def write_policy(path: Path, *rules: dict[str, Any]) -> Path:
    lines = []
    for rule in rules:
        lines.append("[[rule]]")
        for key, value in rule.items():
            lines.append(f"{key} = {json.dumps(value)}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def flip_one_pass(report: Path) -> str:
    """Turn one passing trial of a 0.18+ report into a failure, consistently (pass_count,
    run_pass_rate and the trial's own status agree), so pass^k moves; returns the case id."""
    doc = json.loads(report.read_text(encoding="utf-8"))
    for case in doc["cases"]:
        trials = case.get("trials") or []
        if case.get("status") == "passed" and case["pass_count"] == case["runs"] == len(trials):
            case["pass_count"] -= 1
            case["run_pass_rate"] = case["pass_count"] / case["runs"]
            case["passed"] = False
            case["status"] = "failed_quality"
            case["is_flaky"] = True
            trials[-1]["status"] = "failed_quality"
            report.write_text(json.dumps(doc, indent=2), encoding="utf-8")
            return str(case["case_id"])
    raise AssertionError(f"{report}: no fully passing 0.18+ case to flip")


def write_packet(
    capsys: pytest.CaptureFixture[str], reports: Path, rdir: Path, out: Path, *extra: str
) -> tuple[int, str, str]:
    argv = ["review", str(reports), "--suite", SUITE, "--release", RELEASE]
    argv += ["--reviews", str(rdir), "--out", str(out), "--catalog", MEMORY]
    return run_cli(argv + list(extra), capsys)


def packet_module() -> Any:
    """dashboard.render.packet (render_packet, read_packet_block), imported where needed."""
    from dashboard.render import packet

    return packet


# ---- 1. the review's numbers are summary's, compare's and gate's ----------------------------


def test_headline_equals_summary_json(capsys: pytest.CaptureFixture[str]) -> None:
    review = fresh_review(SAMPLES)
    code, out, err = run_cli(["summary", str(SAMPLES), "--json", "--catalog", MEMORY], capsys)
    assert code == 0, err
    report = next(r for r in json_out(out)["reports"] if r["file"] == RELEASE_FILE)

    assert (review["suite"], review["release"], review["base"]) == (SUITE, RELEASE, BASE)
    k = review["k"]
    assert k == report["runs"]["max"] == 5  # default k: the release's run count
    expected = {
        "pass_at_1": report["pass_at_k"]["1"],
        "pass_at_k": report["pass_at_k"][str(k)],
        "pass_hat_k": report["pass_hat_k"][str(k)],
    }
    for key, cell in expected.items():
        shown = review["headline"][key]
        assert {f: shown[f] for f in ("value", "ci_low", "ci_high", "unknown_reason")} == {
            f: cell[f] for f in ("value", "ci_low", "ci_high", "unknown_reason")
        }, key
    # pass@k and pass^k differ here, so a swapped pair of cells fails above
    assert review["headline"]["pass_at_k"]["value"] != review["headline"]["pass_hat_k"]["value"]
    assert review["headline"]["cases"]["evaluated"] == report["cases"]["evaluated"]
    assert review["headline"]["cases"]["skipped"] == report["cases"]["skipped"]
    assert [e["path"] for e in review["evidence"]] == [RELEASE_FILE, BASE_FILE]


def test_delta_and_ledger_equal_compare_json(capsys: pytest.CaptureFixture[str]) -> None:
    review = fresh_review(SAMPLES)
    k = review["k"]
    argv = ["compare", str(SAMPLES), "--suite", SUITE, "--base", BASE, "--head", RELEASE]
    code, out, err = run_cli([*argv, "--k", str(k), "--json", "--catalog", MEMORY], capsys)
    assert code == 0, err
    compared = json_out(out)

    keys = {"pass_at_1", "pass_at_k", "pass_hat_k"}
    assert set(review["delta"]) == set(compared["deltas"]) == keys
    fields = ("metric", "k", "delta", "ci_low", "ci_high", "n_pairs", "unknown_reason")
    for key, delta in compared["deltas"].items():
        assert {f: review["delta"][key][f] for f in fields} == {f: delta[f] for f in fields}, key
    assert review["delta"]["pass_at_k"]["k"] == review["delta"]["pass_hat_k"]["k"] == k

    buckets = {bucket: len(cases) for bucket, cases in compared["ledger"].items()}
    buckets["added"] = len(compared["added"])
    buckets["removed"] = len(compared["removed"])
    assert review["ledger"] == buckets
    assert sum(buckets.values()) > 0 and buckets["regressed"] >= 1  # a ledger with content


def _thresholds(capsys: pytest.CaptureFixture[str], k: int) -> tuple[float, float]:
    """A pass^k CI-low threshold the release meets and a pass@k value one its estimate
    misses and its CI reaches (an UNDECIDED rule)."""
    code, out, err = run_cli(["summary", str(SAMPLES), "--json", "--catalog", MEMORY], capsys)
    assert code == 0, err
    report = next(r for r in json_out(out)["reports"] if r["file"] == RELEASE_FILE)
    hat_low = report["pass_hat_k"][str(k)]["ci_low"]
    at_value = report["pass_at_k"][str(k)]["value"]
    assert hat_low > 0.05 and at_value < 1.0
    return math.floor((hat_low - 0.05) * 1000) / 1000, round((at_value + 1.0) / 2, 3)


@pytest.mark.parametrize("with_failing_rule", [True, False], ids=["one-fails", "all-pass"])
def test_rule_verdicts_equal_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], with_failing_rule: bool
) -> None:
    k = 5
    passing, failing = _thresholds(capsys, k)
    rules: list[dict[str, Any]] = [
        {"name": "reliable enough", "metric": "pass^k", "k": k, "min_ci_low": passing}
    ]
    if with_failing_rule:
        rules.append({"name": "capable enough", "metric": "pass@k", "k": k, "min_value": failing})
    policy = write_policy(tmp_path / "policy.toml", *rules)

    argv = ["gate", str(SAMPLES), "--suite", SUITE, "--release", RELEASE, "--policy", str(policy)]
    code, out, err = run_cli([*argv, "--catalog", MEMORY], capsys)
    gate_verdicts = {m["name"]: m["verdict"] for m in GATE_LINE.finditer(out + err)}
    review = fresh_review(SAMPLES, release=RELEASE, policy=policy)
    review_verdicts = {r["rule"].split(": ")[0]: r["verdict"] for r in review["rules"]}

    expected = {"reliable enough": "PASSED"}
    if with_failing_rule:
        expected["capable enough"] = "UNDECIDED"
    assert gate_verdicts == expected, out + err
    assert review_verdicts == gate_verdicts
    assert code == (1 if with_failing_rule else 0)
    assert review["verdict"] == ("UNDECIDED" if code == 1 else "PASSED")
    for rule in review["rules"]:  # the numbers the gate line prints, to its 3 decimals
        line = next(
            text
            for text in (out + err).splitlines()
            if text.startswith(rule["rule"].split(": ")[0])
        )
        # the interval a verdict reads, widened where the reported one is too narrow
        numbers = f"{rule['ci_low']:.3f}, {rule['ci_high']:.3f}]"
        assert re.search(rf"= {rule['value']:.3f}, (widened )?CI \[{re.escape(numbers)}", line)
        assert f"required {rule['threshold']:.3f}" in line


# ---- 2. policy resolution -------------------------------------------------------------------

SUPPORT_RULE = {
    "name": "support only",
    "suite": SUITE,
    "metric": "pass^k",
    "k": 2,
    "min_ci_low": 0.1,
}
CODE_RULE = {
    "name": "code only",
    "suite": "code-agent",
    "metric": "pass^k",
    "k": 3,
    "min_value": 0.2,
}
EVERY_RULE = {"name": "every suite", "metric": "pass@k", "k": 1, "min_value": 0.3}


def test_policy_file_is_named_by_its_path_and_bytes(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write_policy(tmp_path / "team-policy.toml", SUPPORT_RULE, CODE_RULE, EVERY_RULE)
    # a relidash.toml with rules of its own: --policy wins over it
    write_policy(reports / "relidash.toml", {"name": "from config", "k": 1, "min_value": 0.0})

    code, _, err = signoff(capsys, reports, rdir, "--policy", str(policy))
    assert code == 0, err
    [path] = records_in(rdir)
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["policy_sha256"] == sha256(policy)
    assert record["review"]["policy"] == {"source": str(policy), "sha256": sha256(policy)}
    assert [r["rule"].split(": ")[0] for r in record["review"]["rules"]] == [
        "support only",
        "every suite",
    ]

    resolved = resolve_policy("code-agent", policy, reports)
    assert [r.name for r in resolved.rules] == ["code only", "every suite"]
    assert (resolved.source, resolved.sha256) == (str(policy), sha256(policy))


def test_relidash_toml_rules_apply_per_suite_beside_its_releases_table(
    reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_policy(reports / "relidash.toml", SUPPORT_RULE, CODE_RULE, EVERY_RULE)
    config.write_text('[releases]\nkey = "file_stem"\n\n' + config.read_text(), encoding="utf-8")

    code, out, err = run_cli(["summary", str(reports), "--json", "--catalog", MEMORY], capsys)
    assert code == 0, err
    summary = json_out(out)
    assert summary["problems"] == []  # the [releases] table is still accepted ...
    releases = {r["release"] for r in summary["reports"] if r["suite"] == SUITE}
    assert "2026-04-13_v1.11.0" in releases and RELEASE not in releases  # ... and obeyed

    support = fresh_review(reports)
    assert (support["release"], support["base"]) == ("2026-04-13_v1.11.0", "2026-03-30_v1.10.0")
    assert support["policy"] == {"source": str(config), "sha256": sha256(config)}
    assert [r["rule"].split(": ")[0] for r in support["rules"]] == ["support only", "every suite"]
    coding = fresh_review(reports, "code-agent")
    assert [r["rule"].split(": ")[0] for r in coding["rules"]] == ["code only", "every suite"]
    assert coding["policy"]["sha256"] == sha256(config)


@pytest.mark.parametrize("config", ["absent", "releases-table-only", "rules-for-another-suite"])
def test_no_rule_for_the_suite_means_the_default_rule(reports: Path, config: str) -> None:
    if config == "releases-table-only":
        (reports / "relidash.toml").write_text('[releases]\nkey = "auto"\n', encoding="utf-8")
    elif config == "rules-for-another-suite":
        write_policy(reports / "relidash.toml", CODE_RULE)

    review = fresh_review(reports)
    assert "default" in review["policy"]["source"]
    assert review["policy"]["sha256"] == hashlib.sha256(DEFAULT_POLICY_TEXT.encode()).hexdigest()
    assert [(r["metric"], r["k"], r["uses"], r["threshold"]) for r in review["rules"]] == [
        ("pass^k", 4, "ci_low", 0.5)
    ]


def test_policy_file_without_a_rule_for_the_suite_is_a_usage_error(
    tmp_path: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    policy = write_policy(tmp_path / "code-only.toml", CODE_RULE)
    code, _, err = signoff(capsys, SAMPLES, rdir, "--policy", str(policy))
    assert code == 2
    assert str(policy) in err and f"no rule for suite {SUITE!r}" in err
    assert records_in(rdir) == []
    with pytest.raises(PolicyError, match="no rule for suite"):
        resolve_policy(SUITE, policy, None)


# ---- 3. signoff and reviews -----------------------------------------------------------------


def test_signoff_binds_the_decision_to_the_bytes_and_numbers(
    reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = signoff(capsys, reports, rdir)
    assert code == 0, err
    assert [p.name for p in rdir.iterdir()] == [p.name for p in records_in(rdir)]  # no temp left
    [path] = records_in(rdir)
    record = json.loads(path.read_text(encoding="utf-8"))

    assert {k: record[k] for k in ("suite", "release", "base", "decision", "by", "comment")} == {
        "suite": SUITE,
        "release": RELEASE,
        "base": BASE,
        "decision": "approved",
        "by": "Ada",
        "comment": "ship it",
    }
    assert record["identity_verified"] is False and record["identity"] is None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", record["time"])
    assert record["evidence"] == [
        {"path": RELEASE_FILE, "sha256": sha256(reports / RELEASE_FILE)},
        {"path": BASE_FILE, "sha256": sha256(reports / BASE_FILE)},
    ]
    assert record["policy_sha256"] == hashlib.sha256(DEFAULT_POLICY_TEXT.encode()).hexdigest()
    assert record["review"] == fresh_review(reports, release=RELEASE)


def test_evidence_sha256_is_of_the_bytes_loaded_or_the_review_refuses(reports: Path) -> None:
    """The catalog keeps a fast digest; the SHA-256 a review publishes is read from the file
    and must be of the bytes the numbers came from."""
    con = open_catalog(MEMORY)
    try:
        refresh_catalog(con, reports)
        review = build_review(con, SUITE, RELEASE, reports_dir=reports)
        assert {e.path: e.sha256 for e in review.evidence} == {
            RELEASE_FILE: sha256(reports / RELEASE_FILE),
            BASE_FILE: sha256(reports / BASE_FILE),
        }
        flip_one_pass(reports / RELEASE_FILE)  # changed after the load, not loaded again
        with pytest.raises(EvidenceChanged, match=f"{RELEASE_FILE} changed since the catalog"):
            build_review(con, SUITE, RELEASE, reports_dir=reports)
        (reports / RELEASE_FILE).unlink()
        with pytest.raises(EvidenceChanged, match=f"{RELEASE_FILE} is gone since the catalog"):
            build_review(con, SUITE, RELEASE, reports_dir=reports)
        refresh_catalog(con, reports)  # loaded again: the suite's latest is now the base
        assert build_review(con, SUITE, reports_dir=reports).release == BASE
    finally:
        con.close()


def test_reviews_reports_unchanged_then_changed_then_missing(
    reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = signoff(capsys, reports, rdir)
    assert code == 0, err
    [path] = records_in(rdir)
    record = json.loads(path.read_text(encoding="utf-8"))
    recorded = record["evidence"][0]["sha256"]
    base = {
        "suite": SUITE,
        "release": RELEASE,
        "base": BASE,
        "decision": "approved",
        "by": "Ada",
        "identity_verified": False,
        "time": record["time"],
        "comment": "ship it",
    }

    doc = reviews_json(capsys, reports, rdir)
    assert doc["problems"] == []
    [entry] = doc["reviews"]
    assert {k: entry[k] for k in base} == base
    assert (entry["evidence"], entry["changed_files"]) == ("unchanged", [])
    assert entry["file"] == path.name

    target = reports / RELEASE_FILE
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(" ")
    [entry] = reviews_json(capsys, reports, rdir)["reviews"]
    assert entry["evidence"] == "changed"
    assert entry["changed_files"] == [
        {"path": RELEASE_FILE, "old": recorded, "new": sha256(target)}
    ]
    assert sha256(target) != recorded
    code, out, _ = run_cli(["reviews", str(reports), "--reviews", str(rdir)], capsys)
    assert code == 0 and "evidence changed" in out and RELEASE_FILE in out

    target.unlink()
    [entry] = reviews_json(capsys, reports, rdir)["reviews"]
    assert entry["evidence"] == "missing"
    assert entry["changed_files"] == [{"path": RELEASE_FILE, "old": recorded, "new": None}]
    assert record == json.loads(path.read_text(encoding="utf-8"))  # the record itself untouched


def test_reviews_newest_first_and_filtered(
    reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    made = [
        ("2026-04-14T09:00:00Z", SUITE, RELEASE, "approved", "Ada"),
        ("2026-04-15T09:00:00Z", SUITE, BASE, "rejected", "Grace"),
        ("2026-04-16T09:00:00Z", "code-agent", "v1.11.0", "conditional", "Edsger"),
    ]
    for time, suite, release, decision, by in made:
        monkeypatch.setattr(review_module, "utc_now", lambda time=time: time)
        code, _, err = signoff(
            capsys, reports, rdir, suite=suite, release=release, decision=decision, by=by
        )
        assert code == 0, err
    assert len(records_in(rdir)) == 3

    def shown(*extra: str) -> list[tuple[str, str, str]]:
        doc = reviews_json(capsys, reports, rdir, *extra)
        return [(e["time"], e["release"], e["by"]) for e in doc["reviews"]]

    newest_first = [(t, r, b) for t, _, r, _, b in reversed(made)]
    assert shown() == newest_first
    assert shown("--suite", SUITE) == newest_first[1:]
    assert shown("--release", RELEASE) == [newest_first[0], newest_first[2]]  # both suites
    assert shown("--suite", SUITE, "--release", RELEASE) == [newest_first[2]]
    assert shown("--decision", "rejected") == [newest_first[1]]
    assert shown("--suite", "code-agent", "--decision", "approved") == []


def test_a_bad_file_in_the_reviews_directory_is_a_problem_not_an_error(
    reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = signoff(capsys, reports, rdir)
    assert code == 0, err
    (rdir / "bad.json").write_text("{ this is not json", encoding="utf-8")

    doc = reviews_json(capsys, reports, rdir)
    assert [p["file"] for p in doc["problems"]] == ["bad.json"]
    assert "not valid JSON" in doc["problems"][0]["reason"]
    assert [e["by"] for e in doc["reviews"]] == ["Ada"]
    code, _, err = run_cli(["reviews", str(reports), "--reviews", str(rdir)], capsys)
    assert code == 0 and "bad.json" in err


def test_signoff_record_checks_its_input(sample_review: review_module.Review) -> None:
    with pytest.raises(ValueError, match="decision"):
        signoff_record(sample_review, decision="maybe", by="Ada")
    with pytest.raises(ValueError, match="name"):
        signoff_record(sample_review, decision="approved", by="   ")
    claims = {"issuer": "https://accounts.example.com", "subject": "42", "email": "a@example.com"}
    verified = signoff_record(
        sample_review,
        decision="conditional",
        by=" Ada ",
        identity=claims,
        time="2026-01-01T00:00:00Z",
    )
    assert verified["by"] == "Ada" and verified["identity_verified"] is True
    assert verified["identity"] == claims and verified["time"] == "2026-01-01T00:00:00Z"
    assert verified["review"] == review_json(sample_review)


# ---- 4. bad input ---------------------------------------------------------------------------


def test_unknown_suite_lists_the_known_suites(
    rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = signoff(capsys, SAMPLES, rdir, suite="no-such-agent", release=None)
    assert code == 2
    assert "no-such-agent" in err and "code-agent" in err and "support-agent" in err
    assert not rdir.exists()


def test_unknown_release_lists_the_releases(rdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = signoff(capsys, SAMPLES, rdir, release="v9.9.9")
    assert code == 2
    assert "v9.9.9" in err and all(f"'{r}'" in err for r in SUITE_RELEASES), err
    assert not rdir.exists()


@pytest.mark.parametrize(
    "extra", [["--k", "0"], ["--k", "99"], ["--base", RELEASE]], ids=["k0", "k99", "base=release"]
)
def test_bad_k_or_base_is_a_usage_error(
    rdir: Path, capsys: pytest.CaptureFixture[str], extra: list[str]
) -> None:
    code, _, err = signoff(capsys, SAMPLES, rdir, *extra)
    assert code == 2 and "Traceback" not in err
    assert not rdir.exists()


def test_decision_outside_the_choices_is_refused_by_argparse(
    rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = signoff(capsys, SAMPLES, rdir, decision="maybe")
    assert code == 2 and "invalid choice: 'maybe'" in err
    assert not rdir.exists()


def _inside(reports: Path, tmp_path: Path, where: str) -> Path:
    if where == "the-directory":
        return reports
    if where == "subdirectory":
        return reports / "support-agent" / "reviews"
    link = tmp_path / "looks-outside"
    link.symlink_to(reports, target_is_directory=True)
    return link / "reviews"


@pytest.mark.parametrize("where", ["the-directory", "subdirectory", "through-a-symlink"])
@pytest.mark.parametrize("command", ["signoff", "review"])
def test_reviews_inside_the_reports_directory_is_refused(
    tmp_path: Path, reports: Path, capsys: pytest.CaptureFixture[str], where: str, command: str
) -> None:
    inside = _inside(reports, tmp_path, where)
    before = listing(reports)
    if command == "signoff":
        code, _, err = signoff(capsys, reports, inside)
    else:
        packet_module()
        code, _, err = write_packet(capsys, reports, inside, tmp_path / "out.html")
        assert not (tmp_path / "out.html").exists()
    assert code == 2
    assert "inside the reports directory" in err
    assert listing(reports) == before


def test_a_reviews_directory_beside_the_reports_is_accepted(
    tmp_path: Path, reports: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beside = tmp_path / "reports-signoffs"  # shares the name's prefix, not the path
    before = listing(reports)
    code, _, err = signoff(capsys, reports, beside)
    assert code == 0, err
    assert len(records_in(beside)) == 1 and listing(reports) == before


@pytest.mark.parametrize("blocked", ["parent-is-a-file", "is-a-file"])
def test_unwritable_reviews_directory_repeats_the_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], blocked: str
) -> None:
    plain = tmp_path / "plain-file"
    plain.write_text("not a directory\n", encoding="utf-8")
    target = plain / "reviews" if blocked == "parent-is-a-file" else plain
    comment = "retry budget is fine; ship it Friday"
    code, _, err = signoff(capsys, SAMPLES, target, decision="conditional", comment=comment)
    assert code == 2
    assert "not recorded" in err and "conditional" in err and "Ada" in err and comment in err
    assert plain.read_text(encoding="utf-8") == "not a directory\n"


@pytest.mark.parametrize("flag", ["--out", "--pdf"])
@pytest.mark.parametrize("where", ["top", "subdirectory", "through-a-symlink"])
def test_packet_inside_the_reports_directory_is_refused(
    tmp_path: Path,
    reports: Path,
    rdir: Path,
    capsys: pytest.CaptureFixture[str],
    flag: str,
    where: str,
) -> None:
    packet_module()
    if where == "top":
        inside = reports / "packet"
    elif where == "subdirectory":
        inside = reports / "support-agent" / "packet"
    else:
        link = tmp_path / "looks-outside"
        link.symlink_to(reports, target_is_directory=True)
        inside = link / "packet"
    out = inside.with_suffix(".html") if flag == "--out" else tmp_path / "out.html"
    extra = ["--pdf", str(inside.with_suffix(".pdf"))] if flag == "--pdf" else []
    before = listing(reports)
    code, _, err = write_packet(capsys, reports, rdir, out, *extra)
    assert code == 2 and "inside the reports directory" in err
    assert listing(reports) == before
    assert not rdir.exists()


# ---- 5. the packet and verify ---------------------------------------------------------------


def test_packet_carries_release_signoff_and_numbers_and_verifies(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet = packet_module()
    code, _, err = signoff(capsys, reports, rdir)
    assert code == 0, err
    out = tmp_path / "packets" / "support-v1.11.0.html"
    code, _, err = write_packet(capsys, reports, rdir, out)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    assert RELEASE in html and "ship it" in html and "Ada" in html
    # opens offline: nothing is fetched (no src= URL, no stylesheet link, no @import)
    assert not re.search(r"""\ssrc\s*=\s*["']?(?:https?:)?//""", html, re.I)
    assert "<link" not in html.lower() and "@import" not in html

    block = packet.read_packet_block(html)
    assert block is not None
    assert block["review"] == fresh_review(reports, release=RELEASE)
    [carried] = block["signoffs"]
    assert carried == json.loads(records_in(rdir)[0].read_text(encoding="utf-8"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", block["generated_at"])

    argv = ["verify", str(out), str(reports), "--reviews", str(rdir), "--catalog", MEMORY]
    code, out_text, err = run_cli(argv, capsys)
    assert code == 0, out_text + err
    assert "changed:" not in out_text and "moved:" not in out_text


def test_packet_escapes_a_hostile_comment(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet = packet_module()
    comment = "</script><script>alert(1)</script> & <b>ship</b>"
    code, _, err = signoff(capsys, reports, rdir, comment=comment)
    assert code == 0, err
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, reports, rdir, out)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    assert "<script>alert(1)" not in html and "<b>ship</b>" not in html
    block = packet.read_packet_block(html)
    assert block is not None and block["signoffs"][0]["comment"] == comment
    argv = ["verify", str(out), str(reports), "--reviews", str(rdir), "--catalog", MEMORY]
    code, _, err = run_cli(argv, capsys)
    assert code == 0, err


def test_verify_names_the_changed_file_and_the_moved_numbers(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet = packet_module()
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, reports, rdir, out)
    assert code == 0, err
    old = packet.read_packet_block(out.read_text(encoding="utf-8"))["review"]
    old_digest = sha256(reports / RELEASE_FILE)

    flip_one_pass(reports / RELEASE_FILE)
    new = fresh_review(reports, release=RELEASE)
    old_hat, new_hat = (
        old["headline"]["pass_hat_k"]["value"],
        new["headline"]["pass_hat_k"]["value"],
    )
    assert new_hat < old_hat  # the edit did move pass^k

    argv = ["verify", str(out), str(reports), "--catalog", MEMORY, "--verbose"]
    code, stdout, err = run_cli(argv, capsys)
    assert code == 1, stdout + err
    lines = stdout.splitlines()
    assert f"changed: {RELEASE_FILE}: {old_digest} -> {sha256(reports / RELEASE_FILE)}" in lines
    assert not any(line.startswith(f"changed: {BASE_FILE}") for line in lines)
    assert f"moved: headline.pass_hat_k.value: {old_hat} -> {new_hat}" in lines
    assert "does NOT hold" in err


def test_verify_fails_on_changed_bytes_even_when_no_number_moves(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet_module()
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, reports, rdir, out)
    assert code == 0, err
    old_digest = sha256(reports / BASE_FILE)
    with open(reports / BASE_FILE, "a", encoding="utf-8") as handle:
        handle.write("\n")  # same JSON, same numbers, other bytes

    argv = ["verify", str(out), str(reports), "--catalog", MEMORY, "--verbose"]
    code, stdout, err = run_cli(argv, capsys)
    assert code == 1, stdout + err
    lines = stdout.splitlines()
    assert [line for line in lines if line.startswith(("changed:", "moved:"))] == [
        f"changed: {BASE_FILE}: {old_digest} -> {sha256(reports / BASE_FILE)}"
    ]


def test_verify_finds_a_number_edited_in_the_packet(
    tmp_path: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet = packet_module()
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, SAMPLES, rdir, out)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    doc = packet.read_packet_block(html)
    true_value = doc["review"]["headline"]["pass_hat_k"]["value"]
    doc["review"]["headline"]["pass_hat_k"]["value"] = 0.99
    doc["review"]["verdict"] = "PASSED" if doc["review"]["verdict"] != "PASSED" else "FAILED"
    forged = BLOCK.sub(lambda m: m.group(1) + json.dumps(doc) + m.group(3), html, count=1)
    out.write_text(forged, encoding="utf-8")

    argv = ["verify", str(out), str(SAMPLES), "--catalog", MEMORY, "--verbose"]
    code, stdout, err = run_cli(argv, capsys)
    assert code == 1, stdout + err
    assert f"moved: headline.pass_hat_k.value: 0.99 -> {true_value}" in stdout.splitlines()
    assert any(line.startswith("moved: verdict: ") for line in stdout.splitlines())
    assert "changed:" not in stdout  # the reports are untouched


@pytest.mark.parametrize(
    "kind", ["html-without-block", "report-json", "block-without-review", "absent"]
)
def test_verify_refuses_a_file_that_is_not_a_packet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    packet = packet_module()
    block_id = getattr(packet, "PACKET_BLOCK_ID", "relidash-review")
    if kind == "html-without-block":
        target = tmp_path / "page.html"
        target.write_text("<!doctype html><html><body><h1>v1.11.0</h1></body></html>", "utf-8")
    elif kind == "report-json":
        target = tmp_path / "report.json"
        shutil.copyfile(SAMPLES / RELEASE_FILE, target)
    elif kind == "block-without-review":
        target = tmp_path / "other.html"
        target.write_text(
            f'<html><script type="application/json" id="{block_id}">{{"x": 1}}</script></html>',
            "utf-8",
        )
    else:
        target = tmp_path / "nowhere.html"
    code, stdout, err = run_cli(["verify", str(target), str(SAMPLES), "--catalog", MEMORY], capsys)
    assert code == 2, stdout + err
    assert str(target) in err and "Traceback" not in err


def test_verify_holds_after_touch(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet_module()
    catalog = tmp_path / "cache" / "catalog.duckdb"
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, reports, rdir, out, "--catalog", str(catalog))
    assert code == 0, err
    for path in reports.rglob("*.json"):
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns + 10**10, st.st_mtime_ns + 10**10))  # +10 s, same bytes

    for where in (str(catalog), MEMORY):
        code, stdout, err = run_cli(["verify", str(out), str(reports), "--catalog", where], capsys)
        assert code == 0, stdout + err
        assert "holds" in err


def test_verify_holds_when_the_reports_directory_is_named_differently(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    packet_module()
    write_policy(reports / "relidash.toml", {"name": "steady", "k": 5, "min_ci_low": 0.4})
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, reports, rdir, out)
    assert code == 0, err
    archived = tmp_path / "archive" / "reports-2026"
    archived.parent.mkdir()
    reports.rename(archived)  # the same bytes, kept elsewhere

    code, stdout, err = run_cli(["verify", str(out), str(archived), "--catalog", MEMORY], capsys)
    assert code == 0, stdout + err
    monkeypatch.chdir(archived.parent)
    code, stdout, err = run_cli(["verify", str(out), archived.name, "--catalog", MEMORY], capsys)
    assert code == 0, stdout + err


def test_verify_rereads_a_policy_file_named_relidash_toml(
    tmp_path: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet_module()
    team = tmp_path / "team"
    team.mkdir()
    policy = write_policy(team / "relidash.toml", {"name": "team", "k": 5, "min_ci_low": 0.4})
    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, SAMPLES, rdir, out, "--policy", str(policy))
    assert code == 0, err
    code, stdout, err = run_cli(["verify", str(out), str(SAMPLES), "--catalog", MEMORY], capsys)
    assert code == 0, stdout + err


def test_packet_escapes_hostile_report_content(
    tmp_path: Path, reports: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet = packet_module()
    report = reports / RELEASE_FILE
    doc = json.loads(report.read_text(encoding="utf-8"))
    case = next(c for c in doc["cases"] if 0 < c["pass_count"] < c["runs"])  # a lottery case
    case["input"] = "<img src=x onerror=alert(1)> refund?"
    case["case_id"] = "<i>hostile</i>"
    case["tags"] = [*case["tags"], "<svg onload=alert(2)>"]
    for trial in case["trials"]:
        trial["case_id"] = case["case_id"]
        trial["case"]["case_id"], trial["case"]["input"] = case["case_id"], case["input"]
    report.write_text(json.dumps(doc), encoding="utf-8")

    out = tmp_path / "out.html"
    code, _, err = write_packet(capsys, reports, rdir, out)
    assert code == 0, err
    html = out.read_text(encoding="utf-8")
    for raw in ("<img src=x", "<i>hostile", "<svg onload"):
        assert raw not in html, raw
    assert "&lt;img src=x onerror=alert(1)&gt; refund?" in html  # shown, escaped
    assert packet.read_packet_block(html)["review"] == fresh_review(reports, release=RELEASE)


def test_failed_packet_write_leaves_no_temp_file(
    tmp_path: Path, rdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    packet_module()
    outdir = tmp_path / "out" / "packet.html"
    outdir.mkdir(parents=True)  # a directory where the packet file should go
    code, _, err = write_packet(capsys, SAMPLES, rdir, outdir)
    assert code == 2 and "cannot be written" in err
    assert sorted(p.name for p in outdir.parent.iterdir()) == ["packet.html"]


# ---- 6. concurrent sign-offs ----------------------------------------------------------------


def test_two_concurrent_signoffs_are_both_kept(tmp_path: Path, rdir: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dashboard.cli",
                "signoff",
                str(SAMPLES),
                "--suite",
                SUITE,
                "--decision",
                decision,
                "--by",
                by,
                "--comment",
                f"{by} says",
                "--reviews",
                str(rdir),
                "--catalog",
                MEMORY,
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for decision, by in (("approved", "Ada"), ("rejected", "Grace"))
    ]
    results = [p.communicate(timeout=120) for p in procs]
    for proc, (_, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
    stored = [json.loads(p.read_text(encoding="utf-8")) for p in records_in(rdir)]
    assert sorted((r["by"], r["decision"], r["comment"]) for r in stored) == [
        ("Ada", "approved", "Ada says"),
        ("Grace", "rejected", "Grace says"),
    ]
    assert {r["release"] for r in stored} == {RELEASE}  # "latest" recorded as its name
    assert not [p for p in rdir.iterdir() if p.name.startswith(".")]  # no temp file left


# ---- 7. evidence_status and moved_numbers ---------------------------------------------------

A, B = "a" * 64, "b" * 64
EVIDENCE = [{"path": "s/one.json", "sha256": A}, {"path": "s/two.json", "sha256": B}]


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        ({"s/one.json": A, "s/two.json": B}, EvidenceStatus(UNCHANGED, ())),
        (
            {"s/one.json": "c" * 64, "s/two.json": B},
            EvidenceStatus(CHANGED, ({"path": "s/one.json", "old": A, "new": "c" * 64},)),
        ),
        (
            {"s/one.json": A, "s/two.json": None},
            EvidenceStatus(MISSING, ({"path": "s/two.json", "old": B, "new": None},)),
        ),
        (  # a path the caller did not hash counts as gone
            {"s/one.json": A},
            EvidenceStatus(MISSING, ({"path": "s/two.json", "old": B, "new": None},)),
        ),
        (  # one changed and one gone: missing wins, both listed
            {"s/one.json": "c" * 64, "s/two.json": None},
            EvidenceStatus(
                MISSING,
                (
                    {"path": "s/one.json", "old": A, "new": "c" * 64},
                    {"path": "s/two.json", "old": B, "new": None},
                ),
            ),
        ),
    ],
    ids=["unchanged", "changed", "missing", "not-hashed", "changed-and-missing"],
)
def test_evidence_status(now: dict[str, str | None], expected: EvidenceStatus) -> None:
    assert evidence_status(EVIDENCE, now) == expected


def test_evidence_status_of_no_evidence_is_unchanged() -> None:
    assert evidence_status([], {}) == EvidenceStatus(UNCHANGED, ())


def _doc(value: float = 0.5, verdict: str = "PASSED", **extra: Any) -> dict[str, Any]:
    return {
        "verdict": verdict,
        "headline": {"pass_hat_k": {"value": value, "ci_low": None}},
        "rules": [{"verdict": verdict, "n_cases": 30}],
        "evidence": [{"path": "s/one.json", "sha256": A}],
        "relidash_version": "0.1.0",
        **extra,
    }


def test_moved_numbers_tolerates_float_noise_only() -> None:
    assert moved_numbers(_doc(), _doc()) == []
    assert moved_numbers(_doc(0.5), _doc(0.5 + 1e-12)) == []
    assert moved_numbers(_doc(0.5), _doc(0.5 + 1e-6)) == [
        f"headline.pass_hat_k.value: 0.5 -> {0.5 + 1e-6}"
    ]


def test_moved_numbers_reports_a_verdict_change() -> None:
    assert moved_numbers(_doc(verdict="PASSED"), _doc(verdict="FAILED")) == [
        "rules[0].verdict: PASSED -> FAILED",
        "verdict: PASSED -> FAILED",
    ]


def test_moved_numbers_reports_keys_that_appear_or_vanish_and_type_changes() -> None:
    fresh = _doc()
    fresh["headline"]["pass_hat_k"]["ci_low"] = 0.4  # None -> a number
    fresh["rules"].append({"verdict": "FAILED", "n_cases": 3})
    assert moved_numbers(_doc(), fresh) == [
        "headline.pass_hat_k.ci_low: None -> 0.4",
        "rules[1].n_cases: (absent) -> 3",
        "rules[1].verdict: (absent) -> FAILED",
    ]
    assert moved_numbers(_doc(flag=True), _doc(flag=1)) == ["flag: True -> 1"]


def test_moved_numbers_leaves_evidence_and_version_to_others() -> None:
    other = _doc(relidash_version="9.9.9")
    other["evidence"] = [{"path": "s/one.json", "sha256": B}]
    assert moved_numbers(_doc(), other) == []
