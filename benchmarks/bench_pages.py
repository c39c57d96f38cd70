"""Pages of a long history in Chromium: seconds from navigation to a ready page.

Starts `relidash serve DIR --catalog PATH` on 127.0.0.1, then in Debian's Chromium opens
each page for one suite, `--repeats` times as a new visitor (a fresh browser profile
each time: nothing cached) and as a returning one (one profile: the app's scripts come
from the browser's cache); the first visit of each kind is not counted (it warms the
server's caches and, for a returning visitor, the browser's).

The page times itself (READY_SCRIPT, installed before the app's own scripts): from the
navigation's start to the last change of the page's DOM that is followed by QUIET seconds
without one, once the app is connected, shows a heading, runs no script and shows no
skeleton of an element still loading. That is when the last table cell or chart mark was
drawn. The harness waits for it in one call and does not poll the page while it loads.
Beside it the page records when the script finished (the app's script state turned
"notRunning"): Streamlit draws the elements after that, often well after, so the
script's end alone under-states the wait.

A blank page of the same app (the Reviews page with no records) is timed beside them:
the floor a page cannot go under on the machine it runs on. Beside each time, the CPU
the server's process and Chromium's processes used during the visit (Linux /proc): where
the browser and the server share a few cores, a new visitor's Chromium takes many times
the server's CPU, so a page can wait on the browser even where the server's work is done.

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
sys.path.insert(0, str(REPO / "tests" / "support"))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_load import fresh_bytecode  # noqa: E402
from figures import keep  # noqa: E402
from servers import free_port, healthy, proc_stat, stop_group  # noqa: E402

QUIET = 0.5
VIEWPORT = {"width": 1400, "height": 1000}
TARGETS = {"releases": 1.5, "slices": 2.0}


# Installed in every page before the app's scripts: window.__relidashReady resolves to
# {ready, script} (milliseconds since navigation start), or {timeout} after two minutes.
READY_SCRIPT = """
(() => {
  let last = 0, script = null;
  new MutationObserver((records) => {
    last = performance.now();
    for (const r of records)
      if (r.attributeName === 'data-test-script-state'
          && r.target.getAttribute('data-test-script-state') === 'notRunning') script = last;
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  window.__relidashReady = new Promise((resolve) => {
    const check = () => {
      const now = performance.now();
      const app = document.querySelector('[data-testid="stApp"]');
      const drawn = app
        && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('h1')
        && !document.querySelector('[data-testid="stStatusWidget"], [data-testid="stSkeleton"]');
      if (drawn && now - last >= QUIET_MS) resolve({ready: last, script: script});
      else if (now > 120000) resolve({timeout: true});
      else setTimeout(check, 50);
    };
    setTimeout(check, 50);
  });
})();
""".replace("QUIET_MS", str(int(QUIET * 1000)))


def ready_seconds(page: object, url: str) -> tuple[float, float]:
    """(ready, script finished): seconds from navigation start, as the page timed them."""
    page.goto(url, wait_until="commit")  # type: ignore[attr-defined]
    timing = page.evaluate("window.__relidashReady")  # type: ignore[attr-defined]
    if timing.get("timeout"):
        raise SystemExit(f"{url}: the page was not ready after 120 s")
    return timing["ready"] / 1000, (timing["script"] or timing["ready"]) / 1000


def cpu_seconds(pids: set[int]) -> float:
    """User and system CPU seconds the processes have used so far (Linux /proc; 0 for one
    that is gone)."""
    total = 0
    for pid in pids:
        fields = proc_stat(pid)
        if fields is not None:
            total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def chromium_processes() -> set[int]:
    """This benchmark's Chromium processes: below this one (through Playwright's driver,
    whose own CPU is the harness's, not the browser's), named chromium or chrome."""
    found = set()
    for pid in descendants(os.getpid()):
        try:
            name = Path(f"/proc/{pid}/comm").read_text()
        except OSError:
            continue
        if name.startswith("chrom"):
            found.add(pid)
    return found


def descendants(root: int) -> set[int]:
    """The processes below `root` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*"):
        fields = proc_stat(entry.name)
        if fields is not None:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def visit_times(
    browser: object, url: str, visits: int, *, returning: bool, server: int
) -> list[tuple[float, float, float, float]]:
    """(ready, script finished, server CPU, browser CPU) seconds of `visits` visits to url:
    each in a new browser profile, or all in one (a returning visitor, whose browser has
    cached the app's scripts). The CPU is what the server's process and Chromium's used
    from the page's opening to its being ready: on a machine of few cores the two share
    them, and a page waits on the browser's work as much as on the server's."""

    def new_context() -> object:
        context = browser.new_context(viewport=VIEWPORT)  # type: ignore[attr-defined]
        context.add_init_script(READY_SCRIPT)
        return context

    shared = new_context() if returning else None
    times = []
    for _ in range(visits):
        context = shared or new_context()
        page = context.new_page()  # type: ignore[attr-defined]
        chromium = chromium_processes()
        before = cpu_seconds({server}), cpu_seconds(chromium)
        ready, script = ready_seconds(page, url)
        chromium |= chromium_processes()  # a renderer started for the page
        times.append(
            (ready, script, cpu_seconds({server}) - before[0], cpu_seconds(chromium) - before[1])
        )
        page.close()
        if context is not shared:
            context.close()  # type: ignore[attr-defined]
    if shared is not None:
        shared.close()  # type: ignore[attr-defined]
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
                    (first, *_), *later = visit_times(
                        browser, page_url, args.repeats + 1,
                        returning=visitor == "returning", server=proc.pid,
                    )  # fmt: skip
                    ready = [r for r, *_ in later]
                    script, server_cpu, browser_cpu = (
                        statistics.median(v[i] for v in later) for i in (1, 2, 3)
                    )
                    rows.append((f"{name}, {visitor}", first, statistics.median(ready),
                                 min(ready), max(ready), script, server_cpu, browser_cpu))  # fmt: skip
            browser.close()
    finally:
        stop_group(proc)
    print(f"\npages of suite {args.suite} in Chromium, {os.cpu_count()} cores (ready: the last "
          f"element drawn, {QUIET} s before the page went quiet; script: when the script "
          "finished, before Streamlit drew its elements; cpu: seconds the server's process "
          "and Chromium's used during a visit, medians)")  # fmt: skip
    print(f"{'page':<34}{'first visit':>12}{'median later':>14}{'range':>16}"
          f"{'script':>9}{'cpu server':>12}{'cpu browser':>13}  target")  # fmt: skip
    kept = []
    for name, first, median, low, high, script, server_cpu, browser_cpu in rows:
        target = next((t for key, t in TARGETS.items() if name.startswith(key)), None)
        verdict = (
            "" if target is None else f"< {target} s  {'met' if median < target else 'MISSED'}"
        )
        print(
            f"{name:<34}{first:>11.2f}s{median:>13.2f}s{f'{low:.2f}-{high:.2f} s':>16}"
            f"{script:>8.2f}s{server_cpu:>11.2f}s{browser_cpu:>12.2f}s  {verdict}"
        )
        kept.append(
            (
                f"page in Chromium: {name}",
                f"{median:.2f} s ({low:.2f}-{high:.2f})",
                "" if target is None else f"< {target} s",
                "" if target is None else ("met" if median < target else "MISSED"),
            )
        )
    keep(
        "bench_pages",
        "python benchmarks/bench_pages.py DIR --catalog PATH --suite S",
        kept,
        setting=f"suite {args.suite}; median of {args.repeats} visits after a first one",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
