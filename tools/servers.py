"""Servers the tools start on 127.0.0.1 (TensorBoard; JupyterLab for tools/browser.py; the replicas' package index),
each stopped with every process it started, and a guard that names and kills any process that outlives a run.

server(), tensorboard(), package_index() and get() need only the standard library (tools/replica.py runs them before
any venv exists; tensorboard() asks its own `python` for a port); free_port() uses portpicker, stop_descendants() and
nothing_left_behind() psutil.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

MARKER = "COURSE_BROWSER_RUN"  # in the environment of every process started in a guarded run


def free_port(python: str | None = None) -> int:
    """A port nobody listens on now, picked by portpicker, in `python` where given: the replica's own process has only
    the standard library, its venv has portpicker (Colab and Kaggle ship it)."""
    if python is None:
        import portpicker

        return portpicker.pick_unused_port()
    code = "import portpicker; print(portpicker.pick_unused_port())"
    return int(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout)


def get(url: str, timeout_s: float = 30) -> bytes:
    """The body at `url` (TensorBoard gzips its answers whatever the request says)."""
    body = urllib.request.urlopen(url, timeout=timeout_s).read()
    return gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body


def wait_until(done, what: str, timeout_s: float):
    """Poll `done()` until it is true; SystemExit naming `what` after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: not after {timeout_s:.0f} s")
        time.sleep(0.3)


def marked_processes(run_id: str) -> list:
    """Processes (psutil's) other than this one whose environment carries run `run_id`'s marker."""
    import psutil

    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):  # ended, a zombie, or another user's
            if proc.pid != os.getpid() and proc.environ().get(MARKER) == run_id:
                found.append(proc)
    return found


def _exit_on_sigterm(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")


@contextlib.contextmanager
def nothing_left_behind(grace_s: float = 10):
    """Marks every process started inside (they inherit os.environ) and, on the way out, kills any still running
    after `grace_s` and raises an error that names them."""
    import psutil

    run_id, previous = uuid.uuid4().hex, os.environ.get(MARKER)
    os.environ[MARKER] = run_id
    on_sigterm = signal.signal(signal.SIGTERM, _exit_on_sigterm)  # `timeout`, CI cancelling: clean up all the same
    try:
        yield run_id
    finally:
        signal.signal(signal.SIGTERM, on_sigterm)
        os.environ.pop(MARKER) if previous is None else os.environ.update({MARKER: previous})
        deadline = time.monotonic() + grace_s
        while (left := marked_processes(run_id)) and time.monotonic() < deadline:
            time.sleep(0.25)
        named = {}
        for proc in left:
            with contextlib.suppress(psutil.Error):  # it ended meanwhile
                named[proc.pid] = " ".join(proc.cmdline())[:160]
                proc.kill()
    if named:
        raise RuntimeError(f"{len(named)} process(es) outlived the run and were killed: {named}")


def stop(proc: subprocess.Popen, grace_s: float = 15):
    """SIGTERM `proc`'s process group (started with a session of its own), SIGKILL it after `grace_s`."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def stop_descendants(pid: int, grace_s: float = 15):
    """SIGTERM every process under `pid` (Jupyter's kernels run in sessions of their own), SIGKILL those still running
    after `grace_s`."""
    import psutil

    family = []
    with contextlib.suppress(psutil.Error):
        family = psutil.Process(pid).children(recursive=True)
    for member in family:
        with contextlib.suppress(psutil.Error):
            member.terminate()
    for member in psutil.wait_procs(family, timeout=grace_s)[1]:
        with contextlib.suppress(psutil.Error):
            member.kill()


@contextlib.contextmanager
def server(command: list[str], ready_url: str, ready, what: str, timeout_s: float, env: dict | None = None):
    """Run `command` until the body at `ready_url` passes `ready`, then yield its Popen; its process group is stopped
    on the way out. SystemExit (`what`, its exit code, the end of its log) if it stops or is not ready in time."""
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout_s
            while not _answers(ready_url, ready):
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise SystemExit(f"{what}: not in {timeout_s:.0f} s (exit code {proc.poll()}), its log ends:\n"
                                     f"{log.read().decode(errors='replace')[-1500:]}")
                time.sleep(0.3)
            yield proc
        finally:
            stop(proc)


def _answers(url: str, ready) -> bool:
    with contextlib.suppress(OSError):
        return ready(get(url, timeout_s=2))
    return False


@contextlib.contextmanager
def tensorboard(logdir: Path, timeout_s: float = 60, python: str = sys.executable, env: dict | None = None):
    """A TensorBoard server on 127.0.0.1 for `logdir` (run by `python`, with `env`); yields its address once its
    Profile tab lists a run."""
    port = free_port(python)
    url = f"http://127.0.0.1:{port}"
    command = [python, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1", "--port", str(port)]
    with server(command, f"{url}/data/plugin/profile/runs", lambda runs: b'"' in runs, env=env, timeout_s=timeout_s,
                what=f"TensorBoard listing a profile run (is there a trace under {logdir}?)"):
        yield url


class _QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # one line per request on stderr would bury the replica's log
        pass


@contextlib.contextmanager
def package_index(wheels: list[Path]):
    """A PEP 503 "simple" package index of `wheels` served over HTTP on 127.0.0.1 (a thread of this process), as pip
    reads PyPI's: yields its URL, http://127.0.0.1:PORT/simple, which the setup cell takes from COURSE_SOURCE. pip
    reads the folder listing http.server writes as the project's page of links."""
    with tempfile.TemporaryDirectory(prefix="course-index-") as root:
        for wheel in wheels:
            project = Path(root, "simple", re.sub(r"[-_.]+", "-", wheel.name.split("-")[0]).lower())
            project.mkdir(parents=True, exist_ok=True)
            shutil.copy(wheel, project)
        handler = functools.partial(_QuietFiles, directory=root)
        with http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler) as httpd:
            threading.Thread(target=httpd.serve_forever, daemon=True).start()
            try:
                yield f"http://127.0.0.1:{httpd.server_port}/simple"
            finally:
                httpd.shutdown()
