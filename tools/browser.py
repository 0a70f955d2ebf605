"""Real pages in a real browser: TensorBoard's Profile tab, served from chapter 7's trace, photographed by Chromium.

    python tools/browser.py profile-screenshots [--logdir notebooks/ch7_logs/naive] [--out helpers/screenshots]

`make screenshots` runs chapter 7 first (its trace lands in notebooks/ch7_logs) and then this. Needs Debian's
`chromium` (apt install chromium) and the `browser` extra (Playwright, pointed at that Chromium: Playwright's own
browser download is not reachable everywhere). TensorBoard and Chromium are stopped however the run ends.

XProf's page loads Google Charts from www.gstatic.com before its own code. Where that host cannot be reached (as on
the machines that build the course), tools/google_charts_stub.js stands in: the page and the trace viewer
are XProf's own, and each Google chart is replaced by a labelled empty box.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# As root, without a sandbox; no background connections (a closed network refuses them, many at a time).
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHARTS_STUB = ROOT / "tools" / "google_charts_stub.js"
VIEWPORT = {"width": 1440, "height": 860}
TRACE_VIEWPORT = {"width": 1440, "height": 1240}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout_s: float = 30) -> bytes:
    """The body at `url` (TensorBoard gzips its answers whatever the request says)."""
    body = urllib.request.urlopen(url, timeout=timeout_s).read()
    return gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body


@contextlib.contextmanager
def tensorboard(logdir: Path, timeout_s: float = 60, python: str = sys.executable, env: dict | None = None):
    """A TensorBoard server on 127.0.0.1 for `logdir` (run by `python`, with `env`), yielding its address once its
    Profile tab lists a run."""
    port = free_port()
    proc = subprocess.Popen([python, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1",
                             "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"TensorBoard stopped (exit {proc.returncode}): {proc.stderr.read().decode()[-800:]}")
            with contextlib.suppress(OSError):
                if b'"' in get(f"{url}/data/plugin/profile/runs", timeout_s=2):  # a non-empty list
                    break
            if time.monotonic() > deadline:
                raise SystemExit(f"TensorBoard at {url} listed no profile run in {timeout_s:.0f} s: is there a "
                                 f"trace under {logdir}?")
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@contextlib.contextmanager
def chromium_page():
    """A headless Chromium page (Playwright) whose requests for Google Charts get the stand-in."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        raise SystemExit(f"No Chromium at {CHROMIUM}: install it (`apt-get install chromium`) or set CHROMIUM.")
    stub = CHARTS_STUB.read_text()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        try:
            context = browser.new_context(viewport=VIEWPORT)
            context.route("https://www.gstatic.com/charts/loader.js",
                          lambda route: route.fulfill(status=200, content_type="text/javascript", body=stub))
            context.route("https://fonts.googleapis.com/**",
                          lambda route: route.fulfill(status=200, content_type="text/css", body=""))
            yield context.new_page()
        finally:
            browser.close()


def profile_screenshots(logdir: Path, out: Path) -> list[Path]:
    """TensorBoard's Profile tab for `logdir`: the overview page and the trace viewer, as PNG files in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    overview, trace = out / "tensorboard_profile_overview.png", out / "tensorboard_profile_trace_viewer.png"
    with tensorboard(logdir) as url, chromium_page() as page:
        page.goto(f"{url}/#profile", wait_until="networkidle")
        xprof = page.frame_locator("iframe")
        xprof.get_by_text("Performance Summary").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # let the summary's panels settle
        page.screenshot(path=str(overview))
        page.set_viewport_size(TRACE_VIEWPORT)  # room for every thread's row of the timeline
        xprof.locator("mat-select").nth(1).click()  # Tools
        xprof.locator("mat-option", has_text="Trace Viewer").first.click()
        # The timeline is drawn on a canvas: wait for the viewer's own panel, then for the drawing.
        xprof.frame_locator("iframe").get_by_text("Nothing selected").first.wait_for(timeout=60_000)
        page.wait_for_timeout(3000)
        page.screenshot(path=str(trace))
    return [overview, trace]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["profile-screenshots"])
    parser.add_argument("--logdir", type=Path, default=ROOT / "notebooks" / "ch7_logs" / "naive")
    parser.add_argument("--out", type=Path, default=ROOT / "helpers" / "screenshots")
    args = parser.parse_args(argv)
    if not args.logdir.is_dir():
        raise SystemExit(f"No trace at {args.logdir}: run chapter 7 first (`make screenshots` does).")
    for path in profile_screenshots(args.logdir, args.out):
        print(f"wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
