"""Names and limits every wing of the data floor shares.

Must not: import anything of the package, or do more than name.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Final

CONFIG_NAME: Final = "relidash.toml"  # a reports location's settings, beside its reports
# The largest report file read unless --max-file-mb says otherwise, and the most one
# member of an archive may decompress to when a case's transcript is read back.
DEFAULT_MAX_BYTES: Final = 256 * 1024 * 1024
# The suffixes of report files, in a directory and in object storage alike; which harness
# wrote one is decided by its content (dashboard/data/formats/).
# How long a command waits, by default, for a catalog another relidash process holds: long
# enough for that process to load a large history from nothing.
CATALOG_WAIT_SECONDS: Final = 600.0
REPORT_SUFFIXES: Final = (".json", ".jsonl", ".eval", ".db", ".sqlite", ".sqlite3")
MEMORY: Final = ":memory:"  # a catalog kept in memory only


class CatalogError(Exception):
    """The catalog cannot be used as asked (a usage problem, not a data problem)."""


def cache_root() -> Path:
    """Where relidash keeps what it can rebuild: catalogs and object-storage mirrors."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relidash"


def default_catalog_path(reports_dir: Path) -> Path:
    """One catalog per reports directory, named after it and a hash of its absolute path."""
    resolved = reports_dir.resolve()
    key = hashlib.sha256(str(resolved).encode()).hexdigest()[:16]
    return cache_root() / f"{resolved.name or 'root'}-{key}.duckdb"


def resolve_catalog_path(reports_dir: Path, catalog: str | None) -> str:
    """The catalog location to use: `catalog` if given, else the default for the directory."""
    if catalog == MEMORY:
        return MEMORY
    path = Path(catalog) if catalog else default_catalog_path(reports_dir)
    resolved = path.resolve()
    if resolved.is_relative_to(reports_dir.resolve()):
        raise CatalogError(
            f"the catalog {path} would be inside the reports directory {reports_dir}; "
            "relidash never writes there. Choose another --catalog path."
        )
    return str(resolved)
