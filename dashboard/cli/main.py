"""The `relidash` command: one parser, one subcommand group per module of this folder.

Usage errors and a missing directory exit with status 2; Ctrl-C with 130.

Building the parser and parsing imports nothing heavy (no DuckDB, numpy or pandas: the
commands import them when they run), so a command that loads a directory begins its
walk (dashboard/data/sources/walk.py) in child processes before those imports, and the two
overlap: in a large directory each takes a noticeable part of a warm command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any, TextIO

from dashboard.cli import ci, plan, policy, reports, review, simulate
from dashboard.cli.common import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, UsageError
from dashboard.data.sources.walk import abandon_walk, walk_ahead


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if getattr(args, "walk_ahead", False):
            walk_ahead(args.directory)
        return _run(args)
    except UsageError as exc:
        print(f"relidash: {_shown(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except BaseException as exc:
        if _raised("dashboard.data.names", "CatalogError", exc):  # catalog.py raises it too
            print(f"relidash: {_shown(exc)}", file=sys.stderr)
            return EXIT_USAGE
        if _interrupted(exc):  # a load stopped midway is redone at the next one
            print("relidash: interrupted", file=sys.stderr)
            return EXIT_INTERRUPTED
        raise
    finally:
        abandon_walk()


def _shown(exc: BaseException) -> str:
    """An error message as printed: names in it (a suite, a file, a --by) may hold control
    characters, shown as escapes rather than acted on by the terminal."""
    from dashboard.render.visible import visible

    return visible(exc)


def _run(args: argparse.Namespace) -> int:
    """Run the command; a catalog found damaged on the way (DuckDB reads a block's
    checksum only when it reads the block, so a flipped byte or a cut file can surface at
    any query) is moved aside, and the command runs again on a catalog rebuilt from the
    reports, unless it had already printed part of its output: then it says to run again.
    """
    watched = _Watched(sys.stdout)
    sys.stdout = watched  # type: ignore[assignment]
    try:
        try:
            return int(args.handler(args))
        except Exception as exc:
            catalog = sys.modules.get("dashboard.data.catalog")
            location = catalog.damaged_catalog(exc) if catalog is not None else None
            if catalog is None or location is None:
                raise
            catalog.discard_damaged(location)
            notice = catalog.damage_notice(location, exc, rebuilt=not watched.written)
            print(notice, file=sys.stderr)
            if watched.written:
                return EXIT_USAGE
            return int(args.handler(args))
    finally:
        sys.stdout = watched.stream


class _Watched:
    """sys.stdout, noting whether anything was written to it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.written = False

    def write(self, text: str) -> int:
        self.written = self.written or bool(text)
        return self.stream.write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _interrupted(exc: BaseException) -> bool:
    """Whether exc is a Ctrl-C, or was raised while one unwound.

    DuckDB stops its running statement and raises (from a numpy fetch, a RuntimeError saying
    so). A Ctrl-C that lands inside `threading.Condition.wait` (a future's result) leaves its
    lock released, and the `with` around the wait then raises "cannot release un-acquired
    lock", with the KeyboardInterrupt as its context.
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, KeyboardInterrupt) or (
            (_raised("duckdb", "InterruptException", link) or isinstance(link, RuntimeError))
            and "interrupted" in str(link).lower()
        ):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


def _raised(module: str, name: str, exc: BaseException) -> bool:
    """Whether exc is module.name, looked up only if the module was imported (it was, if
    it raised): the parser does not import DuckDB."""
    kind = getattr(sys.modules.get(module), name, None)
    return isinstance(kind, type) and isinstance(exc, kind)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relidash",
        description="Reliability dashboard for multivon-eval reports: pass@k, pass^k, lottery cases.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    reports.register(sub)
    ci.register(sub)
    plan.register(sub)
    review.register(sub)
    policy.register(sub)
    simulate.register(sub)
    return parser


if __name__ == "__main__":
    raise SystemExit(main())
