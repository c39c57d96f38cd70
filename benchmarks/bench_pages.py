"""Pages of a long history in Chromium (issue 14): seconds from navigation to a settled page.

Starts `relidash serve DIR --catalog PATH` on 127.0.0.1, then in Debian's Chromium opens
each page for one suite, `--repeats` times in fresh tabs (the first visit of each page
warms the server's caches; the figures are the later visits'), and waits as the browser
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

from servers import free_port, healthy, quiet_since, stop_group  # noqa: E402

QUIET = 0.5
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("reports", type=Path)
    parser.add_argument("--catalog", type=Path, required=True)
    parser.add_argument("--suite", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--relidash", default=str(REPO / ".venv" / "bin" / "relidash"))
    args = parser.parse_args(argv)

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
                times = []
                for _ in range(args.repeats + 1):
                    page = browser.new_page(viewport={"width": 1400, "height": 1000})
                    times.append(settled_seconds(page, page_url))
                    page.close()
                later = times[1:]
                rows.append((name, times[0], statistics.median(later), min(later), max(later)))
            browser.close()
    finally:
        stop_group(proc)
    print(f"\npages of suite {args.suite} in Chromium, {os.cpu_count()} cores "
          f"(settled: connected, headed, {QUIET} s without a running script)")  # fmt: skip
    print(f"{'page':<24}{'first visit':>12}{'median later':>14}{'range':>16}  target")
    for name, first, median, low, high in rows:
        target = next((t for key, t in TARGETS.items() if name.startswith(key)), None)
        verdict = (
            "" if target is None else f"< {target} s  {'met' if median < target else 'MISSED'}"
        )
        print(
            f"{name:<24}{first:>11.2f}s{median:>13.2f}s{f'{low:.2f}-{high:.2f} s':>16}  {verdict}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
