"""A running server's new sessions trust file-system events instead of walking an
unchanged directory (dashboard/data/sources/watch.py), and walk again whenever an event arrived,
the trust expired, or no watch could be set up."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from dashboard.analysis import loading
from dashboard.data.load import snapshot
from dashboard.data.load.snapshot import ServedCatalog
from dashboard.data.sources import walk, watch

FIXTURES = Path(__file__).parents[1] / "fixtures"
OLD_NS = 1_700_000_000_000_000_000


@pytest.fixture
def served(tmp_path: Path) -> ServedCatalog:
    catalog = served_catalog(tmp_path)
    yield catalog
    if catalog.watch:
        catalog.watch.close()


def served_catalog(tmp_path: Path) -> ServedCatalog:
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("mv-0.20.0_early-stop_runs8.json", "mv-0.15.2_early-stop_runs8.json"):
        shutil.copy(FIXTURES / name, reports / name)
        os.utime(reports / name, ns=(OLD_NS, OLD_NS))
    catalog = ServedCatalog(reports, str(tmp_path / "catalog.duckdb"))
    assert catalog.watch is not None, "no watch on a local directory"
    catalog.refresh(lambda con: loading.refresh_catalog(con, reports))
    return catalog


@pytest.fixture
def walks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The walks of this test's reports directory: 1 by a session (the main thread), 0 by
    the background renewal. Other tests' served catalogs may still renew theirs."""
    calls: list[int] = []
    real = snapshot.directory_changed
    mine = tmp_path / "reports"

    def counted(*args: Any) -> bool:
        if args[1].local_root is not None and args[1].local_root.resolve() == mine.resolve():
            calls.append(1 if threading.current_thread() is threading.main_thread() else 0)
        return real(*args)

    monkeypatch.setattr(snapshot, "directory_changed", counted)
    return calls


def test_a_quiet_directory_is_not_walked(served: ServedCatalog, walks: list[int]) -> None:
    for _ in range(3):
        assert not served.stale()
    assert walks == []


def test_a_change_is_seen_at_once(served: ServedCatalog, walks: list[int]) -> None:
    report = served.reports_dir / "mv-0.20.0_early-stop_runs8.json"
    os.utime(report, ns=(OLD_NS + 1, OLD_NS + 1))
    assert served.stale()
    assert walks == [1]
    served.refresh(lambda con: loading.refresh_catalog(con, served.reports_dir))
    assert not served.stale()
    assert walks == [1], "the load that followed the change did not settle the watch"
    (served.reports_dir / "sub").mkdir()
    (served.reports_dir / "sub" / "new.json").write_text("{}")
    assert served.stale()


def test_an_event_during_the_walk_keeps_the_next_session_walking(
    served: ServedCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = snapshot.directory_changed
    calls: list[int] = []

    mine = served.reports_dir.resolve()

    def changed_meanwhile(*args: Any) -> bool:
        verdict = real(*args)
        if args[1].local_root is None or args[1].local_root.resolve() != mine:
            # another test's served catalog, still renewing its own watch in the
            # background: in the full suite one could take the first call, and the late
            # file would be written after this test's second check had trusted the watch
            return verdict
        calls.append(1)
        if len(calls) == 1:  # a file arrives after its directory was listed
            assert served.watch is not None
            before = served.watch.token()
            (served.reports_dir / "late.json").write_text("{}")
            # its events all counted before the walk ends (the observer's threads deliver
            # them a little later): then only a check that settles on the token taken
            # before its walk passes, not one that takes the count after it
            counted, steady_since, deadline = before, time.monotonic(), time.monotonic() + 30
            while time.monotonic() < deadline:
                now_counted = served.watch.token()
                if now_counted != counted:
                    counted, steady_since = now_counted, time.monotonic()
                elif counted != before and time.monotonic() - steady_since > 0.3:
                    break
                time.sleep(0.01)
        return verdict

    monkeypatch.setattr(snapshot, "directory_changed", changed_meanwhile)
    monkeypatch.setattr(watch, "TRUST_SECONDS", 0.0)
    assert not served.stale()  # the walk (trust expired) saw no change yet
    monkeypatch.setattr(watch, "TRUST_SECONDS", 60.0)
    assert served.stale(), "an event that arrived during the walk was trusted away"
    assert len(calls) == 2


def test_trust_expires(
    served: ServedCatalog, walks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "TRUST_SECONDS", 0.0)
    assert not served.stale()
    assert not served.stale()
    assert walks == [1, 1]


def test_without_a_watch_every_session_walks(served: ServedCatalog, walks: list[int]) -> None:
    served.watch.close()
    served.watch = None
    assert not served.stale()
    assert walks == [1]
    assert watch.watch_directory(None) is None
    assert watch.watch_directory(served.reports_dir / "missing") is None


@pytest.fixture
def renewing(monkeypatch: pytest.MonkeyPatch) -> float:
    """Short trust and renewal times (before the served catalog starts its renewal).

    The trust leaves a renewal's walk nearly 4 s: a walk in a child process starts an
    interpreter, which on a loaded machine can take a few seconds, and a shorter trust
    would see the renewal's settle come too late."""
    monkeypatch.setattr(watch, "TRUST_SECONDS", 4.0)
    monkeypatch.setattr(watch, "RENEW_AFTER_SECONDS", 0.2)
    monkeypatch.setattr(watch, "RENEW_POLL_SECONDS", 0.05)
    return 5.0  # seconds to wait: past the trust


def renewed_past_the_trust(walks: list[int], renewing: float, times: int = 3) -> None:
    """Wait `renewing` seconds (past the trust), and on until the renewal has walked
    `times` times: with a third walk begun, the second renewal has settled, whatever a
    loaded machine does to how long each walk in a child takes (on a loaded machine one
    renewal alone can outlast `renewing`)."""
    deadline = time.monotonic() + 60 + renewing
    time.sleep(renewing)
    while len(walks) < times:
        assert time.monotonic() < deadline, f"the renewal walked {len(walks)} times in a minute"
        time.sleep(0.01)


def test_the_trust_is_renewed_in_the_background_while_quiet(
    tmp_path: Path, walks: list[int], renewing: float
) -> None:
    served = served_catalog(tmp_path)
    try:
        renewed_past_the_trust(walks, renewing)
        assert not served.stale()
        assert set(walks) == {0}, "a session walked the directory itself"
    finally:
        served.watch.close()


def test_the_renewal_walks_in_a_child_process(
    tmp_path: Path, walks: list[int], renewing: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not in the server's thread, where the walk would hold the interpreter from the
    pages drawn meanwhile: with the walk disabled in this process, the renewal still
    renews, and it still sees a change that sent no event (a network file system's)."""
    served = served_catalog(tmp_path)
    try:

        def no_walk_here(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("the renewal walked in the server's process")

        monkeypatch.setattr(walk, "scan_directory", no_walk_here)
        monkeypatch.setattr(walk, "_walk", no_walk_here)
        renewed_past_the_trust(walks, renewing)
        assert not served.stale()  # renewed: no session walked
        assert set(walks) == {0}
        # a change the watch never hears of: the next renewal's walk sees it
        assert served.watch is not None
        served.watch.close()
        report = served.reports_dir / "mv-0.20.0_early-stop_runs8.json"
        os.utime(report, ns=(OLD_NS + 1, OLD_NS + 1))
        assert not served._unchanged()
        os.utime(report, ns=(OLD_NS, OLD_NS))
        assert served._unchanged()
    finally:
        served.watch.close()


def test_an_event_stops_the_renewal_and_the_next_session_walks(
    tmp_path: Path, walks: list[int], renewing: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The renewal is held off until the event is counted: on a loaded machine the
    # observer's threads can deliver it later than the 0.2 s renewal time after the write,
    # and the renewal would then walk, rightly, before it knew.
    monkeypatch.setattr(watch, "RENEW_AFTER_SECONDS", 3600.0)
    served = served_catalog(tmp_path)
    try:
        before = served.watch.token()
        (served.reports_dir / "new.json").write_text("{}")
        deadline = time.monotonic() + 30
        while served.watch.token() == before:
            assert time.monotonic() < deadline, "the write was never counted"
            time.sleep(0.01)
        monkeypatch.setattr(watch, "RENEW_AFTER_SECONDS", 0.2)
        time.sleep(renewing)
        assert walks == [], "the renewal walked a directory known to have changed"
        assert served.stale()
        assert walks == [1]
    finally:
        served.watch.close()


def test_an_idle_server_does_not_renew(
    tmp_path: Path, walks: list[int], renewing: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watch, "IDLE_SECONDS", 0.0)
    served = served_catalog(tmp_path)
    try:
        time.sleep(renewing)
        assert walks == []
        assert not served.stale()  # the trust ran out: this session walks
        assert walks == [1]
    finally:
        served.watch.close()
