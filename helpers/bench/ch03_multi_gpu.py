"""Chapter 3's scaling benchmark, from a terminal (`python -m helpers.bench scaling`): samples/s at 1, 2, 4 (8)
replicas, each point in a fresh process (`python -m helpers.bench.ch03_multi_gpu --replicas N`), where the notebook's
section 7 measures its counts in its own process (helpers.replica_timing)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys

import tensorflow as tf

from helpers.chapters.ch01_single_gpu import reuters_conv1d
from helpers.data import load_reuters, make_dataset
from helpers.errors import CourseError, whole_number
from helpers.models import matching_loss
from helpers.plots import bars
from helpers.results import Result
from helpers.strategies import choose_strategy
from helpers.timing import EpochTimer

PER_REPLICA_BATCH = 32


def replica_throughput(per_replica_batch: int, steps: int, epochs: int = 4) -> dict:
    """Train the Reuters model under the strategy `choose_strategy()` picks for this process, at a
    fixed per-replica batch. The first epoch traces the step; each later epoch is one measurement:
    steps/s and samples/s are their median, samples_per_s_min/max their spread."""
    strategy = choose_strategy(verbose=False)
    replicas = strategy.num_replicas_in_sync
    global_batch = per_replica_batch * replicas
    data = load_reuters()
    ds = make_dataset(data.x_train, data.y_train, global_batch, repeat=True)
    with strategy.scope():
        model = reuters_conv1d()
        model.compile(optimizer="nadam", loss=matching_loss())
    timer = EpochTimer(samples_per_epoch=steps * global_batch)
    model.fit(ds, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[timer])
    rates = [steps * global_batch / s for s in (timer.epoch_seconds[1:] or timer.epoch_seconds)]
    return {"replicas": replicas, "global_batch": global_batch, "steps_per_s": steps / timer.steady_seconds,
            "samples_per_s": timer.samples_per_second, "samples_per_s_min": min(rates),
            "samples_per_s_max": max(rates), "first_epoch_s": timer.epoch_seconds[0]}


def scaling_point(replicas: int, fast: bool, physical_gpus: int = 0, per_replica_batch: int = 32) -> dict | None:
    """One point of the scaling sweep, measured in a fresh process (logical devices are fixed at
    start-up). None where this hardware cannot give `replicas` replicas."""
    env = {**os.environ, "COURSE_DEVICES": str(replicas), "COURSE_FAST": "1" if fast else "0"}
    if physical_gpus > 1:  # real GPUs are not split: show the process only as many as it needs
        if replicas > physical_gpus:
            return None
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(replicas))
    proc = subprocess.run([sys.executable, "-m", "helpers.bench.ch03_multi_gpu", "--replicas", str(replicas),
                           "--per-replica-batch", str(per_replica_batch)],
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode:
        raise CourseError(f"scaling run with {replicas} replicas failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)["results"][0]


def scaling_sweep(fast: bool, counts=(1, 2, 4, 8), per_replica_batch: int = PER_REPLICA_BATCH) -> list[dict]:
    """samples/s at 1, 2, 4 (and 8 with 8 real GPUs) replicas, each in its own process."""
    whole_number("scaling_sweep(per_replica_batch=", per_replica_batch)
    gpus = len(tf.config.get_visible_devices("GPU"))
    wanted = [n for n in counts if n <= 4 or gpus >= n]
    points = (scaling_point(n, fast, gpus, per_replica_batch) for n in wanted)
    return [p for p in points if p is not None]


def scaling(fast: bool) -> Result:
    """The Reuters model at a fixed per-replica batch on 1, 2, 4 (8) replicas: throughput and speed-up."""
    points = scaling_sweep(fast)
    base = points[0]["samples_per_s"]
    rows = [[p["replicas"], p["global_batch"], round(p["steps_per_s"], 2), round(p["samples_per_s"]),
             round(p["samples_per_s"] / base, 2)] for p in points]
    fig = bars([f"{r[0]} replica(s)" for r in rows], [r[3] for r in rows], ylabel="samples/s (steady)",
                             title=f"Reuters Conv1D, {PER_REPLICA_BATCH} examples per replica per step")
    return Result("scaling", ["replicas", "global_batch", "steps_per_s", "samples_per_s", "speedup"], rows, fig)


def main(argv=None) -> int:
    """One point of the sweep, in this process: prints {"benchmark": "scaling", "results": [point], "fast": ...}."""
    from helpers.course import setup

    parser = argparse.ArgumentParser(prog="python -m helpers.bench.ch03_multi_gpu",
                                     description="samples/s of chapter 3's model on this many replicas, as JSON")
    parser.add_argument("--replicas", type=int, required=True, help="logical devices to split this process into")
    parser.add_argument("--per-replica-batch", type=int, default=PER_REPLICA_BATCH,
                        help="examples per replica per step (default %(default)s)")
    args = parser.parse_args(argv)
    try:
        course = setup(devices=args.replicas, verbose=False)
        point = replica_throughput(args.per_replica_batch, *((12, 4) if course.fast else (60, 4)))
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(json.dumps({"benchmark": "scaling", "results": [point], "fast": course.fast}))
    return 0


if __name__ == "__main__":
    status = main()
    gc.freeze()  # spare the garbage collector's last pass over TensorFlow's objects at exit (about 2 s)
    sys.exit(status)
