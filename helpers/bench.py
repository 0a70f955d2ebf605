"""The course's measurements outside a notebook: `python -m helpers.bench NAME [--json]`.

Each benchmark prints a table (or, with --json, one JSON object on stdout) and writes a PNG.
Fast mode (COURSE_FAST=1) shrinks the work; COURSE_DEVICES splits the device as in the notebooks.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field

from helpers.course import CourseError
from helpers.tables import Table

BENCHMARKS = {}


@dataclass
class Result:
    name: str
    columns: list[str]
    rows: list[list]
    figure: object  # a matplotlib Figure
    extra: dict = field(default_factory=dict)  # summary figures for --json, next to "results"

    def table(self) -> Table:
        return Table(self.columns, self.rows, title=self.name)

    def as_json(self, png: str) -> dict:
        return {"benchmark": self.name, "results": [dict(zip(self.columns, r)) for r in self.rows], **self.extra,
                "png": png}


def benchmark(name: str):
    def register(fn):
        BENCHMARKS[name] = fn
        return fn
    return register


def accelerators() -> list[str]:
    """The CPU plus every physical GPU present (not each logical slice of one), for tf.device."""
    import tensorflow as tf

    return ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(tf.config.get_visible_devices("GPU")))]


@benchmark("matmul")
def matmul(fast: bool) -> Result:
    """(10000x100) @ (100x100000) on every device (100x10000 in fast mode), median of repeats."""
    import tensorflow as tf

    from helpers.plots import bars
    from helpers.timing import measure

    n = 10_000 if fast else 100_000

    def on(device):
        with tf.device(device):
            tf.random.set_seed(0)
            a = tf.random.uniform((10_000, 100), minval=0, maxval=3.0)
            b = tf.random.uniform((100, n), minval=0, maxval=3.0)
            timing = measure(lambda: tf.reduce_sum(a @ b), warmup=1, repeats=3 if fast else 5, name=device)
            return timing, float(tf.reduce_sum(a @ b))

    rows = []
    for device in accelerators():
        timing, total = on(device)
        gflops = 2 * 10_000 * 100 * n / timing.median / 1e9
        rows.append([device, timing.median, timing.min, timing.max, round(gflops, 1), f"{total:.4e}"])
    fig = bars([r[0] for r in rows], [r[1] for r in rows], ylabel="seconds (median)",
               errors=([r[2] for r in rows], [r[3] for r in rows]),
               title=f"(10000x100) @ (100x{n}) per device")
    return Result("matmul", ["device", "median_s", "min_s", "max_s", "gflops", "sum"], rows, fig)


@benchmark("epoch-time")
def epoch_time(fast: bool) -> Result:
    """The Reuters Conv1D model: steady epoch time and samples/s on each device present."""
    import tensorflow as tf

    from helpers.data import load_reuters, make_dataset
    from helpers.models import matching_loss, reuters_conv1d
    from helpers.plots import bars
    from helpers.timing import EpochTimer

    data = load_reuters()
    batch, steps = 32, (40 if fast else len(data.x_train) // 32)
    ds = make_dataset(data.x_train, data.y_train, batch, repeat=True)
    rows = []
    for device in accelerators():
        with tf.device(device):
            model = reuters_conv1d()
            model.compile(optimizer="nadam", loss=matching_loss(), metrics=["accuracy"])
            timer = EpochTimer(samples_per_epoch=steps * batch)
            model.fit(ds, epochs=3 if fast else 4, steps_per_epoch=steps, verbose=0, callbacks=[timer])
        rows.append([device, timer.steady_seconds, round(timer.samples_per_second), timer.epoch_seconds[0]])
    fig = bars([r[0] for r in rows], [r[2] for r in rows], ylabel="samples/s",
               title=f"Reuters Conv1D, batch {batch}, {steps} steps/epoch")
    return Result("epoch-time", ["device", "steady_epoch_s", "samples_per_s", "first_epoch_s"], rows, fig)


def replica_throughput(per_replica_batch: int, steps: int, epochs: int = 3) -> dict:
    """Train the Reuters model under the strategy `choose_strategy()` picks for this process, at a
    fixed per-replica batch; steady steps/s and samples/s exclude the first (tracing) epoch."""
    from helpers.data import load_reuters, make_dataset
    from helpers.devices import choose_strategy
    from helpers.models import matching_loss, reuters_conv1d
    from helpers.timing import EpochTimer

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
    return {"replicas": replicas, "global_batch": global_batch, "steps_per_s": steps / timer.steady_seconds,
            "samples_per_s": timer.samples_per_second, "first_epoch_s": timer.epoch_seconds[0]}


def scaling_point(replicas: int, fast: bool, physical_gpus: int = 0, per_replica_batch: int = 32) -> dict | None:
    """One point of the scaling sweep, measured in a fresh process (logical devices are fixed at
    start-up). None where this hardware cannot give `replicas` replicas."""
    import subprocess

    env = {**os.environ, "COURSE_DEVICES": str(replicas), "COURSE_FAST": "1" if fast else "0"}
    if physical_gpus > 1:  # real GPUs are not split: show the process only as many as it needs
        if replicas > physical_gpus:
            return None
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in range(replicas))
    proc = subprocess.run([sys.executable, "-m", "helpers.bench", "scaling", "--replicas", str(replicas),
                           "--per-replica-batch", str(per_replica_batch), "--json"],
                          capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode:
        raise CourseError(f"scaling run with {replicas} replicas failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)["results"][0]


def scaling_sweep(fast: bool, counts=(1, 2, 4, 8), per_replica_batch: int = 32) -> list[dict]:
    """samples/s at 1, 2, 4 (and 8 with 8 real GPUs) replicas, each in its own process."""
    import tensorflow as tf

    if isinstance(per_replica_batch, bool) or not isinstance(per_replica_batch, int) or per_replica_batch < 1:
        raise CourseError(f"scaling_sweep(per_replica_batch={per_replica_batch!r}): use a whole number >= 1.")
    gpus = len(tf.config.get_visible_devices("GPU"))
    wanted = [n for n in counts if n <= 4 or gpus >= n]
    points = (scaling_point(n, fast, gpus, per_replica_batch) for n in wanted)
    return [p for p in points if p is not None]


PER_REPLICA_BATCH = 32
POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")


@benchmark("mixed-precision")
def mixed_precision(fast: bool) -> Result:
    """float32 vs mixed_bfloat16 vs mixed_float16, each with and without XLA: steps/s and accuracy."""
    from helpers.data import load_reuters
    from helpers.plots import bars

    data = load_reuters()
    n = 2048 if fast else len(data.x_train)
    subset = data.head(n)
    batch = 64
    # Warm-up: the first training run in a process pays one-time costs that its first epoch does not absorb.
    train_with_policy("float32", False, subset, batch=batch, steps=8, epochs=2)
    runs = [train_with_policy(policy, xla, subset, batch=batch, steps=n // batch, epochs=3 if fast else 6,
                              learning_rate=1e-2) for policy in POLICIES for xla in (False, True)]
    base = runs[0]["steps_per_s"]
    rows = [[r["policy"], r["xla"], round(r["steps_per_s"], 2), round(r["steps_per_s"] / base, 2),
             round(r["val_accuracy"], 3)] for r in runs]
    fig = bars([f"{r[0].removeprefix('mixed_')}{' +XLA' if r[1] else ''}" for r in rows], [r[2] for r in rows],
               ylabel="training steps/s (steady)", title=f"Reuters Conv1D, batch {batch}, per dtype policy")
    return Result("mixed-precision", ["policy", "xla", "steps_per_s", "vs_float32", "val_accuracy"], rows, fig)


def train_with_policy(policy: str, jit_compile: bool, data, *, batch: int, steps: int, epochs: int,
                      learning_rate: float = 1e-3, seed: int = 0) -> dict:
    """Train the Reuters model under a dtype policy ("float32", "mixed_float16", "mixed_bfloat16"),
    with or without XLA; return steady steps/s (first epoch excluded) and validation accuracy."""
    import keras

    from helpers.data import make_dataset
    from helpers.models import matching_loss, reuters_conv1d
    from helpers.timing import EpochTimer

    keras.mixed_precision.set_dtype_policy(policy)
    try:
        keras.utils.set_random_seed(seed)
        model = reuters_conv1d(vocab_size=data.vocab_size, num_classes=data.num_classes)
        model.compile(optimizer=keras.optimizers.Nadam(learning_rate), loss=matching_loss(), metrics=["accuracy"],
                      jit_compile=jit_compile)  # compile() adds a LossScaleOptimizer for mixed_float16
        timer = EpochTimer(samples_per_epoch=steps * batch)
        train = make_dataset(data.x_train, data.y_train, batch, repeat=True)
        model.fit(train, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[timer])
        _, accuracy = model.evaluate(data.x_test, data.y_test, batch_size=256, verbose=0)
    finally:
        keras.mixed_precision.set_dtype_policy("float32")  # never leak a policy into later code
    return {"policy": policy, "xla": jit_compile, "steps_per_s": steps / timer.steady_seconds,
            "val_accuracy": float(accuracy), "first_epoch_s": timer.epoch_seconds[0],
            "optimizer": type(model.optimizer).__name__, "epoch_seconds": timer.epoch_seconds}


STEPS_PER_EXECUTION = (1, 8, 32)
# The TensorFlow TPU guide: steps_per_execution=50 "increases throughput by about 50%" (small MNIST model, TPU).
PUBLISHED_TPU_GAIN = {"published: TF TPU guide, MNIST on a TPU": ([50], [1.5])}


def fused_steps_per_second(build_model, steps_per_execution: int, dataset, *, strategy, steps: int,
                           epochs: int = 3) -> float:
    """Train a fresh model that runs `steps_per_execution` training steps per call into the device;
    return steady steps/s (the first epoch, with tracing, is left out)."""
    from helpers.models import matching_loss
    from helpers.timing import EpochTimer

    with strategy.scope():
        model = build_model()
        model.compile(optimizer="adam", loss=matching_loss(), steps_per_execution=steps_per_execution)
    timer = EpochTimer()
    model.fit(dataset, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[timer])
    return steps / timer.steady_seconds


def step_fusing_sweep(strategy, fast: bool, values=STEPS_PER_EXECUTION, per_replica_batch: int = 32,
                      warm_up: bool = True) -> dict:
    """Steady steps/s at each steps_per_execution, for a tiny model and (not in fast mode) the course model,
    under `strategy`.
    warm_up=False skips the warm-up run, for a process that has already trained a model."""
    from helpers.data import load_reuters, make_dataset
    from helpers.models import reuters_bag_of_words, reuters_conv1d

    data = load_reuters()
    dataset = make_dataset(data.x_train, data.y_train, per_replica_batch * strategy.num_replicas_in_sync,
                           repeat=True, drop_remainder=True)
    steps = 32 if fast else 320  # a multiple of every value: each epoch ends on a whole execution
    if warm_up:  # the first training run in a process pays one-time costs its own first epoch does not absorb
        fused_steps_per_second(reuters_bag_of_words, 1, dataset, strategy=strategy, steps=8, epochs=2)
    models = {"Conv1D (course model)": reuters_conv1d, "bag of words (tiny)": reuters_bag_of_words}
    if fast:  # the tiny model shows fusing best; fast mode leaves out the course model's 3 fits (half the time)
        del models["Conv1D (course model)"]
    epochs = 2 if fast else 4  # the first (tracing) epoch is left out: fast mode times one epoch per setting
    return {name: [fused_steps_per_second(build, n, dataset, strategy=strategy, steps=steps, epochs=epochs)
                   for n in values] for name, build in models.items()}


def fusing_gains(sweep: dict) -> dict:
    """{model: (steps_per_execution values, steps/s relative to the first value)}, plus the published TPU point."""
    return {**{name: (list(STEPS_PER_EXECUTION), [r / rates[0] for r in rates]) for name, rates in sweep.items()},
            **PUBLISHED_TPU_GAIN}


@benchmark("step-fusing")
def step_fusing(fast: bool) -> Result:
    """steps_per_execution 1, 8, 32 under the best strategy here: steady steps/s and the gain over 1."""
    from helpers.devices import choose_strategy
    from helpers.plots import lines

    strategy = choose_strategy(verbose=False)
    sweep = step_fusing_sweep(strategy, fast)
    rows = [[name, n, round(rate, 1), round(rate / rates[0], 2)]
            for name, rates in sweep.items() for n, rate in zip(STEPS_PER_EXECUTION, rates)]
    fig = lines(fusing_gains(sweep), logx=True, xlabel="steps_per_execution",
                ylabel="steps/s relative to steps_per_execution=1",
                title=f"Step fusing, {strategy.num_replicas_in_sync} replica(s), 32 examples per replica")
    return Result("step-fusing", ["model", "steps_per_execution", "steps_per_s", "vs_1"], rows, fig)


LATENCY_S = 0.002  # simulated per-file storage latency: a network disk or a cloud bucket


def pipeline_comparison(fast: bool, root=None) -> dict:
    """{latency in s: {variant: images/s}} over the course's image folder (generated when missing)."""
    from helpers.images import default_root, list_image_folder, make_image_folder
    from helpers.pipelines import pipeline_rates

    root = root or default_root()
    if not root.is_dir():
        make_image_folder(root)
    paths, labels, class_names = list_image_folder(root)
    return {latency: pipeline_rates(paths, labels, class_names, latency_s=latency, batches=20 if fast else 60)
            for latency in (0.0, LATENCY_S)}


def best_speedup(rates: dict) -> float:
    """The fastest tf.data variant's images/s over the Python generator's."""
    return max(v for k, v in rates.items() if k != "Python generator") / rates["Python generator"]


def pipeline_result(comparison: dict) -> Result:
    """The table, bar chart and summary ratios of a {latency: {variant: images/s}} comparison."""
    from helpers.plots import bars

    rows = [[f"{latency * 1000:g} ms", name, round(rate), round(rate / rates["Python generator"], 1)]
            for latency, rates in comparison.items() for name, rate in rates.items()]
    fig = bars([f"{r[1].replace(', ', chr(10))}{chr(10)}{r[0]}" for r in rows], [r[2] for r in rows],
               ylabel="images/s (log scale)", log=True, title="Reading and decoding image files, no model attached")
    extra = {"speedup_no_latency": round(best_speedup(comparison[0.0]), 2),
             "speedup_with_latency": round(best_speedup(comparison[LATENCY_S]), 2)}
    return Result("pipeline", ["latency", "variant", "images_per_s", "vs_generator"], rows, fig, extra)


@benchmark("pipeline")
def pipeline(fast: bool) -> Result:
    """Images/s of a Python generator vs tf.data variants, with and without 2 ms simulated latency per file."""
    return pipeline_result(pipeline_comparison(fast))


def multiworker_timing(steps: int, out: str) -> dict:
    """Run the two-worker job of chapter 6 on 127.0.0.1: seconds until both workers joined the cluster
    (process start, TensorFlow import, gRPC handshake) and steady steps/s (after the first, traced, step)."""
    import time

    from helpers.cluster import run_local_workers

    start, stamps = time.monotonic(), {}

    def echo(index, line):
        now = time.monotonic()
        if line.endswith("connected"):
            stamps["connected"] = max(stamps.get("connected", 0.0), now)  # the later of the two workers
        elif line.startswith("step 1 "):
            stamps.setdefault("first", now)
        elif line.startswith(f"step {steps} "):
            stamps["last"] = now

    run_local_workers(2, "helpers.multiworker", "--out", out, "--steps", steps, echo=echo)
    return {"workers": 2, "startup_s": stamps["connected"] - start,
            "steps_per_s": (steps - 1) / (stamps["last"] - stamps["first"])}


@benchmark("multiworker")
def multiworker(fast: bool) -> Result:
    """Two MultiWorkerMirroredStrategy workers on 127.0.0.1: cluster start-up time and steps/s."""
    import tempfile

    from helpers.plots import bars

    with tempfile.TemporaryDirectory() as out:
        timing = multiworker_timing(20 if fast else 200, out)
    rows = [[timing["workers"], round(timing["startup_s"], 2), round(timing["steps_per_s"], 1)]]
    fig = bars(["start-up (s)", "steps/s"], [timing["startup_s"], timing["steps_per_s"]], ylabel="value",
               title="Two workers on 127.0.0.1, synchronous custom loop")
    return Result("multiworker", ["workers", "startup_s", "steps_per_s"], rows, fig)


@benchmark("scaling")
def scaling(fast: bool) -> Result:
    """The Reuters model at a fixed per-replica batch on 1, 2, 4 (8) replicas: throughput and speed-up."""
    from helpers.plots import bars

    points = scaling_sweep(fast)
    base = points[0]["samples_per_s"]
    rows = [[p["replicas"], p["global_batch"], round(p["steps_per_s"], 2), round(p["samples_per_s"]),
             round(p["samples_per_s"] / base, 2)] for p in points]
    fig = bars([f"{r[0]} replica(s)" for r in rows], [r[3] for r in rows], ylabel="samples/s (steady)",
               title=f"Reuters Conv1D, {PER_REPLICA_BATCH} examples per replica per step")
    return Result("scaling", ["replicas", "global_batch", "steps_per_s", "samples_per_s", "speedup"], rows, fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.bench", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="one of: " + ", ".join(sorted(BENCHMARKS)))
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--png", help="where to write the plot (default build/bench/NAME.png)")
    parser.add_argument("--replicas", type=int, help="scaling only: measure just this many replicas, in this process")
    parser.add_argument("--per-replica-batch", type=int, default=PER_REPLICA_BATCH,
                        help="scaling only: examples per replica per step (default %(default)s)")
    args = parser.parse_args(argv)
    if args.name not in BENCHMARKS:
        parser.error(f"unknown benchmark {args.name!r}; choose one of: {', '.join(sorted(BENCHMARKS))}")
    if args.replicas is not None and args.name != "scaling":
        parser.error("--replicas goes with the scaling benchmark only")
    import helpers

    try:
        course = helpers.setup(devices=args.replicas, verbose=False)
        if args.replicas is not None:  # one point of the sweep, run by scaling_point in a fresh process
            point = replica_throughput(args.per_replica_batch, *((12, 2) if course.fast else (60, 4)))
            print(json.dumps({"benchmark": "scaling", "results": [point], "fast": course.fast}))
            return 0
        result = BENCHMARKS[args.name](course.fast)
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    png = args.png or os.path.join("build", "bench", f"{args.name}.png")
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    result.figure.savefig(png, dpi=100)
    if args.json:
        print(json.dumps({**result.as_json(png), "fast": course.fast}))
    else:
        print(result.table())
        print(f"plot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
