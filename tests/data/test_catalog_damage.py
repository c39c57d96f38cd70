"""A catalog damaged on disk (a flipped byte in a table's block, whose checksum then fails;
a file cut short) is moved aside and rebuilt from the reports, with a message saying so,
by the command that finds it and by a server: never a traceback at every later run.

DuckDB checks a block's checksum only when a query reads that block, so the damage is put
where the commands read: a block of a table a summary reads (found with
`pragma_storage_info`), or the end of the file, where the last block is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from dashboard.analysis import loading
from dashboard.data.load.snapshot import ServedCatalog

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_reports" / "code-agent"
HEADER_BYTES = 3 * 4096  # DuckDB's file header and its two database headers
BLOCK_BYTES = 262144  # DuckDB's default block size
# the tables a server's pages read, compared without the ids a load gives (and the mtime
# the "loaded" start changes)
EVERY_ROW = {
    "reports": "report_id, mtime_ns",
    "cases": "report_id",
    "trials": "report_id",
    "metrics": "report_id",
}


def summary(reports: Path, catalog: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # --json: the document is joined from report_records, which the summary stores
        [
            *(sys.executable, "-m", "dashboard.cli", "summary", str(reports), "--json"),
            *("--catalog", str(catalog)),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def blocks_of(catalog: Path, table: str) -> list[int]:
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT block_id FROM pragma_storage_info($t) WHERE persistent "
            "AND block_id >= 0 ORDER BY block_id",
            {"t": table},
        ).fetchall()
    finally:
        con.close()
    return [block for (block,) in rows]


def flip_block(catalog: Path, block: int) -> None:
    """Invert 16 bytes inside the block: its stored checksum no longer matches."""
    offset = HEADER_BYTES + block * BLOCK_BYTES + 100
    with catalog.open("r+b") as handle:
        handle.seek(offset)
        data = handle.read(16)
        handle.seek(offset)
        handle.write(bytes(b ^ 0xFF for b in data))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(reports, a settled catalog of them, the summary it prints)."""
    root = tmp_path_factory.mktemp("damage")
    reports = root / "reports"
    shutil.copytree(SAMPLES, reports / "code-agent")
    catalog = root / "good.duckdb"
    done = summary(reports, catalog)
    assert done.returncode == 0, done.stderr
    assert not Path(f"{catalog}.wal").exists()  # settled: every table is in the file
    return reports, catalog, done.stdout


def damaged_copy(built: tuple[Path, Path, str], tmp_path: Path, damage: str) -> Path:
    _, good, _ = built
    catalog = tmp_path / "catalog.duckdb"
    shutil.copyfile(good, catalog)
    if damage == "cut":
        last = max(blocks_of(catalog, table) for table in ("reports", "cases", "report_records"))
        with catalog.open("r+b") as handle:
            handle.truncate(HEADER_BYTES + last[-1] * BLOCK_BYTES + 1000)
    else:
        blocks = blocks_of(catalog, damage)
        assert blocks, damage
        flip_block(catalog, blocks[0])
    return catalog


@pytest.mark.parametrize("damage", ["report_records", "reports", "files", "meta", "cut"])
def test_a_damaged_catalog_is_moved_aside_and_rebuilt_with_the_same_numbers(
    built: tuple[Path, Path, str], tmp_path: Path, damage: str
) -> None:
    reports, _, expected = built
    catalog = damaged_copy(built, tmp_path, damage)

    first = summary(reports, catalog)
    assert "Traceback" not in first.stderr
    assert first.returncode == 0, first.stderr
    assert first.stdout == expected
    assert "is damaged" in first.stderr and f"{catalog}.broken" in first.stderr
    assert Path(f"{catalog}.broken").is_file()

    again = summary(reports, catalog)
    assert (again.returncode, again.stdout) == (0, expected)
    assert "damaged" not in again.stderr
    assert "0 parsed" in again.stderr  # the rebuilt catalog is used, not rebuilt again


# A file cut short and then loaded is written whole again by the load's checkpoint, which
# rewrites the blocks it cut: nothing is left to find, and the numbers hold.
@pytest.mark.parametrize(
    ("start", "damage"),
    [
        *(("adopted", damage) for damage in ("report_records", "cases", "metrics", "cut")),
        *(("loaded", damage) for damage in ("report_records", "cases", "metrics")),
    ],
)
def test_a_server_rebuilds_a_damaged_catalog_instead_of_serving_it(
    built: tuple[Path, Path, str],
    tmp_path: Path,
    damage: str,
    start: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A server started on a damaged catalog would serve it with the damage in blocks no
    load reads, to show on a page: on an unchanged directory it adopts the catalog as it
    is, and on a changed one (a report touched) its load reads only what changed. Its
    first copy has every block read, and the damaged catalog is rebuilt. Every table then
    reads back as the undamaged catalog's."""
    reports, good, _ = built
    catalog = damaged_copy(built, tmp_path, damage)
    if start == "loaded":
        touched = next((reports / "code-agent").iterdir())
        os.utime(touched, ns=(touched.stat().st_mtime_ns + 10**9,) * 2)
    served = ServedCatalog(reports, str(catalog))
    served.refresh(lambda con: loading.refresh_catalog(con, reports))
    assert "is damaged" in caplog.text
    assert Path(f"{catalog}.broken").is_file()
    cursor = served.cursor()
    reference = duckdb.connect(str(good), read_only=True)
    try:
        for table, ignored in EVERY_ROW.items():
            query = f"SELECT * EXCLUDE ({ignored}) FROM {table} ORDER BY ALL"  # names above
            assert cursor.execute(query).fetchall() == reference.execute(query).fetchall()
    finally:
        reference.close()
