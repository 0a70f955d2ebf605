"""Chapter 6's launcher for the multi-worker program, and its measurement: the two-worker job's start-up time and
steps/s (`python -m helpers.bench multiworker`)."""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import time

import helpers.cluster  # the notebook-cell block below calls helpers.cluster and helpers.processes, as the notebook
import helpers.processes
import helpers.programs
from helpers.plots import bars
from helpers.results import Result

# notebook cell: run_workers
RESTART_CODE = 42  # what multiworker.py exits with after a preemption checkpoint: "restart me"


def run_workers(program, *args, workers=2, timeout_s=120, echo=None, kill_when=None, preempt_when=None,
                show_commands=False):
    """Start `python program args...` as `workers` workers of one cluster on this machine, each with its own
    TF_CONFIG, and wait for all of them. echo(index, line) sees every line a worker prints."""
    hosts = helpers.cluster.local_hosts(workers)  # "127.0.0.1:PORT", a free port for each worker
    with helpers.processes.Group() as group:  # however the block ends, no worker is left running
        for index in range(workers):
            tf_config = {"cluster": {"worker": hosts}, "task": {"type": "worker", "index": index}}
            command = [sys.executable, str(program), *map(str, args)]
            env = {**os.environ, "TF_CONFIG": json.dumps(tf_config),
                   "CUDA_VISIBLE_DEVICES": "",  # CPU workers: two on one GPU would fight for its memory
                   "GCE_METADATA_IP": "127.0.0.1:9"}  # tells PreemptionCheckpointHandler "not on Google Cloud"
            if show_commands:
                print(f"worker {index}: TF_CONFIG='{env['TF_CONFIG']}' python {shlex.join(command[1:])}")
            group.start(command, env=env)
        # If one worker fails, the others are stopped (they would wait for it forever) and an error says which.
        return group.watch(echo=echo, kill_when=kill_when, notify_when=preempt_when, timeout_s=timeout_s,
                           ok_returncodes=(0, RESTART_CODE), name="worker")
# end of notebook cell


def multiworker_timing(steps: int, out: str) -> dict:
    """Run the two-worker job of chapter 6 on 127.0.0.1: seconds until both workers joined the cluster (process
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
