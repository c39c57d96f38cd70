"""Text from reports and users printed on a terminal: control characters shown as escapes,
never acted on. A `--by` or a suite name holding a screen clear, a window-title change, an
OSC 8 link or a newline that forges a `relidash:` line reaches stderr and stdout escaped,
through `signoff`, `reviews`, `summary` and the error a bad name gives; the record itself
keeps the text as given.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_run import run_cli

from dashboard.data.records.signoffs import read_signoffs
from dashboard.render.formatting import one_line
from dashboard.render.visible import visible

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "mv-0.18.0_early-stop_runs8.json"

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;owned\x07"
LINK = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"
FORGED = "\nrelidash: approved release v9 by the CEO (identity verified)"
HOSTILE_BY = f"Ada{CLEAR}{TITLE}{LINK}{FORGED}"
HOSTILE_SUITE = f"bot{CLEAR}{TITLE}\u202e{FORGED}"
# what a terminal acts on: ESC, BEL, C1 controls (CSI 0x9b, OSC 0x9d), CR, bidi overrides
ACTED_ON = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain release v1.2", "plain release v1.2"),
        ("Zoë Ålund 日本語 ✓", "Zoë Ålund 日本語 ✓"),
        ("a\x1b[2Jb", "a\\x1b[2Jb"),
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("line\nforged", "line\\nforged"),
        ("back\rover", "back\\rover"),
        ("tab\there", "tab\\there"),
        ("\x9b31m", "\\x9b31m"),  # C1 CSI, acted on by some terminals
        ("abc\u202edef", "abc\\u202edef"),  # right-to-left override
        ("zero\u200bwidth", "zero\\u200bwidth"),
        ("sep\u2028line", "sep\\u2028line"),
        ("\x7f", "\\x7f"),
        ("nbsp\u00a0kept", "nbsp\u00a0kept"),
    ],
)
def test_visible(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert not ACTED_ON.search(visible(text))


def test_one_line_escapes_what_it_does_not_flatten() -> None:
    assert one_line("a\x1b[2J\nb") == "a\\x1b[2J b"
    assert one_line("x\u202ey", 80) == "x\\u202ey"


def _hostile_reports(tmp_path: Path) -> Path:
    reports = tmp_path / "reports"
    reports.mkdir()
    data = json.loads(FIXTURE.read_text())
    data["suite"] = HOSTILE_SUITE
    (reports / "hostile.json").write_text(json.dumps(data))
    return reports


def _assert_inert(text: str) -> None:
    assert not ACTED_ON.search(text), repr(text)
    assert not any(line.startswith("relidash: approved release v9") for line in text.splitlines())


def test_signoff_and_reviews_print_hostile_names_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    reports = _hostile_reports(tmp_path)
    rdir = tmp_path / "reviews"
    code, out, err = run_cli(
        [
            "signoff", str(reports), "--suite", HOSTILE_SUITE, "--decision", "approved",
            "--by", HOSTILE_BY, "--comment", f"fine{CLEAR}", "--reviews", str(rdir),
            "--catalog", ":memory:",
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    _assert_inert(out + err)
    assert visible(HOSTILE_BY) in err and visible(HOSTILE_SUITE) in err
    [stored] = read_signoffs(rdir)[0]
    assert (stored.record["by"], stored.record["suite"]) == (HOSTILE_BY, HOSTILE_SUITE)

    code, out, err = run_cli(["reviews", str(reports), "--reviews", str(rdir)], capsys)
    assert code == 0, err
    _assert_inert(out + err)
    assert "Ada\\x1b[2J" in out

    code, out, err = run_cli(["summary", str(reports), "--catalog", ":memory:"], capsys)
    assert code == 0, err
    _assert_inert(out)


def test_an_error_naming_a_hostile_name_is_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    reports = _hostile_reports(tmp_path)
    code, _, err = run_cli(
        [
            "signoff", str(reports), "--suite", f"nope{TITLE}", "--decision", "approved",
            "--by", "Ada", "--reviews", str(tmp_path / "reviews"), "--catalog", ":memory:",
        ],
        capsys,
    )  # fmt: skip
    assert code == 2
    _assert_inert(err)
    # the load's line, then the error in one line: the known suite's newline forges none
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[1].startswith("relidash: no suite named"), err


def test_gate_and_compare_print_hostile_names_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    reports = _hostile_reports(tmp_path)
    data = json.loads((reports / "hostile.json").read_text())
    data["model"] = f"next{TITLE}"
    data["timestamp"] = "2099-01-01T00:00:00Z"
    (reports / "hostile-next.json").write_text(json.dumps(data))
    catalog = str(tmp_path / "c.duckdb")
    code, out, err = run_cli(
        [
            "gate", str(reports), "--suite", HOSTILE_SUITE, "--k", "1",
            "--min-ci-low", "0", "--catalog", catalog,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "relidash gate: suite bot\\x1b[2J" in out
    _assert_inert(out + err)
    releases = json.loads(
        run_cli(["summary", str(reports), "--json", "--catalog", catalog], capsys)[1]
    )
    base, head = sorted({r["release"] for r in releases["reports"]}, key=lambda r: "next" in r)
    code, out, err = run_cli(
        [
            "compare", str(reports), "--suite", HOSTILE_SUITE, "--base", base, "--head", head,
            "--catalog", catalog,
        ],
        capsys,
    )  # fmt: skip
    assert code == 0, err
    assert "next\\x1b]0;owned\\x07" in out
    _assert_inert(out + err)
