"""scan.file_facts' digest, nesting and NaN / Infinity signs, against plain Python over the
same bytes; and
the walk, which frees its entries as soon as they are dropped."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from dashboard.data.load.facts import (
    BOUND_BLOCK,
    DEEP_NESTING,
    _bracket_bound,
    _bracket_depth,
    _scratch,
    file_facts,
)
from dashboard.data.sources.digests import DIGEST_CHUNK, FAST_DIGEST, file_digests
from dashboard.data.sources.digests import has_constant as _has_constant
from dashboard.data.sources.walk import scan_directory

REPO = Path(__file__).resolve().parents[2]


def reference_depth(data: bytes) -> tuple[int, int]:
    """(final depth, deepest) counting every bracket byte, one byte at a time."""
    depth = deepest = 0
    for byte in data:
        if byte in b"{[":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"}]":
            depth -= 1
    return depth, deepest


# bytes rich in brackets and in their neighbours under OR 0x20 (';', '=', 'K', 'M', etc.)
NEAR_BRACKETS = st.binary(max_size=400) | st.lists(
    st.sampled_from(b"{}[];=[]{}KM{}kmx\x80\xfb\xfd\xdb\xdd"), max_size=400
).map(bytes)


@settings(max_examples=300, deadline=None)
@given(data=NEAR_BRACKETS, cuts=st.lists(st.integers(0, 400), max_size=5))
def test_bracket_depth_equals_counting_one_byte_at_a_time(data: bytes, cuts: list[int]) -> None:
    depth = deepest = 0
    bounds = sorted({0, len(data), *(c for c in cuts if c <= len(data))})
    for start, end in zip(bounds, bounds[1:], strict=False):
        depth, deepest = _bracket_depth(data[start:end], depth, deepest)
    assert (depth, deepest) == reference_depth(data)


@settings(max_examples=300, deadline=None)
@given(data=NEAR_BRACKETS, before=st.integers(0, 5), repeat=st.integers(1, 40))
def test_bracket_bound_is_never_too_shallow_and_less_than_a_block_too_deep(
    data: bytes, before: int, repeat: int
) -> None:
    data *= repeat  # up to 16,000 bytes: many blocks, and a last one cut short
    end, deepest = reference_depth(data)
    bound_end, bound = _bracket_bound(data, before, 0, _scratch())
    assert bound_end == before + end
    # (the reference starts at depth 0 and never reports below it)
    assert before + deepest <= bound < max(before, before + deepest) + BOUND_BLOCK or (
        not data and bound == 0
    )


def test_nesting_sign_at_the_limit_and_across_a_chunk_seam(tmp_path: Path) -> None:
    def nested(levels: int, pad: int) -> bytes:
        return (
            b'{"suite": "s", "pad": "'
            + b" " * pad
            + b'", "x": '
            + b"[" * levels
            + b"][" * 40  # at the deepest, a block's bound counts 40 opening brackets
            + b"]" * levels
            + b"}"
        )

    for levels, pad, deep in (
        (DEEP_NESTING - 1, 10, False),  # the object's own brace makes DEEP_NESTING
        (DEEP_NESTING, 10, True),
        (DEEP_NESTING, DIGEST_CHUNK - 150, True),  # the run of '[' straddles two reads
        # a chunk of a MiB is bounded (numpy), the bound over the limit, then counted
        (DEEP_NESTING - 1, DIGEST_CHUNK - 150, False),
        (DEEP_NESTING - 1, DIGEST_CHUNK - 100_000, False),
        (DEEP_NESTING, DIGEST_CHUNK - 100_000, True),
    ):
        path = tmp_path / f"n{levels}-{pad}.json"
        path.write_bytes(nested(levels, pad))
        assert file_facts(str(path)).maybe_deep is deep, (levels, pad)


# text rich in the words' letters and their near misses ("Na", "Inf", "NAN", "nan")
NEAR_CONSTANTS = st.lists(
    st.sampled_from([b"N", b"a", b"I", b"n", b"f", b"i", b"t", b"y", b"NaN", b"Infinity", b"x"]),
    max_size=60,
).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(NEAR_CONSTANTS, min_size=1, max_size=3))
def test_constant_sign_equals_a_substring_search(parts: list[bytes]) -> None:
    expected = any(word in part for part in parts for word in (b"NaN", b"Infinity"))
    assert _has_constant(*parts) is expected
    assert _has_constant(*map(bytearray, parts)) is expected  # a full chunk is the buffer


def test_constant_sign_across_a_chunk_seam(tmp_path: Path) -> None:
    for word in (b"NaN", b"Infinity"):
        for cut in range(1, len(word)):  # the word split between two reads
            path = tmp_path / f"{word.decode()}-{cut}.json"
            pad = b"N I Na Inf " * (DIGEST_CHUNK // 11)
            path.write_bytes(pad[: DIGEST_CHUNK - cut] + word + b" Nope, Infinit")
            assert file_facts(str(path)).maybe_constants is True, (word, cut)
    near = tmp_path / "near.json"
    near.write_bytes(b"N I Na Inf nan NAN Infinit " * (DIGEST_CHUNK // 9))
    assert file_facts(str(near)).maybe_constants is False


def test_digests_are_xxh3_for_change_and_sha256_for_publishing(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    data = b'{"cases": []}' + bytes(range(256)) * (3 * DIGEST_CHUNK // 256 + 7)
    path.write_bytes(data)
    fast = FAST_DIGEST + xxhash.xxh3_128(data).hexdigest()
    assert file_facts(str(path)).digest == fast
    assert file_digests(path) == (fast, hashlib.sha256(data).hexdigest())
    zipped = tmp_path / "log.eval"
    zipped.write_bytes(b"PK\x03\x04" + data)
    assert (
        file_facts(str(zipped)).digest
        == FAST_DIGEST + xxhash.xxh3_128(b"PK\x03\x04" + data).hexdigest()
    )


def test_the_walk_leaves_no_reference_cycle(tmp_path: Path) -> None:
    """A cycle would keep every entry of a large walk until the next garbage collection
    (a pause at a command's exit). In a fresh interpreter: other tests' threads make
    garbage."""
    for suite in ("a", "b/c"):
        (tmp_path / suite).mkdir(parents=True)
        (tmp_path / suite / "r.json").write_text("{}")
    script = (
        "import gc, sys; from pathlib import Path; "
        "from dashboard.data.sources.walk import scan_directory; gc.collect(); gc.disable(); "
        "entries, problems = scan_directory(Path(sys.argv[1])); "
        "assert [e.path for e in entries] == ['a/r.json', 'b/c/r.json'], entries; "
        "del entries, problems; print(gc.collect())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert done.stdout.strip() == "0"


def test_the_walk_finds_report_files_and_names_what_cannot_be_one(tmp_path: Path) -> None:
    """In os.walk's order; links to files followed, links to directories not; hidden
    names skipped; every *.json or *.eval that is not a readable regular file a problem."""
    root = tmp_path / "reports"
    (root / "b" / "deep").mkdir(parents=True)
    (root / "a").mkdir()
    (root / ".hidden").mkdir()
    (root / "x.json").mkdir()
    for path in ("top.json", "a/2.json", "a/1.eval", "b/deep/3.json", ".hidden/h.json",
                 "a/.h.json", "x.json/inner.json", "README", "a/notes.txt"):  # fmt: skip
        (root / path).write_text("{}")
    (root / "a" / "linked.json").symlink_to(root / "top.json")
    (root / "to-b").symlink_to(root / "b", target_is_directory=True)  # not followed
    (root / "link-dir.json").symlink_to(root / "a", target_is_directory=True)
    (root / "dangling.json").symlink_to(root / "nowhere.json")
    (root / "loop.json").symlink_to(root / "loop.json")
    os.mkfifo(root / "pipe.json")
    entries, problems = scan_directory(root)
    assert [e.path for e in entries] == [
        "top.json", "a/1.eval", "a/2.json", "a/linked.json", "b/deep/3.json",
        "x.json/inner.json",
    ]  # fmt: skip
    assert all(e.abspath == str(root / e.path) for e in entries)
    assert entries[3].size == 2  # the linked file's
    assert {p.path: p.reason for p in problems} == {
        "dangling.json": "disappeared or is a broken symbolic link",
        "link-dir.json": "is a directory, not a report file",
        "loop.json": "is a symbolic link loop",
        "pipe.json": "is not a regular file",
        "x.json": "is a directory, not a report file",
    }
