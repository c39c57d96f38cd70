"""Pages of a long history in Chromium (issue 14): seconds from navigation to a settled page.

Starts `relidash serve DIR --catalog PATH` on 127.0.0.1, then in Debian's Chromium opens
each page for one suite, `--repeats` times as a new visitor (a fresh browser profile
each time: nothing cached) and as a returning one (one profile: the app's scripts come
from the browser's cache); the first visit of each kind is not counted (it warms the
server's caches and, for a returning visitor, the browser's), and waits as the browser
tests do: the app connected, a heading shown, no script running for QUIET seconds (that
quiet wait is subtracted). A blank page of the same app (the Reviews page with no
records) is timed beside them: the floor a page cannot go under on this machine.

Usage: python benchmarks/bench_pages.py DIR --catalog PATH --suite S [--repeats N]
Typically after bench_long.py, on its corpus and catalog. Figures are printed, not asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_load import fresh_bytecode  # noqa: E402
from servers import free_port, healthy, quiet_since, stop_group  # noqa: E402

QUIET = 0.5
VIEWPORT = {"width": 1400, "height": 1000}
TARGETS = {"releases": 1.5, "slices": 2.0}


def settled_seconds(page: object, url: str) -> float:
    """Seconds from navigation until the page is connected, headed and quiet."""
    started = time.monotonic()
    page.goto(url)  # type: ignore[attr-defined]
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]')  # type: ignore[attr-defined]
    page.locator("h1").first.wait_for()  # type: ignore[attr-defined]
    since = quiet_since(page, QUIET, timeout=120.0)
    if since is None:
        raise SystemExit(f"{url}: the script was still running after 120 s")
    return since - started


def visit_times(browser: object, url: str, visits: int, *, returning: bool) -> list[float]:
    """Settled seconds of `visits` visits to url: each in a new browser profile, or all
    in one (a returning visitor, whose browser has cached the app's scripts)."""
    new_context = browser.new_context  # type: ignore[attr-defined]
    shared = new_context(viewport=VIEWPORT) if returning else None
    times = []
    for _ in range(visits):
        context = shared or new_context(viewport=VIEWPORT)
        page = context.new_page()
        times.append(settled_seconds(page, url))
        page.close()
        if context is not shared:
            context.close()
    if shared is not None:
        shared.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", type=Path)
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--relidash", default=str(REPO / ".venv" / "bin" / "relidash"))
    args = parser.parse_args(argv)
    fresh_bytecode()

    from playwright.sync_api import sync_playwright

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "XDG_DATA_HOME": tempfile.mkdtemp(prefix="relidash-bench-pages-")}
    log = tempfile.TemporaryFile()  # noqa: SIM115 (the server's log, read if it fails)
    proc = subprocess.Popen(
        [args.relidash, "serve", str(args.reports), "--catalog", str(args.catalog),
         "--port", str(port), "--host", "127.0.0.1"],
        stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
        start_new_session=True,
    )  # fmt: skip
    rows = []
    try:
        deadline = time.monotonic() + 600
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise SystemExit(f"relidash serve did not start:\n{log.read().decode()}")
            time.sleep(0.5)
        pages = {
            "reviews (blank floor)": f"{url}/reviews",
            "releases": f"{url}/releases?suite={args.suite}",
            "slices": f"{url}/slices?suite={args.suite}",
        }
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            for name, page_url in pages.items():
                for visitor in ("new", "returning"):
                    first, *later = visit_times(
                        browser, page_url, args.repeats + 1, returning=visitor == "returning"
                    )
                    median = statistics.median(later)
                    rows.append((f"{name}, {visitor}", first, median, min(later), max(later)))
            browser.close()
    finally:
        stop_group(proc)
    print(f"\npages of suite {args.suite} in Chromium, {os.cpu_count()} cores "
          f"(settled: connected, headed, {QUIET} s without a running script)")  # fmt: skip
    print(f"{'page':<34}{'first visit':>12}{'median later':>14}{'range':>16}  target")
    for name, first, median, low, high in rows:
        target = next((t for key, t in TARGETS.items() if name.startswith(key)), None)
        verdict = (
            "" if target is None else f"< {target} s  {'met' if median < target else 'MISSED'}"
        )
        print(
            f"{name:<34}{first:>11.2f}s{median:>13.2f}s{f'{low:.2f}-{high:.2f} s':>16}  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
