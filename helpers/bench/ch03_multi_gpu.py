"""Chapter 3's scaling measurements. In the notebook (section 7): `mirrored`, `samples_per_second`, `one_weight_model`
and `exchange_seconds`, run in the notebook's own process over its devices. From a terminal
(`python -m helpers.bench scaling`): samples/s at 1, 2, 4 (8) replicas, each point in a fresh process
(`python -m helpers.bench.ch03_multi_gpu --replicas N`)."""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import time

import keras
import numpy as np
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


# Section 7, in the notebook's own process: a MirroredStrategy over the first n of its devices for each replica count,
# so the counts can be timed in turns (helpers.readings.compare) and the prediction's inputs measured beside them.

def cross_device_op(devices) -> tf.distribute.CrossDeviceOps | None:
    """The all-reduce that works on `devices` (as helpers.strategies.plan_strategy picks): NCCL between real cards,
    HierarchicalCopyAllReduce between logical GPUs of one card, ReductionToOneDevice between logical CPUs."""
    if len(devices) < 2:
        return None
    if "GPU" in devices[0].upper():
        several_cards = len(tf.config.get_visible_devices("GPU")) > 1
        return tf.distribute.NcclAllReduce() if several_cards else tf.distribute.HierarchicalCopyAllReduce()
    return tf.distribute.ReductionToOneDevice()


def mirrored(devices) -> tf.distribute.MirroredStrategy:
    """MirroredStrategy over `devices` (a list of device names) with `cross_device_op(devices)`."""
    if not devices:
        raise CourseError("mirrored(devices): give at least one device name, e.g. ['/device:CPU:0'].")
    return tf.distribute.MirroredStrategy(list(devices), cross_device_ops=cross_device_op(devices))


def samples_per_second(strategy, build, x, y, per_replica_batch: int, steps: int):
    """A function that runs one epoch of `steps` steps through fit at per_replica_batch x replicas and returns the
    samples/s it measured (an EpochTimer's epoch: no start-up in it). The model (`build()`) is built, compiled and
    traced here, once, so that each call is a steady epoch."""
    whole_number("samples_per_second(steps=", steps, 2)
    global_batch = per_replica_batch * strategy.num_replicas_in_sync
    ds = make_dataset(x, y, global_batch, repeat=True, drop_remainder=True)
    with strategy.scope():
        model = build()
        model.compile(optimizer="nadam", loss=matching_loss())
    model.fit(ds, epochs=1, steps_per_epoch=2, verbose=0)  # traces the step

    def run() -> float:
        timer = EpochTimer(samples_per_epoch=steps * global_batch)
        model.fit(ds, epochs=1, steps_per_epoch=steps, verbose=0, callbacks=[timer])
        return steps * global_batch / timer.epoch_seconds[-1]

    run.model, run.global_batch = model, global_batch
    return run


def one_weight_model(maxlen: int = 300):
    """An 'empty' step: the same int inputs and 46 classes, one weight and one bias per class, almost no arithmetic.
    Its step time is what fit pays per step besides the model's own work."""
    return keras.Sequential([keras.Input((maxlen,), dtype="int32"), keras.layers.Lambda(
        lambda t: tf.cast(t[:, :1], "float32")), keras.layers.Dense(46)], name="one_weight")


def exchange_seconds(strategy, model, per_replica_batch: int, maxlen: int = 300, calls: int = 20,
                     rounds: int = 5) -> dict:
    """The gradient exchange of `model` across `strategy`'s replicas, as Keras's optimizer hands it over
    (keras/src/backend/tensorflow/optimizer.py: one replica_context.all_reduce(SUM, grads)): the Embedding's gradient
    is an IndexedSlices (one row per token of the replica's batch), gathered; the other gradients are dense and
    all-reduced. Each part is timed as a call with the exchange minus the same call without it, each the best of
    `rounds` samples of `calls` calls, in turns (the best: another program's load only adds time, and a difference
    of two disturbed figures can go negative). Returns seconds per step and the values each replica sends."""
    embedding = [w for layer in model.layers if isinstance(layer, keras.layers.Embedding)
                 for w in layer.trainable_weights][:1]
    dense = [v for v in model.trainable_variables if all(v is not e for e in embedding)]
    rows = per_replica_batch * maxlen
    vocab, width = (int(n) for n in embedding[0].shape) if embedding else (1, 1)

    def gradients(part):
        grads = [tf.fill(v.shape, 1.0) for v in dense] if part in ("dense", "both") else []
        if embedding and part in ("sparse", "both"):
            grads.append(tf.IndexedSlices(tf.fill((rows, width), 1.0), tf.range(rows, dtype="int64") % vocab,
                                          tf.constant([vocab, width], "int64")))
        return grads

    def step(part, exchange):
        def replica():
            grads = gradients(part)
            if exchange:
                grads = tf.distribute.get_replica_context().all_reduce("sum", grads)
            return [tf.reduce_sum(g.values if isinstance(g, tf.IndexedSlices) else g[:1]) for g in grads]

        fn = tf.function(lambda: strategy.run(replica))
        fn()  # trace

        def sample():
            for _ in range(calls):
                out = fn()
            [t.numpy() for t in tf.nest.flatten(strategy.experimental_local_results(out))]  # wait for a GPU to finish

        return sample

    runs = {(part, ex): step(part, ex) for part in ("dense", "sparse", "both") for ex in (False, True)}
    samples = {key: [] for key in runs}
    for r in range(rounds):  # in turns, so a machine that slows down favours none of them
        keys = list(runs)[r % len(runs):] + list(runs)[:r % len(runs)]
        for key in keys:
            start = time.perf_counter()
            runs[key]()
            samples[key].append((time.perf_counter() - start) / calls)
    cost = {part: max(0.0, min(samples[part, True]) - min(samples[part, False]))
            for part in ("dense", "sparse", "both")}
    return cost | {"dense_values": sum(int(np.prod(v.shape)) for v in dense),
                   "sparse_values": rows * width if embedding else 0, "sparse_rows": rows}


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
