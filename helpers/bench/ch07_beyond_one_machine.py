"""Chapter 7's measurement of its two-worker job, started by the chapter's run_workers: the job's start-up time and
steps/s (`python -m helpers.bench multiworker`)."""

from __future__ import annotations

import tempfile
import time

import helpers.programs
from helpers.chapters.ch07_beyond_one_machine import run_workers
from helpers.plots import bars
from helpers.results import Result


def multiworker_timing(steps: int, out: str) -> dict:
    """Run the two-worker job of chapter 7 on 127.0.0.1: seconds until both workers joined the cluster (process
    start, TensorFlow import, gRPC handshake) and steady steps/s (after the first, traced, step)."""
    start, stamps = time.monotonic(), {}

    def echo(index, line):
        now = time.monotonic()
        if line.endswith("connected"):
            stamps["connected"] = max(stamps.get("connected", 0.0), now)  # the later of the two workers
        elif line.startswith("step 1 "):
            stamps.setdefault("first", now)
        elif line.startswith(f"step {steps} "):
            stamps["last"] = now

    run_workers(helpers.programs.program("multiworker"), "--out", out, "--steps", steps, echo=echo)
    return {"workers": 2, "startup_s": stamps["connected"] - start,
            "steps_per_s": (steps - 1) / (stamps["last"] - stamps["first"])}


def multiworker(fast: bool) -> Result:
    """Two MultiWorkerMirroredStrategy workers on 127.0.0.1: cluster start-up time and steps/s."""
    with tempfile.TemporaryDirectory() as out:
        timing = multiworker_timing(20 if fast else 200, out)
    rows = [[timing["workers"], round(timing["startup_s"], 2), round(timing["steps_per_s"], 1)]]
    fig = bars(["start-up (s)", "steps/s"], [timing["startup_s"], timing["steps_per_s"]],
               ylabel="value", title="Two workers on 127.0.0.1, synchronous custom loop")
    return Result("multiworker", ["workers", "startup_s", "steps_per_s"], rows, fig)
