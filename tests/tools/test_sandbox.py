"""tools/sandbox.py: a private network namespace for the course's own test runs (Linux, as root)."""

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from tools import sandbox

needs_namespaces = pytest.mark.skipif(not sandbox.private_network_available(),
                                      reason="network namespaces need Linux, root and unshare/nsenter")
LISTEN = ("import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
          "print(s.getsockname()[1], flush=True); time.sleep(20)")


def reach(port: int) -> str:
    return f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('reached')"


@needs_namespaces
def test_private_network_has_its_own_loopback_unreachable_from_outside():
    with sandbox.private_network() as prefix:
        inside = subprocess.Popen([*prefix, sys.executable, "-c", LISTEN], stdout=subprocess.PIPE, text=True)
        try:
            port = int(inside.stdout.readline())
            assert subprocess.run([*prefix, sys.executable, "-c", reach(port)], capture_output=True,
                                  text=True).stdout.strip() == "reached"
            outside = subprocess.run([sys.executable, "-c", reach(port)], capture_output=True, text=True)
            assert outside.returncode != 0 and "reached" not in outside.stdout
        finally:
            inside.kill()
            inside.wait()
    holder = int(prefix[1].split("/")[2])  # --net=/proc/PID/ns/net
    assert not os.path.exists(f"/proc/{holder}"), "the namespace holder must be gone"


@needs_namespaces
def test_chapter_7_workers_train_in_a_private_network(tmp_path):
    # The command line runs the two-worker job inside a namespace and passes on its exit code.
    code = ("import json, sys\nfrom helpers.chapters.ch07_beyond_one_machine import run_workers\n"
            "from helpers.programs import program\n"
            f"results = run_workers(program('multiworker'), '--out', {str(tmp_path)!r}, '--steps', 4, timeout_s=90)\n"
            "print(json.dumps([r.lines for r in results]))\nsys.exit(7)\n")
    done = subprocess.run([sys.executable, "-m", "tools.sandbox", sys.executable, "-c", code], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 7, done.stderr[-2000:]
    lines = json.loads(done.stdout.splitlines()[-1])
    # Not the last line: a worker may log the chief's closed socket after its own "done" (chapter 7, section 3).
    assert all("done" in worker for worker in lines), [worker[-3:] for worker in lines]


def test_without_a_command_it_explains_itself(capsys):
    assert sandbox.main([]) == 2
    assert "python -m tools.sandbox COMMAND" in capsys.readouterr().err


def test_without_namespaces_it_runs_the_command_as_it_is(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "private_network_available", lambda: False)
    assert sandbox.main([sys.executable, "-c", "raise SystemExit(5)"]) == 5
    assert "no private network here" in capsys.readouterr().err
