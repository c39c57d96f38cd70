"""Know that a local reports directory has not changed, without walking it: file-system
events (inotify on Linux, through watchdog) count every change under it.

A running server checks its directory at every new session; in a large directory that
walk is a noticeable part of every first page. With a watch, a check that found the
directory unchanged stays good while no event has arrived since it began, for at most
TRUST_SECONDS: events made on another host of a network file system never arrive, and
the walk then decides again. While the server is in use, that walk happens in the
background before the trust runs out (`renew_in_background`), so no visitor's page waits
for it. Must not: write anything, or decide for a bucket (object storage has no events
here; its listing decides).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# How long a clean check is trusted while no event arrives.
TRUST_SECONDS = 60.0
# An event reaches the count within milliseconds of the change (inotify through
# watchdog); quiet() waits this long first, so a change just made is counted.
EVENT_LATENCY_SECONDS = 0.02
# A clean check this old is made again in the background, before TRUST_SECONDS runs out:
# the walk of a large directory is slow enough to keep off any page.
RENEW_AFTER_SECONDS = 40.0
# How often the background renewal looks; it stops renewing after this long without a
# new session (an idle server does not walk the directory twice a minute all night).
RENEW_POLL_SECONDS = 5.0
IDLE_SECONDS = 600.0


class DirectoryWatch:
    """Counts file-system events under `root`; `settle(token)` records a check that began
    at `token` (the count then) and found the directory unchanged; `quiet()` says whether
    that still holds."""

    def __init__(self, root: Path) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        self._lock = threading.Lock()
        self._events = 0
        self._clean: tuple[int, float] | None = None  # (token, when)
        self._asked = time.monotonic()  # the last quiet() call: a session's check
        self._closed = threading.Event()
        self._renewer: threading.Thread | None = None
        watch = self

        class Counter(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                if event.event_type not in ("opened", "closed_no_write"):  # reads change nothing
                    watch._count()

        self._observer = Observer()
        self._observer.daemon = True
        self._observer.schedule(Counter(), str(root), recursive=True)
        self._observer.start()

    def _count(self) -> None:
        with self._lock:
            self._events += 1

    def token(self) -> int:
        """The event count now: take it before a check or a load's listing."""
        with self._lock:
            return self._events

    def settle(self, token: int) -> None:
        """A check or load that began at `token` found (or left) the catalog current."""
        with self._lock:
            self._clean = (token, time.monotonic())

    def quiet(self) -> bool:
        """Whether no event arrived since the last settled check, made within TRUST_SECONDS."""
        time.sleep(EVENT_LATENCY_SECONDS)  # outside the lock: the observer counts meanwhile
        with self._lock:
            self._asked = time.monotonic()
            if self._clean is None:
                return False
            token, when = self._clean
            return token == self._events and time.monotonic() - when < TRUST_SECONDS

    def renew_in_background(self, unchanged: Callable[[], bool]) -> None:
        """Start (once) a thread that renews a clean check before its trust runs out.

        `unchanged` walks the directory and says whether it still matches the catalog
        (False also when it cannot tell). A check is renewed only while no event arrived
        since it and a session asked within IDLE_SECONDS; the token is taken before the
        walk, so an event during it still makes the next session walk.
        """
        with self._lock:
            if self._renewer is not None or self._closed.is_set():
                return
            self._renewer = threading.Thread(
                target=self._renew, args=(unchanged,), name="relidash-watch-renew", daemon=True
            )
        self._renewer.start()

    def _renew(self, unchanged: Callable[[], bool]) -> None:
        while not self._closed.wait(RENEW_POLL_SECONDS):
            now = time.monotonic()
            with self._lock:
                token = self._events
                due = (
                    self._clean is not None
                    and self._clean[0] == token
                    and now - self._clean[1] >= RENEW_AFTER_SECONDS
                    and now - self._asked < IDLE_SECONDS
                )
            if due and unchanged():
                self.settle(token)

    def close(self) -> None:
        self._closed.set()
        self._observer.stop()


def watch_directory(root: Path | None) -> DirectoryWatch | None:
    """A watch of `root`, or None where none can be set up (no directory, no watchdog,
    the system's limit on watches reached): the walk then decides every time."""
    if root is None or not root.is_dir():
        return None
    try:
        return DirectoryWatch(root)
    except (ImportError, OSError, RuntimeError):
        return None
