"""Small reports parsed together as one framed JSON array (dashboard/data/load/ingest.py _Frame)
give exactly the rows and verdicts that DuckDB's reader gives each file on its own.

Each test loads a directory twice, framed (the default) and with framing switched off
(FRAMED_BELOW = 0: every file read by `stage_reports`), and compares every catalog table.
The hostile files are written to break the frame: several values in one file, a file that
leaves an array open so that its neighbours become part of it, one that closes it early,
one that guesses the tag. None of them may change another file's numbers.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import summaries
from report_files import is_report

from dashboard.analysis import loading
from dashboard.data.catalog import MEMORY, open_catalog
from dashboard.data.catalog.schema import REPORT_TABLES
from dashboard.data.formats.multivon import checks, stager, staging
from dashboard.data.load import batches

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
OLD_NS = 1_600_000_000 * 10**9


def catalog_tables(
    root: Path,
    *,
    framed: bool,
    monkeypatch: pytest.MonkeyPatch,
    strict_small: bool = False,
    batch_files: int | None = None,
) -> dict[str, Any]:
    """Every table a load fills, sorted, and the summary document.

    `strict_small`: the 0.19+ reports take the strict parse whatever their size, as large
    ones do, so that a batch mixes them with framed small files (parse_strict_and_framed).
    `batch_files`: at most this many files a batch, so that many batches' strict parses
    are begun while the batch before is stored (BatchStager).
    """
    with monkeypatch.context() as patch:
        if batch_files:
            patch.setattr(batches, "BATCH_FILES", batch_files)
        if not framed:
            patch.setattr(batches, "FRAMED_BELOW", 0)
        if strict_small:
            patch.setattr(batches, "STRICT_MIN_BYTES", 0)
        con = open_catalog(MEMORY)
        try:
            loading.refresh_catalog(con, root)
            tables = {
                table: con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
                for table in (*REPORT_TABLES, "problems")
                if table != "report_records"
            }
            tables["files"] = con.execute(
                "SELECT path, size, digest, report_id FROM files ORDER BY ALL"
            ).fetchall()
            tables["summary"] = summaries.summary_json(con)
            return tables
        finally:
            con.close()


def populate(root: Path, sources: list[Path]) -> Path:
    root.mkdir(parents=True)
    for source in sources:
        shutil.copyfile(source, root / source.name)
    return root


def old_mtimes(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(OLD_NS, OLD_NS))


def fixture_reports() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*.json") if is_report(p))


def test_every_fixture_loads_the_same_framed_as_file_by_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = populate(tmp_path / "reports", fixture_reports())
    old_mtimes(root)
    framed = catalog_tables(root, framed=True, monkeypatch=monkeypatch)
    alone = catalog_tables(root, framed=False, monkeypatch=monkeypatch)
    assert len(framed["reports"]) >= 10
    assert framed == alone


def test_the_frame_is_used_for_small_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The framed statement runs (and succeeds) for a directory of good small files, ahead
    of the store (by the stager, on a cursor of its own): a fallback that always fired
    would pass the equality tests and gain nothing."""
    root = populate(
        tmp_path / "reports", [p for p in fixture_reports() if p.stat().st_size < 100_000]
    )
    old_mtimes(root)
    seen: list[str] = []
    real = staging.execute

    def spy(con: Any, name: str, **params: Any) -> None:
        seen.append(name)
        real(con, name, **params)

    framed: list[tuple[int, bool]] = []  # (files, ahead) of each framed read
    real_framed = staging.stage_framed

    def spy_framed(con: Any, frame: Any, small: list[Any], *args: Any) -> str:
        table = real_framed(con, frame, small, *args)
        framed.append((len(small), len(args) == 3))  # a stager passes its table and cursor
        return table

    monkeypatch.setattr(staging, "execute", spy)
    monkeypatch.setattr(staging, "stage_framed", spy_framed)
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    con.close()
    assert framed and all(ahead for _, ahead in framed), framed
    assert sum(files for files, _ in framed) == len(list(root.rglob("*.json")))
    assert "formats/multivon/stage_reports" not in seen, (
        "a good batch fell back to the file-by-file reader"
    )


def _report(base: dict[str, Any], suite: str) -> bytes:
    return json.dumps({**base, "suite": suite}, indent=2).encode()


HOSTILE = {
    # two values: alone, the reader says it holds 2 JSON values
    "two-values.json": lambda good: good + b"\n" + good,
    # two values joined by a comma: inside the frame that is two array elements
    "comma-values.json": lambda good: good + b",\n" + good,
    # guesses the tag's key with a value that is not this load's secret
    "guessed-tag.json": lambda good: good.rstrip()[:-1] + b', "relidash:report": "00:1"}',
    # leaves an array open, so that the next files would become its elements
    "opens-array.json": lambda good: good.rstrip()[:-1] + b', "spill": [1',
    # a good report between the two
    "p-good.json": lambda good: good,
    # closes that array and the object: alone it is malformed
    "zz-closes.json": lambda good: b"{}]}",
    # starts with a byte-order mark (the reader accepts it)
    "with-bom.json": lambda good: b"\xef\xbb\xbf" + good,
    # empty object: alone, JSON without a cases list
    "empty-object.json": lambda good: b"{ }",
}


@pytest.mark.parametrize(
    "kinds",
    [
        sorted(HOSTILE),
        ["opens-array.json", "p-good.json", "zz-closes.json"],
        ["comma-values.json"],
        ["guessed-tag.json"],
    ],
)
def test_hostile_files_get_their_own_verdicts_and_spare_their_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kinds: list[str]
) -> None:
    small = [p for p in fixture_reports() if p.stat().st_size < 100_000]
    root = populate(tmp_path / "reports", small)
    good = small[0].read_bytes()
    for name in kinds:
        (root / name).write_bytes(HOSTILE[name](good))
    old_mtimes(root)
    framed = catalog_tables(root, framed=True, monkeypatch=monkeypatch)
    alone = catalog_tables(root, framed=False, monkeypatch=monkeypatch)
    assert framed == alone
    clean_root = populate(tmp_path / "clean", small)
    old_mtimes(clean_root)
    clean = catalog_tables(clean_root, framed=True, monkeypatch=monkeypatch)
    by_file = {r["file"]: r for r in framed["summary"]["reports"]}
    for record in clean["summary"]["reports"]:
        assert by_file[record["file"]]["pass_hat_k"] == record["pass_hat_k"], record["file"]
    refused = {p["file"] for p in framed["summary"]["problems"] if p["scope"] == "file"}
    assert {"opens-array.json", "zz-closes.json"} & set(kinds) <= refused


def test_a_report_holding_the_tag_key_loads_as_it_does_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key named like the frame's tag is a duplicate inside the frame; the batch is read
    again file by file, where the key is one more field nobody reads."""
    small = [p for p in fixture_reports() if p.stat().st_size < 100_000]
    root = populate(tmp_path / "reports", small[:3])
    data = json.loads(small[0].read_text())
    data["relidash:report"] = "anything"
    (root / "tagged.json").write_text(json.dumps(data))
    old_mtimes(root)
    framed = catalog_tables(root, framed=True, monkeypatch=monkeypatch)
    assert framed == catalog_tables(root, framed=False, monkeypatch=monkeypatch)
    assert "tagged.json" in {r["file"] for r in framed["summary"]["reports"]}


def test_the_scratch_frame_is_gone_after_the_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(batches, "_memory_backed_tmp", lambda: str(scratch))
    root = populate(tmp_path / "reports", fixture_reports()[:4])
    con = open_catalog(MEMORY)
    loading.refresh_catalog(con, root)
    con.close()
    assert list(scratch.iterdir()) == []
    assert sorted(p.name for p in root.iterdir()) == sorted(p.name for p in fixture_reports()[:4])


def _spy_on_parse_batch(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The readers parse_strict_and_framed falls back to, one entry per call."""
    calls: list[str] = []
    real = staging.parse_batch

    def spy(con: Any, batch: Any, max_bytes: int, **kwargs: Any) -> None:
        calls.append(kwargs.get("reader", "json"))
        real(con, batch, max_bytes, **kwargs)

    monkeypatch.setattr(staging, "parse_batch", spy)
    return calls


@pytest.mark.parametrize("batch_files", [None, 3])
def test_large_and_small_files_of_a_batch_load_together_as_each_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_files: int | None
) -> None:
    """A batch holding strict-parsed and framed files stores both in one transaction,
    with the rows DuckDB's reader gives each file on its own; nothing falls back. In
    batches of 3, each batch's strict parse and framed read, and the flattening of its
    cases, are begun ahead and none is run again."""
    root = tmp_path / "reports"
    root.mkdir()
    for copy in range(3):  # large and small files in turn, through many batches
        for source in fixture_reports():
            shutil.copyfile(source, root / f"{copy}-{source.name}")
    old_mtimes(root)
    strict = [p.name for p in root.iterdir() if checks.head_has_every_field(str(p))]
    assert len(strict) >= 6 and len(strict) < len(list(root.iterdir()))
    fallbacks = _spy_on_parse_batch(monkeypatch)
    begun: list[list[str]] = []
    real_start = stager.BatchStager.start

    def start(self: stager.BatchStager, large: list[Any], *args: Any) -> Any:
        begun.append([entry.abspath for entry, _, _ in large])
        return real_start(self, large, *args)

    monkeypatch.setattr(stager.BatchStager, "start", start)
    monkeypatch.setattr(staging, "stage_strict_parts", _refuse_to_parse_now(monkeypatch))
    real_framed = staging.stage_framed

    def framed_ahead_only(con: Any, frame: Any, small: list[Any], *args: Any) -> str:
        assert len(args) == 3, "a framed read ran in the store instead of ahead"
        return real_framed(con, frame, small, *args)

    monkeypatch.setattr(staging, "stage_framed", framed_ahead_only)
    real_flatten = staging.flatten_cases
    flattened_in_store: list[str] = []

    def flatten(con: Any, table: str, *, temp: bool = False) -> None:
        if temp:  # the store's own flattening, into a temp table
            flattened_in_store.append(table)
        real_flatten(con, table, temp=temp)

    monkeypatch.setattr(staging, "flatten_cases", flatten)
    mixed = catalog_tables(
        root, framed=True, monkeypatch=monkeypatch, strict_small=True, batch_files=batch_files
    )
    assert fallbacks == [], "a good mixed batch fell back to parsing its parts apart"
    assert flattened_in_store == [], "a batch's cases were flattened in the store, not ahead"
    assert sorted(Path(a).name for files in begun for a in files) == sorted(strict)
    alone = catalog_tables(root, framed=False, monkeypatch=monkeypatch)
    assert len(mixed["reports"]) == 3 * len(fixture_reports())
    assert mixed == alone


def _refuse_to_parse_now(monkeypatch: pytest.MonkeyPatch) -> Any:
    """stage_strict_parts that fails when called without the stager's cursors: a batch
    whose strict parse was begun ahead must not be parsed again in the store."""
    real = staging.stage_strict_parts

    def parts(con: Any, abspaths: list[str], *args: Any) -> list[str]:
        assert len(args) == 2, "a strict parse ran in the store instead of ahead"
        return real(con, abspaths, *args)

    return parts


def _wrong_type(good: bytes) -> bytes:
    """A 0.20 report whose first case's runs is text: the strict parse refuses it."""
    data = json.loads(good)
    data["cases"][0]["runs"] = "three"
    return json.dumps(data).encode()


def _nan_score(good: bytes) -> bytes:
    """A 0.20 report with a NaN score: the strict parse flags it, multivon-eval refuses it."""
    data = json.loads(good)
    data["cases"][0]["score"] = float("nan")
    return json.dumps(data).encode()  # json.dumps writes NaN


@pytest.mark.parametrize("batch_files", [None, 3])
@pytest.mark.parametrize("bad", ["wrong-type", "nan", "framed-hostile"])
def test_a_bad_file_in_a_mixed_batch_spares_both_readers_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str, batch_files: int | None
) -> None:
    """A file either reader refuses (or flags) gets the verdict it gets alone, and every
    other file of the batch, large or small, loads as it does alone."""
    root = populate(tmp_path / "reports", fixture_reports())
    large = next(p for p in fixture_reports() if checks.head_has_every_field(str(p)))
    small = next(p for p in fixture_reports() if not checks.head_has_every_field(str(p)))
    if bad == "wrong-type":
        (root / "bad-large.json").write_bytes(_wrong_type(large.read_bytes()))
    elif bad == "nan":
        (root / "bad-large.json").write_bytes(_nan_score(large.read_bytes()))
    else:
        for name in ("opens-array.json", "zz-closes.json", "guessed-tag.json"):
            (root / name).write_bytes(HOSTILE[name](small.read_bytes()))
    old_mtimes(root)
    fallbacks = _spy_on_parse_batch(monkeypatch)
    parsed_now: list[int] = []  # files of each strict parse run in the store, not ahead
    real_parts = staging.stage_strict_parts

    def parts(con: Any, abspaths: list[str], *args: Any) -> list[str]:
        if not args:
            parsed_now.append(len(abspaths))
        return real_parts(con, abspaths, *args)

    monkeypatch.setattr(staging, "stage_strict_parts", parts)
    mixed = catalog_tables(
        root, framed=True, monkeypatch=monkeypatch, strict_small=True, batch_files=batch_files
    )
    monkeypatch.setattr(staging, "stage_strict_parts", real_parts)
    if bad == "wrong-type":  # the refused batch goes file by file, not parsed whole again
        assert set(parsed_now) <= {1}, parsed_now
        assert parsed_now or batch_files, "one batch of several large files: each alone"
    if bad == "nan":  # flagged inside the batch's transaction, not refused by a reader
        assert fallbacks == []
    elif batch_files:  # the refused part's batch falls back; which readers it holds varies
        assert fallbacks
    else:
        # each part on its own, strict first (each call's own fallbacks come after it)
        assert fallbacks[0] == "strict" and "framed" in fallbacks, fallbacks
    # apart: the same files strict, the others read by the JSON reader, in one batch (a
    # strict-first file refused before parsing still has its report id: the ids agree)
    apart = catalog_tables(root, framed=False, monkeypatch=monkeypatch, strict_small=True)
    assert mixed == apart
    refused = {p["file"] for p in mixed["summary"]["problems"] if p["scope"] == "file"}
    if bad == "framed-hostile":
        assert {"opens-array.json", "zz-closes.json"} <= refused
    elif bad == "nan":
        assert "bad-large.json" in refused
    loaded = {r["file"] for r in mixed["summary"]["reports"]}
    assert {p.name for p in fixture_reports()} <= loaded


@pytest.mark.parametrize("strict_small", [False, True])
def test_a_frame_that_cannot_be_written_sends_its_files_to_the_json_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, strict_small: bool
) -> None:
    """The stager writes each batch's frame; where it cannot (a full scratch disk), the
    batch's small files are read by the JSON reader, and its large ones still strictly:
    the catalog is the one file-by-file reading gives."""
    root = populate(tmp_path / "reports", fixture_reports())
    old_mtimes(root)
    fallbacks = _spy_on_parse_batch(monkeypatch)
    monkeypatch.setattr(staging.Frame, "write", lambda self, items: False)
    unwritten = catalog_tables(
        root, framed=True, monkeypatch=monkeypatch, strict_small=strict_small, batch_files=4
    )
    assert "json" in fallbacks, fallbacks  # the small files went file by file
    monkeypatch.undo()
    alone = catalog_tables(root, framed=False, monkeypatch=monkeypatch, strict_small=strict_small)
    assert unwritten == alone
