"""The app's served catalog lets its directory watch go when the cache lets the catalog go
(dashboard/app/state.py): a watch holds an inotify instance and threads, and a process
that kept every one it made would run out of the few the system allows a user."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from dashboard.analysis import opening
from dashboard.app import state


def inotify_instances() -> int:
    fds = Path("/proc/self/fd")
    count = 0
    for fd in os.listdir(fds):
        try:
            count += "inotify" in os.readlink(fds / fd)
        except OSError:
            continue  # closed while listed
    return count


def test_a_catalog_let_go_closes_its_watch(tmp_path: Path) -> None:
    st.cache_resource.clear()
    before = inotify_instances()
    served = []
    for name in ("a", "b", "c"):
        reports = tmp_path / name
        reports.mkdir()
        options = opening.LoadOptions(catalog=str(tmp_path / f"{name}.db"))
        served.append(state.served_catalog(str(reports), False, options))
    assert served[-1].watch is not None, "no watch on a local directory"
    # one source per server: a catalog for another is let go, with its watch
    assert [s.watch is None for s in served] == [True, True, False]
    assert inotify_instances() == before + 1
    st.cache_resource.clear()
    assert served[-1].watch is None
    assert inotify_instances() == before
