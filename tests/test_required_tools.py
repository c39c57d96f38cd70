"""Under `make test` a missing test tool fails its tests; on a bare workstation run it skips.

`make test` runs pytest with RELIDASH_REQUIRE_TOOLS=1 and RELIDASH_UPSTREAM_PYTHON set (CI
runs `make test`). The guards are checked by running one test of each guarded kind in a
child pytest with its tool taken away (a package made unimportable, PATH emptied, the
upstream Python unnamed, Azurite misnamed): with the flag and without CI, every one fails
naming its tool; with neither, every one skips. And no test module reads CI or the
upstream variable itself, which would step round the one guard.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from required_tools import REQUIRE_TOOLS, UPSTREAM_PYTHON

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"

# (test, the words its failure must carry): one test behind each guard
GUARDED = {
    "tests/data/test_trial_digests.py::test_multivon_eval_refuses_the_trial_relidash_flags": (
        f"{UPSTREAM_PYTHON} is not set"
    ),
    "tests/stats/test_stats_upstream.py::test_suite_pass_k_matches_upstream": f"{UPSTREAM_PYTHON} is not set",
    "tests/browser/test_browser_first_page.py::test_the_headline_is_in_view_at_1280_by_720": (
        "the playwright package is not installed"
    ),
    "tests/browser/test_browser.py::test_a_deep_link_connects_at_the_server_root_at_once": (
        "the playwright package is not installed"
    ),
    "tests/render/test_packet.py::test_hostile_strings_are_text_and_nothing_is_loaded": (
        "the playwright package is not installed"
    ),
    "tests/browser/test_oidc.py::test_signed_out_every_page_shows_only_the_sign_in": (
        "the playwright package is not installed"
    ),
    "tests/data/test_sources.py::test_each_listing_is_fresh": "moto[server] is not installed",
    "tests/data/test_gcs_source.py::test_a_missing_bucket_is_not_an_empty_listing": (
        "gcp-storage-emulator is not installed"
    ),
    "tests/data/test_azure_source.py::test_a_missing_container_is_an_error_not_an_empty_list": (
        "Node.js (node) is not on PATH"
    ),
    "tests/cli/test_endpoint_redaction.py::test_a_cli_error_hides_the_endpoint_credentials": (
        "s3fs is not installed"
    ),
    "tests/data/test_ledger.py::test_a_key_not_among_the_allowed_signers_does_not_verify": (
        "ssh-keygen is not on PATH"
    ),
    "tests/app/test_first_page.py::test_the_setting_names_the_directory_of_the_address": (
        "node is not on PATH"
    ),
}
BLOCKED = ("playwright", "moto", "gcp_storage_emulator", "s3fs")
# the child: each blocked package unimportable (find_spec and import both see None)
CHILD = (
    "import sys\n"
    f"for name in {BLOCKED!r}:\n"
    "    sys.modules[name] = None\n"
    "import pytest\n"
    "raise SystemExit(pytest.main(sys.argv[1:]))\n"
)


def outcomes(tmp_path: Path, **env: str) -> dict[str, tuple[str, str]]:
    """{test: (failed | skipped | passed, message)} of GUARDED run without their tools."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    child_env = {
        k: v for k, v in os.environ.items() if k not in ("CI", REQUIRE_TOOLS, UPSTREAM_PYTHON)
    }
    child_env.update(
        PATH=str(empty),
        PYTHONPATH=str(ROOT),
        RELIDASH_AZURITE_BLOB=str(empty / "azurite-blob"),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        **env,
    )
    report = tmp_path / "junit.xml"
    argv = [sys.executable, "-c", CHILD, "-q", "-p", "no:cacheprovider"]
    argv += [f"--basetemp={tmp_path / 'base'}", f"--junit-xml={report}", *GUARDED]
    ran = subprocess.run(argv, cwd=ROOT, env=child_env, capture_output=True, text=True, timeout=600)
    assert report.is_file(), ran.stdout + ran.stderr
    found: dict[str, tuple[str, str]] = {}
    for case in ET.parse(report).iter("testcase"):
        name = case.get("name", "").split("[")[0]
        test = next((t for t in GUARDED if t.endswith(f"::{name}")), f"{case.get('classname')}")
        kind, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                kind = "skipped" if child.tag == "skipped" else "failed"
                message = f"{child.get('message', '')} {child.text or ''}"
        if found.get(test, ("passed", ""))[0] == "failed":
            continue  # a parametrized test fails if any of its cases does
        found[test] = (kind, message)
    return found


def test_make_test_requires_every_tool_and_names_the_upstream_python() -> None:
    # what `make test` would run, recipes of the targets it calls included
    printed = subprocess.run(
        ["make", "--dry-run", "--always-make", "test"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    [pytest_line] = [line for line in printed.splitlines() if "-m pytest" in line]
    words = shlex.split(pytest_line)
    assigned = dict(w.split("=", 1) for w in words[: words.index("-m") - 1])
    assert assigned.get(REQUIRE_TOOLS) == "1", pytest_line
    assert assigned.get(UPSTREAM_PYTHON, "").endswith("/bin/python"), pytest_line


def test_with_tools_required_a_missing_tool_fails_each_guarded_test(tmp_path: Path) -> None:
    found = outcomes(tmp_path, **{REQUIRE_TOOLS: "1"})
    assert set(found) == set(GUARDED)
    for test, words in GUARDED.items():
        kind, message = found[test]
        assert kind == "failed" and words in message, (test, kind, message)


def test_on_a_workstation_a_missing_tool_skips_each_guarded_test(tmp_path: Path) -> None:
    found = outcomes(tmp_path)
    assert {test: kind for test, (kind, _) in found.items()} == dict.fromkeys(GUARDED, "skipped")


def test_no_test_module_reads_the_tool_variables_itself() -> None:
    """One guard: a module that read CI or the upstream variable itself, or skipped on
    a missing package or command by itself, would skip under `make test` again."""
    own = re.compile(
        r"""environ(?:\.get)?\s*[\[(]\s*["'](?:CI|RELIDASH_UPSTREAM_PYTHON)["']"""
        r"""|getenv\(\s*["'](?:CI|RELIDASH_UPSTREAM_PYTHON)["']"""
        r"""|importorskip\(|skipif\(\s*(?:shutil\.)?which\("""
    )
    readers = [
        f"{path.name}:{n}"
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in ("required_tools.py", Path(__file__).name)
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if own.search(line)
    ]
    assert readers == []


@pytest.mark.parametrize(("value", "required"), [("1", True), ("0", False), ("", False)])
def test_the_flag_reads_as_set_unless_empty_or_zero(
    value: str, required: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import required_tools

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv(REQUIRE_TOOLS, value)
    assert required_tools.tools_required() is required
    monkeypatch.setenv("CI", "true")
    assert required_tools.tools_required() is True
