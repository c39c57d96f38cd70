"""Reading Inspect logs: the zip reader against Python's zipfile, Inspect's value_to_float,
sample ids as case ids, which harness a file is, and bad input.

Bad input is made from the real fixtures: a zip that is not an Inspect log, a member whose
compressed bytes are damaged, a truncated archive, a log of an unknown schema version (both
formats), a summaries.json that disagrees with its sample files, and an edited stored
reduction. Each bad file is one problem with a readable reason; the rest loads.
"""

from __future__ import annotations

import io
import json
import math
import re
import shutil
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest
import summaries
import zstandard

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.formats import INSPECT, MULTIVON, harness_of
from dashboard.data.formats.inspect.log import case_key, sample_id_of, value_to_float
from dashboard.data.formats.inspect.zip_members import read_directory, read_member

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "inspect" / "ticket_triage"
GOOD_EVAL = FIXTURES / "v2.0.0_epochs3.eval"
REDUCERS_EVAL = FIXTURES / "v2.2.0_epochs8_reducers.eval"
GOOD_JSON = FIXTURES / "v2.1.0_epochs5_json.json"


# ---- helpers -----------------------------------------------------------------------------


def members_of(path: Path) -> dict[str, bytes]:
    """Every member of a real .eval, decompressed (in archive order)."""
    with path.open("rb") as handle:
        directory = read_directory(handle, path.stat().st_size)
        return {name: read_member(handle, m, 1 << 30) for name, m in directory.items()}


def write_eval(path: Path, members: dict[str, bytes]) -> None:
    """A zip archive whose members are Zstandard-compressed (method 93), as Inspect writes."""
    out, central = bytearray(), bytearray()
    for name, data in members.items():
        raw = zstandard.ZstdCompressor().compress(data)
        encoded = name.encode()
        crc, offset = zlib.crc32(data), len(out)
        out += struct.pack(
            "<4sHHHHHLLLHH", b"PK\x03\x04", 63, 0, 93, 0, 0, crc, len(raw), len(data),
            len(encoded), 0,
        ) + encoded + raw  # fmt: skip
        central += struct.pack(
            "<4sHHHHHHLLLHHHHHLL", b"PK\x01\x02", 63, 63, 0, 93, 0, 0, crc, len(raw),
            len(data), len(encoded), 0, 0, 0, 0, 0, offset,
        ) + encoded  # fmt: skip
    start = len(out)
    out += central + struct.pack(
        "<4sHHHHLLH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), start, 0
    )
    path.write_bytes(bytes(out))


def edited(members: dict[str, bytes], name: str, change: Any) -> dict[str, bytes]:
    data = json.loads(members[name])
    data = change(data) or data
    return {**members, name: json.dumps(data).encode()}


def load(root: Path) -> dict[str, Any]:
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    document = summaries.summary_json(con)
    con.close()
    return document


# ---- the zip reader ----------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.eval")), ids=lambda p: p.name)
def test_directory_and_members_agree_with_zipfile(path: Path) -> None:
    """zipfile reads the directory (it cannot decompress method 93): names, sizes and CRCs
    agree, and every member decompresses to its recorded size and CRC."""
    with zipfile.ZipFile(path) as archive:
        infos = {i.filename: i for i in archive.infolist()}
    with path.open("rb") as handle:
        directory = read_directory(handle, path.stat().st_size)
        assert set(directory) == set(infos)
        for name, member in directory.items():
            info = infos[name]
            assert (member.method, member.size, member.crc) == (
                info.compress_type,
                info.file_size,
                info.CRC,
            )
            assert member.method == 93
            assert zlib.crc32(read_member(handle, member, 1 << 30)) == info.CRC


def test_written_archives_read_back_with_zipfile(tmp_path: Path) -> None:
    """The test's own writer makes archives zipfile accepts, so the bad inputs are real zips."""
    write_eval(tmp_path / "x.eval", {"a.json": b"{}", "b/c.json": b"[1, 2]"})
    with zipfile.ZipFile(tmp_path / "x.eval") as archive:
        assert [i.compress_type for i in archive.infolist()] == [93, 93]
    assert members_of(tmp_path / "x.eval") == {"a.json": b"{}", "b/c.json": b"[1, 2]"}


def test_stored_and_deflated_members_read_too(tmp_path: Path) -> None:
    path = tmp_path / "plain.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("stored.json", b'{"a": 1}', compress_type=zipfile.ZIP_STORED)
        archive.writestr("deflated.json", b'{"b": 2}' * 50, compress_type=zipfile.ZIP_DEFLATED)
    assert members_of(path) == {"stored.json": b'{"a": 1}', "deflated.json": b'{"b": 2}' * 50}


# ---- the rules -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("C", 1.0), ("P", 0.5), ("I", 0.0), ("N", 0.0), (True, 1.0), (False, 0.0), (1, 1.0),
        (0.75, 0.75), ("yes", 1.0), ("True", 1.0), ("no", 0.0), ("0.25", 0.25), ("inf", 0.0),
        ("c", 0.0), ({"a": 1}, 0.0), ([1], 0.0), (None, 0.0), (float("nan"), None),
    ],
)  # fmt: skip
def test_value_to_float_is_inspects(value: Any, expected: float | None) -> None:
    """Inspect's value_to_float (NaN is its unscored sentinel, left out of the trials)."""
    got = value_to_float(value)
    assert got == expected if expected is not None else got is None


@pytest.mark.parametrize("sample_id", [7, -3, 0, "7", "-3", "ticket-7", '"quoted"', "a b", ""])
def test_case_ids_round_trip(sample_id: int | str) -> None:
    key = case_key(sample_id)
    assert sample_id_of(key) == sample_id and type(sample_id_of(key)) is type(sample_id)


def test_int_and_string_ids_stay_distinct() -> None:
    assert case_key(7) == "7" and case_key("ticket-7") == "ticket-7"
    assert case_key("7") == '"7"' != case_key(7)
    assert len({case_key(i) for i in (7, "7", '"7"')}) == 3


@pytest.mark.parametrize(
    ("path", "leading", "harness"),
    [
        ("a.eval", b"PK\x03\x04rest", INSPECT),
        ("a.json", b"PK\x03\x04rest", INSPECT),
        ("a.eval", b"not a zip", INSPECT),
        ("a.json", b'{\n  "version": 2,\n  "status": "success",', INSPECT),
        ("a.json", b'\xef\xbb\xbf{"eval": {"task": "x"}}', INSPECT),
        ("a.json", b'{\n  "suite": "support-agent",', MULTIVON),
        ("a.json", b'{\n  "schema": "multivon.report/v2",', MULTIVON),
        ("a.json", b'{"note": "version"}', MULTIVON),
        ("a.json", b"", MULTIVON),
    ],
)
def test_which_harness_wrote_a_file(path: str, leading: bytes, harness: str) -> None:
    assert harness_of(path, leading) == harness


# ---- bad input: one problem each, the rest loads -----------------------------------------


def test_each_bad_log_is_one_problem_and_the_rest_loads(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    shutil.copytree(FIXTURES, root / "good")
    bad = root / "bad"
    bad.mkdir()
    with zipfile.ZipFile(bad / "not-inspect.eval", "w") as archive:
        archive.writestr("notes.txt", "a zip of something else")
    raw = GOOD_EVAL.read_bytes()
    with GOOD_EVAL.open("rb") as handle:
        summaries = read_directory(handle, len(raw))["summaries.json"]
    header_len = sum(struct.unpack_from("<HH", raw, summaries.offset + 26))
    start = summaries.offset + 30 + header_len + summaries.compressed_size // 2
    damaged = bytearray(raw)
    damaged[start : start + 16] = bytes(b ^ 0x5A for b in damaged[start : start + 16])
    (bad / "damaged-member.eval").write_bytes(bytes(damaged))
    (bad / "truncated.eval").write_bytes(raw[: len(raw) // 2])
    members = members_of(GOOD_EVAL)
    write_eval(
        bad / "version-3.eval", edited(members, "header.json", lambda h: {**h, "version": 3})
    )
    text = GOOD_JSON.read_text(encoding="utf-8")
    (bad / "version-3.json").write_text(text.replace('"version": 2', '"version": 3', 1))
    first = json.loads(members["summaries.json"])[0]
    dropped = edited(members, "summaries.json", lambda rows: rows[1:])
    write_eval(bad / "summaries-disagree.eval", dropped)
    (bad / "empty.eval").write_bytes(b"")
    (bad / "text.eval").write_text("just some notes")

    document = load(root)
    problems = {p["file"]: p for p in document["problems"]}
    reasons = {name: problems[f"bad/{name}"]["reason"] for name in [p.name for p in bad.iterdir()]}
    assert len(document["problems"]) == len(reasons), document["problems"]
    assert all(problems[f"bad/{name}"]["scope"] == "file" for name in reasons)
    expected = {
        "not-inspect.eval": "is a zip archive but not an Inspect log: it has neither header.json",
        "damaged-member.eval": "its member summaries.json fails to decompress",
        "truncated.eval": "is not a complete zip archive",
        "version-3.eval": "is an Inspect log of schema version 3, which relidash does not know",
        "version-3.json": "is an Inspect log of schema version 3, which relidash does not know",
        "summaries-disagree.eval": "summaries.json disagrees with its sample files: 1 sample "
        f"file has no summary (sample {first['id']} epoch {first['epoch']})",
        "empty.eval": "is empty (0 bytes)",
        "text.eval": "is not an Inspect .eval log: a .eval log is a zip archive",
    }
    for name, want in expected.items():
        assert want in reasons[name], (name, reasons[name])
        assert "\n" not in reasons[name] and str(tmp_path) not in reasons[name]
        assert not re.match(r"\w+(Error|Exception)\b", reasons[name])
    loaded = {r["file"] for r in document["reports"]}
    assert loaded == {f"good/{p.name}" for p in FIXTURES.iterdir()}


def test_an_edited_stored_reduction_is_a_warning_and_the_log_loads(tmp_path: Path) -> None:
    members = members_of(REDUCERS_EVAL)

    def change(reductions: list[dict[str, Any]]) -> None:
        (target,) = [
            r for r in reductions if r["reducer"] == "pass_at_2" and r["scorer"] == "resolution"
        ]
        sample = next(s for s in target["samples"] if not math.isnan(s["value"]))
        sample["value"] = 1.0 - sample["value"] if sample["value"] != 0.5 else 0.9

    root = tmp_path / "reports"
    root.mkdir()
    write_eval(root / "edited.eval", edited(members, "reductions.json", change))
    write_eval(root / "same.eval", members)
    document = load(root)
    assert {r["file"] for r in document["reports"]} == {"edited.eval", "same.eval"}
    (problem,) = document["problems"]
    assert (problem["file"], problem["scope"]) == ("edited.eval", "report")
    assert problem["reason"].startswith("its stored pass_at_2 reduction of 'resolution' disagrees")
    same = next(r for r in document["reports"] if r["file"] == "same.eval")
    changed = next(r for r in document["reports"] if r["file"] == "edited.eval")
    assert same["pass_at_k"] == changed["pass_at_k"]  # shown: the value its epochs give


def test_a_journal_only_log_reads_its_summaries(tmp_path: Path) -> None:
    """An interrupted log has no header.json or summaries.json; a rebuilt copy of a finished
    one without them loads from its journal with the numbers of the original."""
    members = members_of(GOOD_EVAL)
    journal = {
        k: v
        for k, v in members.items()
        if k not in ("header.json", "summaries.json", "reductions.json")
    }
    assert "_journal/start.json" in journal and any(
        k.startswith("_journal/summaries/") for k in journal
    )
    root = tmp_path / "reports"
    root.mkdir()
    write_eval(root / "journal.eval", journal)
    shutil.copyfile(GOOD_EVAL, root / "finished.eval")
    document = load(root)
    assert document["problems"] == []
    by_file = {r["file"]: r for r in document["reports"]}
    assert by_file["journal.eval"]["log_status"] == "started"
    assert by_file["journal.eval"]["complete"] is False
    assert by_file["journal.eval"]["pass_at_k"] == by_file["finished.eval"]["pass_at_k"]


def test_a_json_log_with_nan_and_a_bom_loads(tmp_path: Path) -> None:
    data = json.loads(GOOD_JSON.read_text(encoding="utf-8"))
    data["results"]["scores"][0]["metrics"]["accuracy"]["value"] = float("nan")
    text = json.dumps(data)  # Python writes bare NaN, as Inspect does
    assert "NaN" in text
    root = tmp_path / "reports"
    root.mkdir()
    (root / "nan.json").write_text(text, encoding="utf-8")
    (root / "bom.json").write_bytes(b"\xef\xbb\xbf" + GOOD_JSON.read_bytes())
    document = load(root)
    assert document["problems"] == []
    by_file = {r["file"]: r for r in document["reports"]}
    assert by_file["nan.json"]["pass_at_k"] == by_file["bom.json"]["pass_at_k"]


def test_a_mixed_directory_loads_both_harnesses(tmp_path: Path) -> None:
    root = tmp_path / "reports"
    shutil.copytree(FIXTURES, root / "inspect")
    multivon = sorted((REPO / "tests" / "fixtures").glob("mv-0.16*.json"))
    for path in multivon:
        shutil.copyfile(path, root / path.name)
    document = load(root)
    assert document["problems"] == []
    harnesses = {r["file"]: r["harness"] for r in document["reports"]}
    assert {f for f, h in harnesses.items() if h == "multivon-eval"} == {p.name for p in multivon}
    assert len([h for h in harnesses.values() if h == "inspect-ai"]) == len(
        list(FIXTURES.iterdir())
    )


@pytest.mark.parametrize(
    "change",
    [
        {"eval": {"task": "x", "dataset": 5, "scorers": "abc", "packages": [], "config": 1}},
        {"eval": {"task": "x"}, "samples": [{"id": 1, "epoch": "one", "scores": []}]},
        {"eval": {"task": "x"}, "samples": [{"id": {"a": 1}, "epoch": 1, "scores": {"s": 5}}]},
        {"eval": {"task": 5}},
        {"eval": {"task": "x"}, "samples": "none"},
        {"eval": {"task": "x"}, "samples": [{"epoch": 1}]},
        {"eval": {"task": "x", "scorers": [{"name": "s"}]}, "samples": [
            {"id": 1, "epoch": 1, "scores": {"s": {"value": "C"}}, "input": 5, "metadata": []}
        ]},
    ],
)  # fmt: skip
def test_odd_shapes_are_a_problem_or_load_never_a_crash(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    root = tmp_path / "reports"
    root.mkdir()
    (root / "odd.json").write_text(json.dumps({"version": 2, "status": "success", **change}))
    document = load(root)
    loaded = [r["file"] for r in document["reports"]]
    problems = [p for p in document["problems"] if p["file"] == "odd.json"]
    assert (loaded == ["odd.json"]) != bool(problems), (loaded, problems)
    for problem in problems:
        assert problem["scope"] == "file" and problem["reason"].startswith("is ")


def test_read_directory_refuses_garbage() -> None:
    from dashboard.data.formats.inspect.zip_members import ArchiveError

    with pytest.raises(ArchiveError, match="no end-of-central-directory"):
        read_directory(io.BytesIO(b"PK\x03\x04" + b"\0" * 100), 104)
