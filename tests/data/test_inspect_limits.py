"""Decompressing an Inspect `.eval` costs what its members claim, never what they expand to.

A zip member records its uncompressed size, and a forged one can claim 2,000 bytes while
its compressed bytes (a few hundred kilobytes of Zstandard RLE blocks, or of repeated
deflate blocks) expand to 4 GiB. The load runs in a child process whose address space is
capped at about 1 GiB above what it holds before loading: a reader that decompresses the
whole member dies with MemoryError there, and with it the whole load. Here the lying file
is one problem that names its member and the rest loads; a lying sample member makes its
case's transcript unavailable, with the same reason, instead of costing gigabytes per view.
A member honestly too large for the memory left is that file's problem too.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest
import summaries
import zstandard

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.formats.inspect.log import LogProblem
from dashboard.data.formats.inspect.transcript import read_sample_epochs
from dashboard.data.formats.inspect.zip_members import (
    DEFLATED,
    STORED,
    ZSTANDARD,
    ArchiveError,
    read_directory,
    read_member,
)

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "inspect" / "ticket_triage"
GOOD_EVAL = FIXTURES / "v2.0.0_epochs3.eval"
CLAIM = 2000  # the uncompressed size the lying members record
BOMB = 4 << 30  # what they expand to
HEADROOM = 1 << 30  # address space the child may add once its imports are done

# The child: imports and an open catalog first, then the cap, then the load; it prints the
# problems, the reports loaded and, for each case of a `view-*` report, why its trials
# could not be read (TranscriptUnavailable), as one JSON line.
CHILD = """
import json, resource, sys
from pathlib import Path
from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.render.summary_json import summary_text
from dashboard.data.load.transcripts import TranscriptUnavailable, read_case_trials

con = open_catalog(MEMORY)
with open("/proc/self/status") as status:
    size = next(int(l.split()[1]) * 1024 for l in status if l.startswith("VmSize:"))
cap = size + int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
loading.refresh_catalog(con, Path(sys.argv[1]), max_bytes=int(sys.argv[3]))
doc = json.loads(summary_text(con))
views = {}
for report_id, file in con.execute(
    "SELECT report_id, file FROM reports WHERE file LIKE 'view-%'"
).fetchall():
    for (case_idx,) in con.execute(
        "SELECT case_idx FROM cases WHERE report_id = $r ORDER BY case_idx", {"r": report_id}
    ).fetchall():
        try:
            read_case_trials(con, report_id, case_idx)
        except TranscriptUnavailable as exc:
            views.setdefault(file, []).append(str(exc))
print(json.dumps({
    "problems": doc["problems"],
    "reports": sorted(r["file"] for r in doc["reports"]),
    "views": views,
}))
"""


# ---- archives: real members, and members whose compressed bytes outgrow their claim -----


def zstd_bomb(total: int) -> bytes:
    """A valid Zstandard frame of `total` spaces as RLE blocks: 4 bytes per 128 KiB."""
    block = 128 * 1024
    frame = bytearray(b"\x28\xb5\x2f\xfd\x00\x38")  # magic; no content size; 128 KiB window
    count = total // block
    for i in range(count):
        frame += ((i == count - 1) | (1 << 1) | (block << 3)).to_bytes(3, "little") + b" "
    return bytes(frame)


def deflate_bomb(total: int) -> bytes:
    """A valid raw deflate stream of `total` spaces: one fully flushed MiB, repeated."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    mib = compressor.compress(b" " * (1 << 20)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return mib * (total >> 20) + compressor.flush()


Entry = tuple[str, int, bytes, int, int]  # name, method, compressed bytes, size, crc


def honest(name: str, data: bytes) -> Entry:
    return (name, ZSTANDARD, zstandard.ZstdCompressor().compress(data), len(data), zlib.crc32(data))


def zip_bytes(entries: list[Entry]) -> bytes:
    """A zip archive of the entries exactly as given, claimed sizes included."""
    out, central = bytearray(), bytearray()
    for name, method, raw, size, crc in entries:
        encoded, offset = name.encode(), len(out)
        out += struct.pack(
            "<4sHHHHHLLLHH", b"PK\x03\x04", 63, 0, method, 0, 0, crc, len(raw), size,
            len(encoded), 0,
        ) + encoded + raw  # fmt: skip
        central += struct.pack(
            "<4sHHHHHHLLLHHHHHLL", b"PK\x01\x02", 63, 63, 0, method, 0, 0, crc, len(raw),
            size, len(encoded), 0, 0, 0, 0, 0, offset,
        ) + encoded  # fmt: skip
    start = len(out)
    out += central + struct.pack(
        "<4sHHHHLLH", b"PK\x05\x06", 0, 0, len(entries), len(entries), len(central), start, 0
    )
    return bytes(out)


def good_entries() -> list[Entry]:
    with GOOD_EVAL.open("rb") as handle:
        directory = read_directory(handle, GOOD_EVAL.stat().st_size)
        return [
            honest(name, bytes(read_member(handle, m, 1 << 30))) for name, m in directory.items()
        ]


def replaced(entries: list[Entry], name: str, entry: Entry) -> list[Entry]:
    assert name in {e[0] for e in entries}
    return [entry if e[0] == name else e for e in entries]


def first_sample_member(entries: list[Entry]) -> str:
    return next(e[0] for e in entries if e[0].startswith("samples/"))


def load_capped(root: Path, max_bytes: int = 256 << 20) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "MALLOC_ARENA_MAX": "2"}
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(HEADROOM), str(max_bytes)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    result: dict[str, Any] = json.loads(run.stdout.strip().splitlines()[-1])
    return result


# ---- the reader stops at the claim --------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "raw"),
    [
        (ZSTANDARD, zstd_bomb(64 << 20)),
        (DEFLATED, deflate_bomb(64 << 20)),
        (STORED, b" " * (CLAIM * 3)),
    ],
    ids=["zstandard", "deflate", "stored"],
)
def test_a_member_that_outgrows_its_claim_is_refused(method: int, raw: bytes) -> None:
    archive = io.BytesIO(zip_bytes([("summaries.json", method, raw, CLAIM, zlib.crc32(b""))]))
    member = read_directory(archive, len(archive.getvalue()))["summaries.json"]
    with pytest.raises(ArchiveError, match=r"summaries\.json decompresses past 2,000 bytes"):
        read_member(archive, member, 256 << 20)


def test_an_honest_member_still_reads_with_every_method() -> None:
    data = json.dumps([{"id": i, "text": "x" * i} for i in range(300)]).encode()
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    entries = [
        ("z.json", ZSTANDARD, zstandard.ZstdCompressor().compress(data), len(data), zlib.crc32(data)),
        ("d.json", DEFLATED, compressor.compress(data) + compressor.flush(), len(data), zlib.crc32(data)),
        ("s.json", STORED, data, len(data), zlib.crc32(data)),
        ("e.json", ZSTANDARD, zstandard.ZstdCompressor().compress(b""), 0, 0),
    ]  # fmt: skip
    buffer = io.BytesIO(zip_bytes(entries))
    directory = read_directory(buffer, len(buffer.getvalue()))
    for name in ("z.json", "d.json", "s.json"):
        assert read_member(buffer, directory[name], len(data)) == data
    assert read_member(buffer, directory["e.json"], 1) == b""
    with pytest.raises(ArchiveError, match="over the"):
        read_member(buffer, directory["z.json"], len(data) - 1)


# ---- under a memory cap: the lying file is a problem, the rest loads ----------------------


def test_lying_members_under_a_memory_cap_are_problems_and_the_rest_loads(
    tmp_path: Path,
) -> None:
    root = tmp_path / "reports"
    shutil.copytree(FIXTURES, root / "good")
    entries = good_entries()
    (root / "zstd-lie.eval").write_bytes(
        zip_bytes(
            replaced(
                entries, "summaries.json", ("summaries.json", ZSTANDARD, zstd_bomb(BOMB), CLAIM, 0)
            )
        )
    )
    (root / "deflate-lie.eval").write_bytes(
        zip_bytes(
            replaced(
                entries, "header.json", ("header.json", DEFLATED, deflate_bomb(BOMB), CLAIM, 0)
            )
        )
    )
    sample = first_sample_member(entries)
    (root / "view-lie.eval").write_bytes(
        zip_bytes(replaced(entries, sample, (sample, ZSTANDARD, zstd_bomb(BOMB), CLAIM, 0)))
    )
    assert (root / "zstd-lie.eval").stat().st_size < 1 << 20

    result = load_capped(root)

    problems = {p["file"]: p["reason"] for p in result["problems"]}
    assert set(problems) == {"zstd-lie.eval", "deflate-lie.eval"}, result["problems"]
    assert "its member summaries.json decompresses past 2,000 bytes" in problems["zstd-lie.eval"]
    assert "its member header.json decompresses past 2,000 bytes" in problems["deflate-lie.eval"]
    assert result["reports"] == sorted(
        [f"good/{p.name}" for p in FIXTURES.iterdir()] + ["view-lie.eval"]
    )
    (reason,) = result["views"]["view-lie.eval"]  # only the lying sample's case
    assert f"its member {sample} decompresses past 2,000 bytes" in reason


def test_a_member_too_large_for_the_memory_left_is_a_problem(tmp_path: Path) -> None:
    """An honest claim the limit allows but the memory does not: that file, not the load."""
    root = tmp_path / "reports"
    shutil.copytree(FIXTURES, root / "good")
    entries = good_entries()
    size = HEADROOM * 3 // 4  # the member, then its text: more than the headroom
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(b" " * (1 << 20), crc)
    (root / "large.eval").write_bytes(
        zip_bytes(
            replaced(
                entries, "summaries.json", ("summaries.json", ZSTANDARD, zstd_bomb(size), size, crc)
            )
        )
    )
    result = load_capped(root, max_bytes=2 * size)
    problems = {p["file"]: p["reason"] for p in result["problems"]}
    assert set(problems) == {"large.eval"}, result["problems"]
    assert "more memory" in problems["large.eval"]
    assert result["reports"] == sorted(f"good/{p.name}" for p in FIXTURES.iterdir())


# ---- a log's members add up to the limit, not each to it ----------------------------------


def test_members_within_the_limit_each_but_over_it_together_are_a_problem(
    tmp_path: Path,
) -> None:
    """A journal of summaries (an interrupted log) and a sample's epochs are read member by
    member; what they decompress to together is held to the limit as one member is."""
    with GOOD_EVAL.open("rb") as handle:
        directory = read_directory(handle, GOOD_EVAL.stat().st_size)
    journal = {n: m for n, m in directory.items() if n.startswith("_journal/")}
    kept = [e for e in good_entries() if e[0] in journal or e[0].startswith("samples/")]
    root = tmp_path / "reports"
    root.mkdir()
    (root / "journal.eval").write_bytes(zip_bytes(kept))
    biggest = max(m.size for m in journal.values())
    together = sum(m.size for m in journal.values())
    assert biggest < together // 2

    for limit, loads in ((together - 1, False), (together, True)):
        con = open_catalog(MEMORY)
        loading.refresh_catalog(con, root, max_bytes=limit)
        document = summaries.summary_json(con)
        con.close()
        assert bool(document["reports"]) is loads
        if not loads:
            (problem,) = document["problems"]
            assert problem["file"] == "journal.eval"
            assert "size limit together" in problem["reason"]

    epochs = {n: m for n, m in directory.items() if n.startswith(first_sample_member(kept)[:-7])}
    sample_id = first_sample_member(kept).removeprefix("samples/").split("_epoch_")[0]
    path = str(root / "journal.eval")
    size = (root / "journal.eval").stat().st_size
    assert len(read_sample_epochs(path, size, int(sample_id), 1 << 20)) == len(epochs) > 1
    with pytest.raises(LogProblem, match="size limit together"):
        read_sample_epochs(path, size, int(sample_id), sum(m.size for m in epochs.values()) - 1)
