"""Write the docs' screenshots (docs/img/*.png): `relidash serve` on sample_reports/ with a
private catalog, each page opened in Debian's Chromium (headless, driven by Playwright).

    python tools/screenshots.py [--out docs/img] [--width 1280] [--height 720]

Run by `make screenshots`, so the pictures in README.md and docs/ show the pages as they
are. Nothing is written outside --out and a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from servers import free_port, healthy, quiet_since, relidash_command, stop_group  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
# (file name, address): the page tour of README.md, in its order
PAGES = [
    ("releases", "/releases?suite=support-agent"),
    ("slices", "/slices?suite=support-agent"),
    ("lottery", "/lottery?suite=support-agent"),
    (
        "case",
        "/case?suite=code-agent&case=sha256:e1b2575cb881017dc12abb7e1690298cc7e870e10840f00e08d86f3944d617cd",
    ),
    ("gates", "/gates?suite=support-agent"),
    ("review", "/review?suite=support-agent"),
    ("reviews", "/reviews"),
    ("data", "/data"),
]


def serve(reports: Path, scratch: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = dict(os.environ, XDG_CACHE_HOME=str(scratch / "cache"))
    env["XDG_DATA_HOME"] = str(scratch / "data")
    # one sign-off, so the Review and Reviews pages show a record and the ledger's state
    subprocess.run(
        [*relidash_command(), "signoff", str(reports), "--suite", "support-agent",
         "--decision", "approved", "--by", "Release review",
         "--comment", "pass^4 holds; two lottery cases to watch in the next release"],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    log = (scratch / "serve.log").open("wb")
    proc = subprocess.Popen(
        [*relidash_command(), "serve", str(reports), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while not healthy(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_group(proc)
            raise SystemExit(
                f"relidash serve did not start:\n{(scratch / 'serve.log').read_text()}"
            )
        time.sleep(0.25)
    return proc, url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    parser.add_argument("--reports", type=Path, default=ROOT / "sample_reports")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    args = parser.parse_args(argv)

    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="relidash-shots-") as tmp:
        proc, url = serve(args.reports, Path(tmp))
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
                context = browser.new_context(viewport={"width": args.width, "height": args.height})
                context.set_default_timeout(90_000)
                page = context.new_page()
                for name, path in PAGES:
                    page.goto(url + path)
                    page.wait_for_selector(
                        '[data-testid="stApp"][data-test-connection-state="CONNECTED"]'
                    )
                    page.locator("h1").first.wait_for()
                    if quiet_since(page, 1.0, 90.0) is None:
                        print(f"{path}: still running after 90 s; shot as it is", file=sys.stderr)
                    target = args.out / f"{name}.png"
                    page.screenshot(path=str(target))
                    print(target.relative_to(ROOT) if target.is_relative_to(ROOT) else target)
                browser.close()
        finally:
            stop_group(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
