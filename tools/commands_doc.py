"""Write docs/commands.md: every `relidash` command's synopsis and description, from the
parser itself, so the page names each argument as `relidash CMD --help` does.

    python tools/commands_doc.py [--check]

`--check` exits 1 when docs/commands.md is not what the parser gives (a command or an
option added, renamed or dropped without the page).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tools"))
DOC = ROOT / "docs" / "commands.md"

from generated_page import write_or_check  # noqa: E402

# said once on the page for every command that loads reports
COMMON = ("--catalog", "--max-file-mb", "--anon", "--catalog-wait")

HEADER = """\
# Commands

Every command's arguments, as `relidash COMMAND --help` prints them. `DIR` is a directory
of report files, or a prefix in object storage (`s3://bucket/prefix`, `gs://…`, `az://…`;
[Object storage](object-storage.md)). Every command that loads reports also takes
`--catalog PATH` (where the catalog lives), `--max-file-mb N` (files larger are a
problem, not a report), `--anon` (a public bucket, read unsigned) and
`--catalog-wait SECONDS` (how long to wait for a catalog another process holds, default
600).

This page is written by `python tools/commands_doc.py` from the parser; do not edit it by
hand.

```sh
"""


def subcommands() -> dict[str, argparse.ArgumentParser]:
    from dashboard.cli.main import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def synopsis(name: str, parser: argparse.ArgumentParser) -> str:
    """One line, in the README's style: positionals first, then each option with
    its value's name (choices as `a|b`), optional ones in brackets; -h and the options
    said once for every command left out."""
    words = [f"relidash {name}"]
    options = []
    for action in parser._actions:
        if not action.option_strings:
            shown = str(action.metavar or action.dest)
            words.append(f"[{shown}]" if action.nargs == "?" else shown)
            continue
        long = next(o for o in action.option_strings if o.startswith("--"))
        if long in ("--help", *COMMON):
            continue
        if action.nargs == 0:
            value = ""
        elif action.choices is not None and action.metavar is None:
            value = "|".join(str(c) for c in action.choices)
        else:
            value = str(action.metavar or action.dest.upper())
        text = f"{long} {value}".strip()
        options.append(text if action.required else f"[{text}]")
    return " ".join(words + options)


def render() -> str:
    commands = subcommands()
    lines = [synopsis(name, parser) for name, parser in commands.items()]
    body = [HEADER + "\n".join(lines) + "\n```\n"]
    for name, parser in commands.items():
        body.append(f"## `relidash {name}`\n")
        body.append((parser.description or parser.format_usage()).strip() + "\n")
    return "\n".join(body)


def main(argv: list[str] | None = None) -> int:
    return write_or_check(
        DOC,
        render,
        __doc__.split("\n\n")[0],
        "the parser gives: run tools/commands_doc.py",
        argv,
    )


if __name__ == "__main__":
    raise SystemExit(main())
