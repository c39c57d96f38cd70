"""`relidash compare --format github` (as the docs say), and every command's usage naming
its arguments as docs/commands.md's command lines do (tools/commands_doc.py writes them
from the parser); the README saying how to run `relidash` after `make run`."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
from cli_run import run_cli

from dashboard.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
SAMPLE = ROOT / "sample_reports"
# said once on the page for every command ("Every command that loads reports also takes")
COMMON = {"--catalog", "--max-file-mb", "--anon", "--catalog-wait", "-h", "--help"}


def compare(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    args = ["compare", str(SAMPLE), "--suite", "code-agent", "--base", "v1.10.0"]
    return run_cli([*args, "--head", "v1.11.0", "--catalog", ":memory:", *extra], capsys)


def test_compare_format_github_writes_markdown(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = compare(capsys, "--format", "github")
    assert code == 0, err
    assert out.startswith("## relidash compare: code-agent v1.10.0 → v1.11.0\n")
    assert "| Metric | Base | Head | Δ (pts) | 95% CI (pts) |" in out
    assert re.search(r"^\| pass@1 \| \d+\.\d% \| \d+\.\d% \| [+-]\d+\.\d \| \[", out, re.M)
    assert "### Case ledger" in out
    assert "<details><summary>newly flaky: 1</summary>" in out
    assert "still passing: " not in out  # counted, not listed
    text_code, text, _ = compare(capsys)
    assert text_code == 0 and text != out and text.startswith("relidash compare:")


def test_compare_json_and_format_together_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = compare(capsys, "--json", "--format", "github")
    assert code == 2
    assert "not allowed with argument" in err


def readme_commands() -> dict[str, str]:
    """Each `relidash CMD ...` synopsis line of docs/commands.md's command block."""
    lines = {}
    for block in re.findall(r"```sh\n(.*?)```", COMMANDS, re.S):
        for line in block.splitlines():
            match = re.match(r"relidash (\w+)\s+(.*?)(\s+#.*)?$", line)
            if match and match[1] not in lines and not re.search(r"(s3|gs|az)://", line):
                lines[match[1]] = match[2]
    return lines


def readme_arguments(synopsis: str) -> tuple[dict[str, str], list[str]]:
    """Options (-> their value's name, "" for a flag) and positionals of a synopsis."""
    options: dict[str, str] = {}
    positionals: list[str] = []
    words = synopsis.replace("[", " ").replace("]", " ").split()
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("--"):
            value = words[i + 1] if i + 1 < len(words) and not words[i + 1].startswith("-") else ""
            if value in ("...", "|"):
                value = ""
            options[word] = value
            i += 2 if value else 1
        elif word not in ("...", "|"):
            positionals.append(word)
            i += 1
        else:
            i += 1
    return options, positionals


def usage_arguments(parser: argparse.ArgumentParser) -> tuple[dict[str, str], list[str]]:
    options: dict[str, str] = {}
    positionals: list[str] = []
    for action in parser._actions:
        if action.option_strings:
            long = [o for o in action.option_strings if o.startswith("--")][0]
            if action.nargs == 0:
                options[long] = ""
            elif action.choices is not None and action.metavar is None:
                options[long] = "|".join(str(c) for c in action.choices)
            else:
                options[long] = str(action.metavar or action.dest.upper())
        else:
            positionals.append(str(action.metavar or action.dest))
    return options, positionals


def subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_is_in_the_readme_named_as_its_usage_names_it() -> None:
    readme = readme_commands()
    commands = subcommands()
    assert set(readme) == set(commands), (set(readme), set(commands))
    wrong = []
    for name, parser in commands.items():
        said, said_positional = readme_arguments(readme[name])
        has, has_positional = usage_arguments(parser)
        if said_positional != has_positional:
            wrong.append(f"{name}: README {said_positional}, usage {has_positional}")
        for option in sorted((set(said) | set(has)) - COMMON):
            if option not in has:
                wrong.append(f"{name}: README has {option}, usage does not")
            elif option not in said:
                wrong.append(f"{name}: usage has {option} {has[option]}, README does not")
            elif said[option] != has[option]:
                wrong.append(f"{name} {option}: README {said[option]!r}, usage {has[option]!r}")
    assert not wrong, "\n".join(wrong)


def test_readme_says_how_to_run_relidash_after_make_run() -> None:
    head = README[: README.index("## The pages")]
    assert ".venv/bin/relidash" in head and "make run" in head
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^BIN := \$\(VENV\)/bin$", makefile, re.M)
    assert re.search(r"^VENV := \.venv$", makefile, re.M)
