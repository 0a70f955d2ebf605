"""Run training processes we can watch, kill on purpose, and never leave behind (chapter 6)."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from helpers.errors import CourseError


@dataclass
class Finished:
    """What a watched process printed and how it ended."""

    lines: list[str] = field(default_factory=list)
    returncode: int | None = None
    killed: str | None = None  # why we killed it: "on purpose", "timeout" or "a peer failed"; None: ended itself
    notified: bool = False  # sent SIGTERM by notify_when (a preemption notice); it then ends by itself

    def check(self, what: str, returncode: int = 0) -> Finished:
        """Raise a CourseError that shows how `what` ended and its last lines, unless it exited with `returncode`."""
        if self.returncode == returncode and self.killed is None:
            return self
        how = f"was killed ({self.killed})" if self.killed else f"exited with code {self.returncode}"
        tail = "\n".join(self.lines[-15:]) or "(it printed nothing)"
        hint = " Give it more time (timeout_s) on a slow machine." if self.killed == "timeout" else ""
        raise CourseError(f"{what} {how}, expected exit code {returncode}.{hint} Its last lines:\n{tail}")


def python_command(program, *args) -> list[str]:
    """The command line that runs the Python file `program` with `args` under this interpreter."""
    if not os.path.isfile(program):
        raise CourseError(f"python_command({str(program)!r}): no such file; run the cell that writes it first.")
    return [sys.executable, os.path.abspath(program), *map(str, args)]


def die_with_parent() -> None:
    """In a child, before exec (Linux): have the kernel SIGKILL it when the process that started it dies, even
    by SIGKILL, when no `finally` can run. Elsewhere it does nothing."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG


def _kill(proc: subprocess.Popen) -> None:
    """SIGKILL the process and everything it started (its own session), then reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()


def run_group(cmds, *, kill_when=None, notify_when=None, timeout_s: float = 120, envs=None, cwd=None, echo=None,
              stop_all_on_failure: bool = True, ok_returncodes=(0,)) -> list[Finished]:
    """Run several commands at once (e.g. the workers of a cluster), collecting each one's output lines.

    kill_when(index, line) -> True kills process `index` with SIGKILL at that line (an on-purpose crash); its
    collected output ends with that line, even if the process printed more before the signal landed.
    notify_when(index, line) -> True sends process `index` SIGTERM once (the notice a preempted machine gets) and
    goes on watching it.
    If one process fails (an exit code not in ok_returncodes, or killed) and stop_all_on_failure, the others are
    killed too: a synchronous job cannot go on without a peer, and would otherwise wait for it forever. After
    `timeout_s` seconds everything still running is killed. Whatever happens, also an exception or a
    KeyboardInterrupt in the caller, no process is left behind. echo(index, line) sees each line.
    """
    if timeout_s <= 0:
        raise CourseError(f"run_group(timeout_s={timeout_s!r}): use a positive number of seconds.")
    envs = envs or [None] * len(cmds)
    lines: queue.Queue = queue.Queue()
    procs, results = [], [Finished() for _ in cmds]
    try:
        for index, (cmd, env) in enumerate(zip(cmds, envs)):
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                    cwd=cwd, start_new_session=True,  # own process group: killpg gets children
                                    preexec_fn=die_with_parent)
            procs.append(proc)
            threading.Thread(target=_read, args=(proc, index, lines), daemon=True).start()
        _watch(procs, results, lines, kill_when, notify_when, echo, time.monotonic() + timeout_s,
               stop_all_on_failure, ok_returncodes)
    finally:
        for proc, result in zip(procs, results):
            if proc.poll() is None and result.killed is None:
                result.killed = "cleanup"
            _kill(proc)
            result.returncode = proc.returncode
    return results


def _read(proc, index, lines):
    for line in proc.stdout:
        lines.put((index, line.rstrip("\n")))
    lines.put((index, None))


def _watch(procs, results, lines, kill_when, notify_when, echo, deadline, stop_all_on_failure, ok_returncodes):
    running = len(procs)
    while running:
        try:
            index, line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            for proc, result in zip(procs, results):
                if proc.poll() is None:
                    result.killed = "timeout"
            return
        if line is None:  # this process closed its output: it has ended, or is about to
            running -= 1
            if procs[index].wait() not in ok_returncodes and stop_all_on_failure:
                _stop_others(procs, results, index)
            continue
        if results[index].killed == "on purpose":  # printed before the kill landed: the output ends at the kill line
            continue
        results[index].lines.append(line)
        if echo:
            echo(index, line)
        if kill_when is not None and kill_when(index, line):
            results[index].killed = "on purpose"
            _kill(procs[index])
        elif notify_when is not None and not results[index].notified and notify_when(index, line):
            results[index].notified = True
            try:
                os.killpg(procs[index].pid, signal.SIGTERM)
            except ProcessLookupError:  # it has just ended
                pass


def _stop_others(procs, results, failed):
    for index, (proc, result) in enumerate(zip(procs, results)):
        if index != failed and proc.poll() is None:
            result.killed = "a peer failed"
            _kill(proc)


def run_watched(cmd, *, kill_when=None, timeout_s: float = 120, env=None, cwd=None, echo=None) -> Finished:
    """run_group for one command: kill_when(line) and echo(line) take just the line."""
    return run_group([cmd], timeout_s=timeout_s, envs=[env], cwd=cwd,
                     kill_when=(lambda _, line: kill_when(line)) if kill_when else None,
                     echo=(lambda _, line: echo(line)) if echo else None)[0]


def running(pattern: str) -> list[int]:
    """PIDs of the processes (other than this one) whose command line matches the regular expression."""
    import psutil  # preinstalled on Colab and Kaggle; Jupyter's kernel needs it too

    this = os.getpid()
    # Without the right to read a process's command line (another user's), psutil gives None: it cannot be ours.
    return [proc.info["pid"] for proc in psutil.process_iter(["pid", "cmdline"])
            if proc.info["pid"] != this and re.search(pattern, " ".join(proc.info["cmdline"] or []))]
