"""A full session against a read-only reports directory leaves every byte and mtime as it
was: load, every page and its widgets, a lottery diff (transcripts read back from the
file), downloads, a gate and a compare, with a catalog on disk elsewhere."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from page_tables import tables
from streamlit.testing.v1 import AppTest

from dashboard.cli import main as cli
from dashboard.render.export import csv_bytes

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["releases", "slices", "lottery", "gates", "calculator", "data"]


def snapshot(root: Path) -> dict[str, tuple[str, int, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        st_ = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
        out[str(path.relative_to(root))] = (digest, st_.st_mtime_ns, stat.S_IMODE(st_.st_mode))
    return out


@pytest.fixture
def readonly_reports(tmp_path: Path) -> Iterator[Path]:
    reports = tmp_path / "reports"
    shutil.copytree(ROOT / "sample_reports", reports)
    for path in [reports, *reports.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    yield reports
    for path in [reports, *reports.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_a_full_session_changes_nothing_in_the_reports_directory(
    readonly_reports: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    before = snapshot(readonly_reports)
    catalog = tmp_path / "cache" / "catalog.duckdb"
    monkeypatch.setenv("RELIDASH_REPORTS", str(readonly_reports))
    monkeypatch.setenv("RELIDASH_CATALOG", str(catalog))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    st.cache_data.clear()
    st.cache_resource.clear()

    at = AppTest.from_file(str(ROOT / "dashboard" / "app" / "main.py"), default_timeout=90)
    at.run()
    assert not at.exception
    for page in PAGES:
        at.switch_page(f"page_scripts/{page}.py").run()
        assert not at.exception, page
        for box in at.selectbox:
            if len(box.options) > 1 and box.key and box.key.endswith(("suite", "release", "k")):
                box.set_value(box.options[0]).run()
                assert not at.exception, (page, box.key)
        for frame in tables(at):
            assert csv_bytes(frame)  # what the download buttons serve
    at.switch_page("page_scripts/lottery.py")
    at.query_params.update({"suite": "support-agent", "release": "v1.11.0"})
    at.run()
    assert not at.exception
    assert at.html, "a lottery diff read from a 0.20 report file"
    at.sidebar.button[0].click().run()  # Reload reports
    assert not at.exception

    args = [str(readonly_reports), "--catalog", str(catalog)]
    assert cli.main(["summary", *args]) == 0
    assert cli.main(["summary", "--json", "--by", "release", *args]) == 0
    assert cli.main(
        [
            "gate",
            str(readonly_reports),
            "--suite",
            "support-agent",
            "--policy",
            str(ROOT / "examples" / "gate-policy.toml"),
            "--catalog",
            str(catalog),
            "--junit",
            str(tmp_path / "junit.xml"),
        ]
    ) in (0, 1)
    assert (
        cli.main(
            [
                "compare",
                str(readonly_reports),
                "--suite",
                "code-agent",
                "--base",
                "v1.9.0",
                "--head",
                "v1.11.0",
                "--json",
                "--catalog",
                str(catalog),
            ]
        )
        == 0
    )
    capsys.readouterr()

    assert snapshot(readonly_reports) == before
    assert catalog.exists() and not str(catalog).startswith(str(readonly_reports))
    assert not list((tmp_path / "xdg").glob("**/*.duckdb"))  # --catalog was honoured
    assert os.access(readonly_reports, os.R_OK)
