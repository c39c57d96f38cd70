"""Names and limits every wing of the data floor shares.

Must not: import anything of the package, or do more than name.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

CONFIG_NAME: Final = "relidash.toml"  # a reports location's settings, beside its reports
# The largest report file read unless --max-file-mb says otherwise, and the most one
# member of an archive may decompress to when a case's transcript is read back.
DEFAULT_MAX_BYTES: Final = 256 * 1024 * 1024


def cache_root() -> Path:
    """Where relidash keeps what it can rebuild: catalogs and object-storage mirrors."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relidash"
