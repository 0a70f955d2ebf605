"""Real pages in a real browser: the notebooks run in JupyterLab, and TensorBoard's Profile tab, in headless Chromium.

    python tools/browser.py lab [NOTEBOOK ...] [--out build/screenshots]
    python tools/browser.py profile-screenshots [--logdir notebooks/ch7_logs/naive] [--out helpers/screenshots]

`make test-browser` runs the first through tests/browser/ (each notebook run through JupyterLab's Run menu, then
checked for what a learner sees: no error, every plot an image, the live training view redrawn every epoch, every
exercise's verdict shown; a full-page screenshot each); `make screenshots` stores the second's pictures. Needs
Debian's `chromium` (apt-get install chromium) and the `browser` extra (Playwright, pointed at that Chromium:
Playwright's own browser download is not reachable everywhere; JupyterLab). Every process started here (servers,
kernels, Chromium) is stopped however the run ends, and a process left behind is an error.

XProf's page loads Google Charts from www.gstatic.com before its own code. Where that host cannot be reached (as on
the machines that build the course), tools/google_charts_stub.js stands in: the page and the trace viewer
are XProf's own, and each Google chart is replaced by a labelled empty box.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# As root, without a sandbox; no background connections (a closed network refuses them, many at a time).
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
CHARTS_STUB = ROOT / "tools" / "google_charts_stub.js"
VIEWPORT = {"width": 1440, "height": 860}
TRACE_VIEWPORT = {"width": 1440, "height": 1240}
SCREENSHOTS = ROOT / "build" / "screenshots"
# In the environment of every process started here, to find any left behind (Linux: read from /proc/PID/environ).
MARKER = "COURSE_BROWSER_RUN"
# What the kernels run with: fast mode and two logical devices, as in CI, and the live training view on.
KERNEL_ENV = {"COURSE_FAST": "1", "COURSE_DEVICES": "2", "COURSE_WIDGETS": "1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout_s: float = 30) -> bytes:
    """The body at `url` (TensorBoard gzips its answers whatever the request says)."""
    body = urllib.request.urlopen(url, timeout=timeout_s).read()
    return gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body


def marked_processes(run_id: str) -> list[int]:
    """Processes other than this one whose environment carries run `run_id`'s marker."""
    needle = f"{MARKER}={run_id}".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if int(entry.name) != os.getpid() and needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


def _command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:160]
    return "?"


def _exit_on_sigterm(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")


@contextlib.contextmanager
def nothing_left_behind(grace_s: float = 10):
    """Marks every process started inside (they inherit os.environ) and, on the way out, kills any still running
    after `grace_s` and raises an error that names them."""
    if not Path("/proc/self/environ").is_file():
        raise SystemExit("The browser checks need Linux (/proc): they look for processes left behind there.")
    run_id, previous = uuid.uuid4().hex, os.environ.get(MARKER)
    os.environ[MARKER] = run_id
    on_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)  # `timeout`, CI cancelling: clean up all the same
    try:
        yield run_id
    finally:
        signal.signal(signal.SIGTERM, on_sigterm)
        if previous is None:
            del os.environ[MARKER]
        else:
            os.environ[MARKER] = previous
        deadline = time.monotonic() + grace_s
        while (left := marked_processes(run_id)) and time.monotonic() < deadline:
            time.sleep(0.25)
        left = {pid: _command_line(pid) for pid in left}
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if left:
            print(f"Processes left behind (killed now): {left}", file=sys.stderr)
    if left:
        raise RuntimeError(f"{len(left)} process(es) outlived the browser run and were killed: {left}")


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
def chromium():
    """A headless Chromium browser context (Playwright) whose requests for Google Charts get the stand-in."""
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
            yield context
        finally:
            browser.close()


LAB_SETTINGS = {  # written to the run's own settings folder: the user's JupyterLab settings stay untouched
    # Every cell in the page (no windowing), so the checks and the screenshot see them all; the kernel starts unasked.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none", "autoStartDefaultKernel": True},
    # The run's outputs are never written into the course's notebooks.
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    # No news pop-up over the notebook (and no request for it).
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


@contextlib.contextmanager
def jupyterlab(root: Path, kernel_env: dict, timeout_s: float = 90):
    """A JupyterLab server from this Python on 127.0.0.1 (a free port, a random token, no browser of its own) serving
    `root`, its kernels started with `kernel_env` added; yields (url, token). Stopped, kernels too, on the way out."""
    port, token = free_port(), secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="course-lab-") as home:
        home = Path(home)
        for name, values in LAB_SETTINGS.items():
            path = home / "settings" / f"{name}.jupyterlab-settings"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(values))
        env = {**os.environ, **kernel_env, "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
               "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
               "JUPYTER_DATA_DIR": str(home / "data")}
        log = home / "server.log"
        with log.open("wb") as log_file:
            proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root",
                                     "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
                                     "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                                     f"--ServerApp.root_dir={root}"],
                                    stdout=log_file, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_for_server(proc, f"{url}/api/status?token={token}", log, timeout_s)
            yield url, token
        finally:
            _stop_server(proc, url, token)


def _wait_for_server(proc, status_url: str, log: Path, timeout_s: float):
    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"JupyterLab stopped (exit {proc.returncode}):\n{log.read_text()[-1500:]}\n"
                             "Is it installed? `pip install -e '.[browser]'`")
        with contextlib.suppress(OSError):
            urllib.request.urlopen(status_url, timeout=2)
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"JupyterLab did not answer in {timeout_s:.0f} s:\n{log.read_text()[-1500:]}")
        time.sleep(0.3)


def _stop_server(proc, url: str, token: str, grace_s: float = 15):
    """Shut the kernels down, then the server (SIGTERM, then SIGKILL for its whole process group)."""
    with contextlib.suppress(OSError, ValueError):
        for kernel in json.loads(get(f"{url}/api/kernels?token={token}", timeout_s=5)):
            request = urllib.request.Request(f"{url}/api/kernels/{kernel['id']}?token={token}", method="DELETE")
            urllib.request.urlopen(request, timeout=grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# Counts, per cell, every image drawn in its outputs (a new <img> or a new picture in one): the live training
# view redraws its figure in place, so one output is drawn again after every epoch.
WATCH_DRAWINGS = """() => {
  window.courseDrawings = {};
  const cells = () => [...document.querySelectorAll('.jp-Notebook .jp-Cell')];
  const count = (node) => {
    const cell = node.closest && node.closest('.jp-OutputArea-output') && node.closest('.jp-Cell');
    if (cell) { const i = cells().indexOf(cell); window.courseDrawings[i] = (window.courseDrawings[i] || 0) + 1; }
  };
  new MutationObserver((records) => records.forEach((r) => {
    if (r.type === 'attributes' && r.target.tagName === 'IMG') count(r.target);
    r.addedNodes.forEach((n) => n.nodeType === 1
                         && (n.tagName === 'IMG' ? [n] : n.querySelectorAll('img')).forEach(count));
  })).observe(document.querySelector('.jp-Notebook'), {subtree: true, childList: true, attributes: true,
                                                       attributeFilter: ['src']});
}"""
# Run all has finished: the first code cell has a number, no cell waits or runs ([*]), and the kernel is idle.
RUN_FINISHED = """() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')].map((e) => e.textContent);
  return prompts.length > 0 && /\\[\\d+\\]/.test(prompts[0]) && !prompts.some((p) => p.includes('*'))
    && document.querySelector(".jp-Notebook-ExecutionIndicator[data-status='idle']") !== null;
}"""
# What the learner sees, cell by cell. Images from other sites (the Colab and Kaggle badges) are left out: whether
# they load says more about the network than about the notebook.
OBSERVE = """() => {
const local = (img) => /^(data|blob):/.test(img.src) || img.src.startsWith(location.origin);
const shown = (imgs) => [...imgs].filter(local).map((img) => img.complete && img.naturalWidth > 0);
return [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map((cell, i) => ({
  kind: ['code', 'markdown', 'raw'].find((k) => cell.classList.contains(`jp-${k[0].toUpperCase()}${k.slice(1)}Cell`)),
  prompt: (cell.querySelector('.jp-InputPrompt') || {textContent: ''}).textContent.trim(),
  outputs: [...cell.querySelectorAll('.jp-OutputArea-output')].map((o) => ({
    mime: o.dataset.mimeType || '', text: o.innerText,
    images: shown(o.querySelectorAll('img'))})),
  markdown_images: shown(cell.querySelectorAll('.jp-MarkdownOutput img')),
  drawings: window.courseDrawings[i] || 0,
}));
}"""


def run_in_lab(context, url: str, token: str, notebook: Path, screenshot: Path, timeout_s: float = 600) -> list[dict]:
    """Open `notebook` (under the server's root, ROOT) in JupyterLab, run all its cells from the Run menu, wait for
    the kernel to go idle, save a full-page screenshot, and return what each cell shows (see OBSERVE)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = context.new_page()
    try:
        path = urllib.parse.quote(notebook.resolve().relative_to(ROOT).as_posix())
        page.goto(f"{url}/lab/tree/{path}?reset&token={token}")  # reset: not the tabs of the previous notebook
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        _wait_for_kernel(url, token, notebook)
        page.evaluate(WATCH_DRAWINGS)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("li[data-command='runmenu:run-all']").click()
        try:
            page.wait_for_function(RUN_FINISHED, timeout=timeout_s * 1000, polling=500)
        except PlaywrightTimeout:
            full_page_screenshot(page, screenshot)
            raise SystemExit(f"{notebook.name}: still running after {timeout_s:.0f} s in JupyterLab (screenshot: "
                             f"{screenshot})") from None
        cells = page.evaluate(OBSERVE)
        full_page_screenshot(page, screenshot)
        return cells
    finally:
        page.close()
        _shut_down_kernels(url, token)


def _wait_for_kernel(url: str, token: str, notebook: Path, timeout_s: float = 60):
    """Until the notebook's kernel is started and idle (the page's own indicator says idle before that, and a Run
    All clicked then does nothing)."""
    path = notebook.resolve().relative_to(ROOT).as_posix()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sessions = json.loads(get(f"{url}/api/sessions?token={token}", timeout_s=5))
        if any(s["path"] == path and s["kernel"]["execution_state"] == "idle" for s in sessions):
            return
        time.sleep(0.3)
    raise SystemExit(f"{notebook.name}: JupyterLab started no kernel in {timeout_s:.0f} s")


def _shut_down_kernels(url: str, token: str):
    with contextlib.suppress(OSError, ValueError):
        for session in json.loads(get(f"{url}/api/sessions?token={token}", timeout_s=5)):
            request = urllib.request.Request(f"{url}/api/sessions/{session['id']}?token={token}", method="DELETE")
            urllib.request.urlopen(request, timeout=30)


# Scrolls the notebook's scrolling panel to its top; returns how far below it the last cell ends (the panel itself
# goes on: JupyterLab lets the last cell scroll up to the top).
TO_THE_TOP = """() => {
  const panels = [...document.querySelectorAll('.jp-NotebookPanel *')];
  const scroller = panels.reduce((a, b) => (b.scrollHeight - b.clientHeight > a.scrollHeight - a.clientHeight ? b : a));
  scroller.scrollTop = 0;
  const cells = document.querySelectorAll('.jp-Notebook .jp-Cell');
  const end = cells[cells.length - 1].getBoundingClientRect().bottom + 24;
  return Math.max(0, Math.ceil(end - scroller.getBoundingClientRect().bottom));
}"""


def full_page_screenshot(page, path: Path, max_height: int = 30_000):
    """The whole notebook in one picture: JupyterLab scrolls inside its own panel, so the file browser is folded away
    and the window made as tall as the notebook."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(Exception):  # fold the left sidebar (clicking its open tab closes it)
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current").click(timeout=2000)
    hidden = page.evaluate(TO_THE_TOP)  # Run All left the notebook scrolled to its end
    size = page.viewport_size
    page.set_viewport_size({"width": size["width"], "height": min(size["height"] + hidden, max_height)})
    page.wait_for_timeout(1000)  # let JupyterLab lay the taller window out
    page.evaluate(TO_THE_TOP)
    page.screenshot(path=str(path))
    page.set_viewport_size(size)


TRACEBACK = "Traceback (most recent call last)"
STDERR = "application/vnd.jupyter.stderr"  # JupyterLab shows stderr, and errors, in red
VERDICT = re.compile(r"\[[\w.]+\] (Correct|Not yet|Not answered yet)")
EPOCH_LINE = re.compile(r"^Epoch \d+/\d+", re.M)
FIGURE_AS_TEXT = re.compile(r"^<Figure size [^>]*>$", re.M)


class StoredCell(NamedTuple):
    kind: str  # code, markdown or raw
    source: str
    stderr: bool  # its stored output shows stderr on purpose (chapter 5's JPEG decoder lines)


def stored_cells(path: Path) -> list[StoredCell]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [StoredCell(cell["cell_type"], "".join(cell["source"]),
                       any(output.get("name") == "stderr" for output in cell.get("outputs", []))) for cell in cells]


def lab_problems(cells: list[dict], stored: list[StoredCell]) -> list[str]:
    """What a learner would find wrong in a notebook run in JupyterLab: `cells` as OBSERVE returns them, `stored` the
    notebook's cells as stored. An empty list means nothing."""
    if [cell["kind"] for cell in cells] != [cell.kind for cell in stored]:
        return [f"the page shows {len(cells)} cells, the notebook has {len(stored)}: not the same notebook?"]
    problems = []
    for number, (cell, expected) in enumerate(zip(cells, stored), 1):
        problems += [f"cell {number}: {problem}" for problem in _cell_problems(cell, *expected)]
    return problems


def _cell_problems(cell: dict, kind: str, source: str, stderr_expected: bool) -> list[str]:
    texts = [output["text"] for output in cell["outputs"]]
    problems = [f"raised {_last_line(text)}" for text in texts if TRACEBACK in text]
    if not stderr_expected:
        problems += [f"shows log lines on a red background (stderr): {_first_line(output['text'])}"
                     for output in cell["outputs"] if output["mime"] == STDERR and TRACEBACK not in output["text"]]
    if kind == "code" and source.strip() and not re.fullmatch(r"\[\d+\]:", cell["prompt"]):
        problems.append(f"did not run (its prompt shows {cell['prompt'] or 'nothing'}): the run stopped before it")
    broken = sum(not shown for output in cell["outputs"] for shown in output["images"])
    broken += sum(not shown for shown in cell["markdown_images"])
    if broken:
        problems.append(f"{broken} image(s) not displayed")
    if any(FIGURE_AS_TEXT.search(text) for text in texts):
        problems.append("a figure shown as text (<Figure size ...>) instead of a picture")
    if kind == "code" and "LiveTrainingView(" in source:
        epochs = sum(len(EPOCH_LINE.findall(text)) for text in texts)
        if epochs == 0:
            problems.append("the live training view's cell shows no 'Epoch i/n' lines (train with verbose=2)")
        elif cell["drawings"] < epochs:
            problems.append(f"the live training view was drawn {cell['drawings']} time(s) over {epochs} epochs: "
                            "it should be redrawn in place after every epoch")
    if kind == "code" and "exercises.check(" in source and not any(VERDICT.search(text) for text in texts):
        problems.append("an exercise check shows no verdict")
    return problems


def _last_line(traceback_text: str) -> str:
    lines = [line for line in traceback_text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else "an error"


def _first_line(text: str) -> str:
    return next((line[:200] for line in text.splitlines() if line.strip()), "")


@contextlib.contextmanager
def lab_session(kernel_env: dict | None = None):
    """JupyterLab serving the course and Chromium to open it; yields (context, url, token). Nothing outlives it."""
    with (nothing_left_behind(), jupyterlab(ROOT, {**KERNEL_ENV, **(kernel_env or {})}) as (url, token),
          chromium() as context):
        yield context, url, token


def check_in_lab(notebook: Path, session, out: Path = SCREENSHOTS) -> list[str]:
    """Run `notebook` in the session's JupyterLab; what a learner would find wrong (screenshot: out/NAME.png)."""
    context, url, token = session
    cells = run_in_lab(context, url, token, notebook, out / f"{notebook.stem}.png")
    return lab_problems(cells, stored_cells(notebook))


def profile_screenshots(logdir: Path, out: Path, context=None) -> list[Path]:
    """TensorBoard's Profile tab for `logdir`: the overview page and the trace viewer, as PNG files in `out`. In a
    browser `context` of chromium() (a lab session's), or in a Chromium of its own."""
    out.mkdir(parents=True, exist_ok=True)
    overview, trace = out / "tensorboard_profile_overview.png", out / "tensorboard_profile_trace_viewer.png"
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(tensorboard(logdir))
        page = (context or stack.enter_context(chromium())).new_page()
        stack.callback(page.close)
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
    commands = parser.add_subparsers(dest="what", required=True)
    lab = commands.add_parser("lab", help="run notebooks in JupyterLab and check what a learner sees")
    lab.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    lab.add_argument("--out", type=Path, default=SCREENSHOTS, help="where the full-page screenshots go")
    profile = commands.add_parser("profile-screenshots", help="TensorBoard's Profile tab, photographed")
    profile.add_argument("--logdir", type=Path, default=ROOT / "notebooks" / "ch7_logs" / "naive")
    profile.add_argument("--out", type=Path, default=SCREENSHOTS)
    args = parser.parse_args(argv)
    if args.what == "lab":
        return check_notebooks(args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb")), args.out)
    if not args.logdir.is_dir():
        raise SystemExit(f"No trace at {args.logdir}: run chapter 7 first.")
    with nothing_left_behind():
        for path in profile_screenshots(args.logdir, args.out):
            print(f"wrote {_shown(path)}")
    return 0


def check_notebooks(notebooks: list[Path], out: Path) -> int:
    failed = 0
    with lab_session() as session:
        for notebook in notebooks:
            start = time.monotonic()
            problems = check_in_lab(notebook, session, out)
            failed += bool(problems)
            verdict = "OK" if not problems else "PROBLEMS:\n  " + "\n  ".join(problems)
            print(f"{notebook.name}: {verdict} ({time.monotonic() - start:.0f} s, screenshot "
                  f"{_shown(out / (notebook.stem + '.png'))})", flush=True)
    return 1 if failed else 0


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    sys.exit(main())
