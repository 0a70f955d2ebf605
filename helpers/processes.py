"""Watch the processes a cell starts, kill them on purpose, and never leave one behind (chapter 7)."""

from __future__ import annotations

import os
import queue
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
    killed: str | None = None  # why we killed it: "on purpose", "timeout", "a peer failed" or "cleanup"; None: ended
    notified: bool = False  # sent SIGTERM by notify_when (a preemption notice); it then ends by itself

    def check(self, what: str, returncode: int = 0) -> Finished:
        """Raise a CourseError that shows how `what` ended and its last lines, unless it exited with `returncode`."""
        if self.returncode == returncode and self.killed is None:
            return self
        how = f"was killed ({self.killed})" if self.killed else f"exited with code {self.returncode}"
        tail = "\n".join(self.lines[-15:]) or "(it printed nothing)"
        hint = " Give it more time (timeout_s) on a slow machine." if self.killed == "timeout" else ""
        raise CourseError(f"{what} {how}, expected exit code {returncode}.{hint} Its last lines:\n{tail}")


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


class Group:
    """Processes started together (the workers of a cluster) and watched together. Leaving the `with` block, also
    by an exception or an interrupted cell, kills every one still running and everything it started."""

    def __init__(self):
        self.procs: list[subprocess.Popen] = []
        self.results: list[Finished] = []
        self._lines: queue.Queue = queue.Queue()

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self, command, *, env=None, cwd=None) -> subprocess.Popen:
        """subprocess.Popen(command, env=env) with its output (stdout and stderr) collected line by line, in a
        session of its own (so that a kill reaches its children too), and killed if this Python process dies."""
        proc = subprocess.Popen([str(part) for part in command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=env, cwd=cwd, start_new_session=True, preexec_fn=die_with_parent)
        self.procs.append(proc)
        self.results.append(Finished())
        threading.Thread(target=_read, args=(proc, len(self.procs) - 1, self._lines), daemon=True).start()
        return proc

    def watch(self, *, echo=None, kill_when=None, notify_when=None, timeout_s: float = 120, ok_returncodes=(0,),
              stop_all_on_failure: bool = True, name: str | None = None) -> list[Finished]:
        """Wait for every process and return what each printed and how it ended.

        echo(index, line) sees each line. kill_when(index, line) -> True kills process `index` with SIGKILL at that
        line (an on-purpose crash); its collected output ends with that line. notify_when(index, line) -> True sends
        it SIGTERM once (the notice a preempted machine gets) and goes on watching it. If one process fails (an exit
        code not in ok_returncodes, or killed) and stop_all_on_failure, the others are killed too: a synchronous job
        cannot go on without a peer and would wait for it forever; given a `name` ("worker"), a CourseError then
        says which failed and how. After `timeout_s` seconds everything still running is killed."""
        if timeout_s <= 0:
            raise CourseError(f"watch(timeout_s={timeout_s!r}): use a positive number of seconds.")
        try:
            self._watch(echo, kill_when, notify_when, time.monotonic() + timeout_s, stop_all_on_failure,
                        ok_returncodes)
        finally:
            self.stop()
        failed = [i for i, r in enumerate(self.results)
                  if (r.returncode not in ok_returncodes or r.killed) and r.killed != "a peer failed"]
        if name and stop_all_on_failure and failed:
            result = self.results[failed[0]]
            how = {"on purpose": "was killed on purpose", "timeout": f"did not finish within {timeout_s:g} s"}.get(
                result.killed, f"exited with code {result.returncode}")
            last = result.lines[-1] if result.lines else "(no output)"
            raise CourseError(f"{name} {failed[0]} {how} (last line: {last!r}); the others were stopped.")
        return self.results

    def stop(self) -> None:
        """Kill every process still running (and its children), and note how each ended."""
        for proc, result in zip(self.procs, self.results):
            if proc.poll() is None and result.killed is None:
                result.killed = "cleanup"
            _kill(proc)
            result.returncode = proc.returncode

    def _watch(self, echo, kill_when, notify_when, deadline, stop_all_on_failure, ok_returncodes):
        procs, results, running = self.procs, self.results, len(self.procs)
        while running:
            try:
                index, line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                for proc, result in zip(procs, results):
                    if proc.poll() is None:
                        result.killed = "timeout"
                return
            if line is None:  # this process closed its output: it has ended, or is about to
                running -= 1
                if procs[index].wait() not in ok_returncodes and stop_all_on_failure:
                    self._stop_others(index)
                continue
            if results[index].killed == "on purpose":  # printed before the kill landed: output ends at the kill line
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

    def _stop_others(self, failed):
        for index, (proc, result) in enumerate(zip(self.procs, self.results)):
            if index != failed and proc.poll() is None:
                result.killed = "a peer failed"
                _kill(proc)


def _read(proc, index, lines):
    for line in proc.stdout:
        lines.put((index, line.rstrip("\n")))
    lines.put((index, None))


def run_group(commands, *, envs=None, cwd=None, **watch) -> list[Finished]:
    """Start several commands at once (each with its env from `envs`) and watch them: Group.watch's arguments."""
    with Group() as group:
        for command, env in zip(commands, envs or [None] * len(commands)):
            group.start(command, env=env, cwd=cwd)
        return group.watch(**watch)


def run_watched(command, *, kill_when=None, timeout_s: float = 120, env=None, cwd=None, echo=None) -> Finished:
    """One command, watched: kill_when(line) and echo(line) take just the line."""
    return run_group([command], envs=[env], cwd=cwd, timeout_s=timeout_s,
                     kill_when=(lambda _, line: kill_when(line)) if kill_when else None,
                     echo=(lambda _, line: echo(line)) if echo else None)[0]
