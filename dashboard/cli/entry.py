"""The `relidash` console script (and `python -m dashboard.cli`): main(), with a Ctrl-C
during its imports, before main itself runs, said in one line as main says one
later, instead of a traceback. Imports nothing until then.

A command that returns ends the process at once (`leave`): by then it has closed what it
wrote (files, the catalog, its child processes), and the interpreter's teardown would only
collect and free every object numpy, DuckDB and the load made, which the OS frees anyway,
at a cost to every command. A command that raises ends the usual way, with its traceback.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn


def run() -> int:
    try:
        from dashboard.cli.main import main
    except KeyboardInterrupt:
        print("relidash: interrupted", file=sys.stderr)
        return 130  # common.EXIT_INTERRUPTED, spelled here: common may be what was stopped
    leave(main())


def leave(code: int) -> NoReturn:
    """Write out what stdout and stderr hold and end the process with `code`."""
    for stream in (sys.stdout, sys.stderr):
        # its reader may be gone (`| head`), or the stream closed: what was written stands
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
