"""Chapter 0's measurements: one matmul and one training epoch on every device present (`python -m helpers.bench
matmul`, `... epoch-time`)."""

from __future__ import annotations

import tensorflow as tf

from helpers.chapters.ch01_single_gpu import measure, reuters_conv1d
from helpers.data import load_reuters, make_dataset
from helpers.models import matching_loss
from helpers.plots import bars
from helpers.results import Result
from helpers.timing import EpochTimer


def accelerators() -> list[str]:
    """The CPU plus every physical GPU present (not each logical slice of one), for tf.device."""
    return ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(tf.config.get_visible_devices("GPU")))]


def matmul(fast: bool) -> Result:
    """(10000x100) @ (100x100000) on every device ((10000x100) @ (100x10000) in fast mode), median of repeats."""
    n = 10_000 if fast else 100_000

    def on(device):
        with tf.device(device):
            tf.random.set_seed(0)
            a = tf.random.uniform((10_000, 100), minval=0, maxval=3.0)
            b = tf.random.uniform((100, n), minval=0, maxval=3.0)
            timing = measure(lambda: tf.reduce_sum(a @ b), repeats=3 if fast else 5, name=device)
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


def epoch_time(fast: bool) -> Result:
    """The Reuters Conv1D model: steady epoch time and samples/s on each device present."""
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
