"""Real pages in headless Chromium: the notebooks run in JupyterLab, and TensorBoard's Profile tab on a profile.

    python -m tools.browser [NOTEBOOK ...]  # default: every notebook; `make test-browser` runs tests/browser/

Each notebook is opened in JupyterLab and run with Run > Run All Cells (fast mode, 2 logical devices, the live
training view on); JupyterLab saves a copy (File > Save Notebook As, into build/browser/: the course's notebook is
never written), which tools/output_checks.py checks as it checks nbclient's runs (errors, stray stderr, cells not
run, verdicts). The page is checked only for what a page alone shows: every cell rendered, every picture displayed,
the live training view redrawn after every epoch. A full-page screenshot each lands in build/screenshots/.

Pages reach nothing but 127.0.0.1, so the checks read the same with or without a network. What cannot render then:
XProf's own page (the Profile tab's overview page, tool list and charts) loads Google Charts from www.gstatic.com
before its code and stays blank without it. So TensorBoard is checked for its Profile tab loading XProf, and XProf's
trace viewer (a page of its own, without Google Charts) for drawing the profile's threads (photographed).

Needs Debian's chromium and the `browser` extra (Playwright, pointed at that Chromium; JupyterLab). Every process
started here (servers, kernels, Chromium) is stopped however the run ends, and a process left behind is an error.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import nbformat

from tools import output_checks
from tools.servers import free_port, get, nothing_left_behind, server, stop_descendants, tensorboard, wait_until

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# As root, without a sandbox; no background connections (a closed network refuses them, many at a time).
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT, TRACE_VIEWPORT = {"width": 1440, "height": 860}, {"width": 1440, "height": 1240}
SCREENSHOTS, SAVED = ROOT / "build" / "screenshots", ROOT / "build" / "browser"
# What the kernels run with: fast mode and two logical devices, as in CI, and the live training view on.
KERNEL_ENV = {"COURSE_FAST": "1", "COURSE_DEVICES": "2", "COURSE_WIDGETS": "1"}


@contextlib.contextmanager
def chromium():
    """A headless Chromium browser context (Playwright) whose pages reach nothing but 127.0.0.1."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).is_file():
        raise SystemExit(f"No Chromium at {CHROMIUM}: install it (`apt-get install chromium`) or set CHROMIUM.")
    with sync_playwright() as playwright, contextlib.closing(
            playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)) as browser:
        context = browser.new_context(viewport=VIEWPORT)
        context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
        yield context


LAB_SETTINGS = {  # written to the run's own settings folder: the user's JupyterLab settings stay untouched
    # Every cell in the page (no windowing), so the checks and the screenshot see them all; the kernel starts unasked.
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none", "autoStartDefaultKernel": True},
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},  # the course's notebooks are never written
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},  # no pop-up
}


@contextlib.contextmanager
def jupyterlab(kernel_env: dict, timeout_s: float = 90):
    """A JupyterLab server on 127.0.0.1 (a free port, a random token, no browser of its own) serving ROOT, its
    kernels started with `kernel_env` added; yields (url, token). Stopped, kernels too, on the way out."""
    port, token = free_port(), secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="course-lab-") as home:
        for name, values in LAB_SETTINGS.items():
            settings = Path(home) / "settings" / f"{name}.jupyterlab-settings"
            settings.parent.mkdir(parents=True, exist_ok=True)
            settings.write_text(json.dumps(values))
        env = {**os.environ, **kernel_env, "JUPYTERLAB_SETTINGS_DIR": f"{home}/settings", "JUPYTER_DATA_DIR": home,
               "JUPYTERLAB_WORKSPACES_DIR": f"{home}/workspaces", "JUPYTER_RUNTIME_DIR": f"{home}/runtime"}
        url = f"http://127.0.0.1:{port}"
        with server([sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
                     f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
                     f"--ServerApp.root_dir={ROOT}"], f"{url}/api/status?token={token}", bool, env=env,
                    timeout_s=timeout_s, what="JupyterLab answering (`pip install -e '.[browser]'`?)") as proc:
            try:
                yield url, token
            finally:
                stop_descendants(proc.pid)


# Counts, per cell, every picture drawn in its outputs (a new <img>, or a new picture in one): the live training view
# redraws its figure in place, so one output is drawn again after every epoch.
WATCH_DRAWINGS = """() => {
  window.courseDrawings = {};
  const count = (node) => {
    const cell = node.closest('.jp-OutputArea-output') && node.closest('.jp-Cell');
    const i = [...document.querySelectorAll('.jp-Notebook .jp-Cell')].indexOf(cell);
    if (i >= 0) window.courseDrawings[i] = (window.courseDrawings[i] || 0) + 1;
  };
  new MutationObserver((records) => records.forEach((r) => {
    if (r.type === 'attributes') count(r.target);
    r.addedNodes.forEach((n) => n.nodeType === 1
                         && (n.tagName === 'IMG' ? [n] : n.querySelectorAll('img')).forEach(count));
  })).observe(document.querySelector('.jp-Notebook'), {subtree: true, childList: true, attributeFilter: ['src']});
}"""
# Run All has finished: the first code cell has a number, no cell waits or runs ([*]), and the kernel is idle.
RUN_FINISHED = """() => {
  const prompts = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputPrompt')].map((e) => e.textContent);
  return prompts.length > 0 && /\\[\\d+\\]/.test(prompts[0]) && !prompts.some((p) => p.includes('*'))
    && document.querySelector(".jp-Notebook-ExecutionIndicator[data-status='idle']") !== null;
}"""
# Per cell: how many of its pictures from this server (not the Colab and Kaggle badges) are not displayed, and how
# many times its outputs drew one.
OBSERVE = """() => [...document.querySelectorAll('.jp-Notebook .jp-Cell')].map((cell, i) => ({
  drawings: window.courseDrawings[i] || 0,
  widgets: cell.querySelectorAll('.jp-OutputArea-output .jupyter-widgets').length,
  widgetTables: cell.querySelectorAll('.jupyter-widgets.widget-output table').length,
  widgetError: /Error displaying widget|Loading widget/.test(cell.innerText),
  broken: [...cell.querySelectorAll('.jp-OutputArea-output img, .jp-MarkdownOutput img')].filter((img) => !(img.complete
    && img.naturalWidth) && (/^(data|blob):/.test(img.src) || img.src.startsWith(location.origin))).length}))"""
# After a resize is laid out and scrolled to the top, how far the last cell ends below the notebook's panel (0: the
# window shows the whole notebook).
HIDDEN = """async () => {
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));  // JupyterLab's layout first
  const scroller = document.querySelector('.jp-WindowedPanel-outer');
  scroller.scrollTop = 0;
  const last = [...scroller.querySelectorAll('.jp-Cell')].at(-1).getBoundingClientRect().bottom;
  return Math.max(0, Math.ceil(last + 24 - scroller.getBoundingClientRect().bottom));
}"""


def run_in_lab(context, url: str, token: str, notebook: Path, screenshot: Path, timeout_s: float = 600):
    """Open `notebook` (under ROOT) in JupyterLab, Run All from the Run menu, wait for the kernel to go idle, take a
    full-page screenshot, save the notebook as build/browser/NAME.ipynb; return (OBSERVE's list, the saved notebook)."""
    page, path = context.new_page(), notebook.resolve().relative_to(ROOT).as_posix()
    saved, sessions = SAVED / notebook.name, f"{url}/api/sessions?token={token}"
    try:
        page.goto(f"{url}/lab/tree/{urllib.parse.quote(path)}?reset&token={token}")  # reset: no earlier tabs
        page.locator(".jp-Notebook .jp-Cell").first.wait_for(timeout=60_000)
        # The kernel started and idle: a Run All clicked before is lost (the page's indicator says idle too early).
        wait_until(lambda: any(s["path"] == path and s["kernel"]["execution_state"] == "idle"
                               for s in json.loads(get(sessions))), f"{path}: its kernel idle", 60)
        page.evaluate(WATCH_DRAWINGS)
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.locator("li[data-command='runmenu:run-all']").click()
        page.wait_for_function(RUN_FINISHED, timeout=timeout_s * 1000, polling=500)
        for button in page.get_by_role("button", name="Measure here").all():  # the calculator's measure path
            button.click()
            output = button.locator("xpath=following-sibling::*[contains(@class, 'widget-output')][1]")
            output.locator("table").first.wait_for(timeout=120_000)
        sidebar = page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab.lm-mod-current")
        if sidebar.count():  # fold the open file browser
            sidebar.click()
        cells = page.evaluate(OBSERVE)
        # A window as tall as the notebook (JupyterLab scrolls inside its panel); markdown cells grow as they render.
        while (hidden := page.evaluate(HIDDEN)) and (height := page.viewport_size["height"]) < 30_000:
            page.set_viewport_size({"width": VIEWPORT["width"], "height": min(height + hidden, 30_000)})
            page.wait_for_timeout(1000)  # cells coming into view render (markdown), and may grow
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshot))
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.unlink(missing_ok=True)
        page.get_by_role("menuitem", name="File", exact=True).click()
        page.locator("li[data-command='docmanager:save-as']").click()
        page.locator(".jp-Dialog input").fill(saved.relative_to(ROOT).as_posix())
        page.locator(".jp-Dialog .jp-mod-accept").click()
        wait_until(lambda: written(saved), f"JupyterLab saving {saved}", 60)
        return cells, written(saved)
    finally:
        page.close()
        with contextlib.suppress(OSError):  # the server gone: lab_session's exit names what is left
            for session in json.loads(get(sessions)):  # the next notebook's kernel only
                urllib.request.urlopen(urllib.request.Request(f"{url}/api/sessions/{session['id']}?token={token}",
                                                              method="DELETE"), timeout=30)


def written(path: Path):
    """The notebook at `path`, or None while it is missing or half written (Jupyter writes a file in place)."""
    with contextlib.suppress(OSError, ValueError):
        return nbformat.read(path, as_version=4)


def page_problems(cells: list[dict], saved) -> list[str]:
    """What only the page shows wrong: `cells` as OBSERVE returns them, `saved` the notebook JupyterLab saved."""
    if len(cells) != len(saved.cells):
        return [f"the page shows {len(cells)} cells, the notebook has {len(saved.cells)}: not the same notebook?"]
    found = []
    for number, (shown, cell) in enumerate(zip(cells, saved.cells), 1):
        found += [f"cell {number}: {shown['broken']} picture(s) not displayed"] if shown["broken"] else []
        if shown["widgetError"]:
            found.append(f"cell {number}: a widget did not render (the page says 'Error displaying widget')")
        if cell.cell_type == "code" and "calculator.show(" in cell.source and not (shown["widgets"]
                                                                                   and shown["widgetTables"] >= 2):
            found.append(f"cell {number}: the calculator shows {shown['widgets']} widget(s) and "
                         f"{shown['widgetTables']} table(s): it needs its controls, the prediction and, after "
                         "'Measure here', the measured table")
        if cell.cell_type == "code" and "LiveTrainingView(" in cell.source:
            epochs = len(re.findall(r"^Epoch \d+/\d+", output_checks.stream_text(cell), re.M))
            if not epochs:
                found.append(f"cell {number}: the live training view's cell shows no 'Epoch i/n' lines (verbose=2)")
            elif shown["drawings"] < epochs:
                found.append(f"cell {number}: the live training view was drawn {shown['drawings']} time(s) over "
                             f"{epochs} epochs: it should be redrawn in place after every epoch")
    return found


@contextlib.contextmanager
def lab_session(kernel_env: dict | None = None):
    """JupyterLab serving the course and Chromium to open it; yields (context, url, token). Nothing outlives it."""
    with nothing_left_behind(), jupyterlab({**KERNEL_ENV, **(kernel_env or {})}) as (url, token), chromium() as context:
        yield context, url, token


def check_in_lab(notebook: Path, session, out: Path = SCREENSHOTS) -> list[str]:
    """Run `notebook` in the session's JupyterLab; what a learner would find wrong (screenshot: out/NAME.png)."""
    cells, saved = run_in_lab(*session, notebook, out / f"{notebook.stem}.png")
    return output_checks.problems(saved, nbformat.read(notebook, as_version=4)) + page_problems(cells, saved)


def check_profile(logdir: Path, context, out: Path = SCREENSHOTS) -> Path:
    """TensorBoard on `logdir`: its Profile tab loads XProf's page, and XProf's trace viewer draws the profile's
    threads (photographed: out/tensorboard_profile_trace_viewer.png)."""
    with tensorboard(logdir) as url:
        page = context.new_page()
        try:
            page.goto(f"{url}/#profile")
            # The Profile tab's frame holds XProf's page (its <app> stays empty offline, see the docstring).
            page.frame_locator("iframe[src*='name=profile']").locator("app").wait_for(state="attached", timeout=30_000)
            run = json.loads(get(f"{url}/data/plugin/profile/runs"))[0]
            host = json.loads(get(f"{url}/data/plugin/profile/hosts?run={run}&tag=trace_viewer"))[0]["hostname"]
            data = "data?" + urllib.parse.urlencode({"run": run, "tag": "trace_viewer", "host": host})
            page.set_viewport_size(TRACE_VIEWPORT)  # room for every thread's row of the timeline
            page.goto(f"{url}/data/plugin/profile/trace_viewer_index.html?is_streaming=false&is_oss=true&"
                      + urllib.parse.urlencode({"trace_data_url": f"/data/plugin/profile/{data}"}))
            # The Python thread's row (where the training steps are) in the timeline: the trace is read and drawn.
            page.get_by_text("python", exact=True).filter(visible=True).first.wait_for(timeout=60_000)
            page.wait_for_timeout(1500)
            out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out / "tensorboard_profile_trace_viewer.png"))
        finally:
            page.close()
    return out / "tensorboard_profile_trace_viewer.png"


def main(argv=None) -> int:
    notebooks = [Path(arg) for arg in (sys.argv[1:] if argv is None else argv)]
    with lab_session() as session:
        found = {path.name: check_in_lab(path, session) for path in notebooks or sorted(ROOT.glob("notebooks/*.ipynb"))}
    for name, problems in found.items():
        print(f"{name}: {'OK' if not problems else 'PROBLEMS:'}", *problems, sep="\n  ")
    return 1 if any(found.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
