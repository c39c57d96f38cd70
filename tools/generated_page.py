"""A docs page written by a tool (docs/commands.md, docs/performance.md): write it, or with
--check say whether it is what the tool gives, so a hand edit or a stale page shows."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path


def write_or_check(
    doc: Path, render: Callable[[], str], description: str, stale: str, argv: list[str] | None
) -> int:
    """The tool's command line: 0 when written or current; 1 when --check finds it stale."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not doc.exists() or doc.read_text() != text:
            print(f"{doc.name} is not what {stale}", file=sys.stderr)
            return 1
        return 0
    doc.write_text(text)
    print(doc)
    return 0
