"""The `relidash` console script (and `python -m dashboard.cli`): main(), with a Ctrl-C
during its imports, the first tenth of a second or so, said in one line as main says one
later, instead of a traceback. Imports nothing until then.
"""

from __future__ import annotations

import sys


def run() -> int:
    try:
        from dashboard.cli.main import main
    except KeyboardInterrupt:
        print("relidash: interrupted", file=sys.stderr)
        return 130  # common.EXIT_INTERRUPTED, spelled here: common may be what was stopped
    return main()
