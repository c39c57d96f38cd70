"""Memory stays flat in the number of report files: a cold `relidash summary --json` of
8,000 small reports peaks within a fixed bound of the peak for 2,000.

A load that held every report's metrics until its end, or a summary batch that read every
report's metrics, would grow the peak by kilobytes a file: over the 6,000 more files
here, far past the bound.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dashboard.simulate import simulate_reports

ROOT = Path(__file__).resolve().parents[2]
GROWTH_BOUND_MB = 60.0

# The document goes to a writer that counts it and keeps none of it, as a pipe to another
# program would: a StringIO holding it would measure the document (tens of millions of
# characters for 8,000 reports, two bytes each once an em dash is among them, and a copy
# to read them back), not relidash's memory.
PROBE = r"""
import contextlib, io, resource, sys
from dashboard.cli.main import main

class Counted(io.TextIOBase):
    size = 0
    def write(self, text):
        self.size += len(text)
        return len(text)

out = Counted()
with contextlib.redirect_stdout(out):
    code = main(["summary", sys.argv[1], "--json", "--catalog", sys.argv[2]])
assert code == 0
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, out.size)
"""


def peak_mb(reports: Path, catalog: Path) -> tuple[float, int]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(reports), str(catalog)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    peak, size = done.stdout.split()
    return float(peak), int(size)


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    out = {}
    for files, suites in ((2000, 10), (8000, 40)):
        root = tmp_path_factory.mktemp(f"reports{files}")
        simulate_reports(root, suites=suites, releases=200, cases=6, runs=3, fmt="0.15")
        out[files] = root
    return out


def test_peak_memory_does_not_grow_with_the_file_count(
    corpora: dict[int, Path], tmp_path: Path
) -> None:
    small, small_doc = peak_mb(corpora[2000], tmp_path / "small.duckdb")
    large, large_doc = peak_mb(corpora[8000], tmp_path / "large.duckdb")
    assert large_doc > 3 * small_doc  # the larger document really was written
    assert large - small < GROWTH_BOUND_MB, (
        f"peak RSS {small:.0f} MB for 2,000 reports, {large:.0f} MB for 8,000"
    )
