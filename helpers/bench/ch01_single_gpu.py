"""Chapter 1's measurements: one matmul and one training epoch on every device present (`python -m helpers.bench
matmul`, `... epoch-time`), built on the chapter's exported cells."""

from __future__ import annotations

import tensorflow as tf

from helpers.chapters.ch01_single_gpu import first_epoch_on, matmul_on, measure, one_epoch
from helpers.data import load_reuters, make_dataset
from helpers.plots import bars
from helpers.results import Result


def accelerators() -> list[str]:
    """The CPU plus every physical GPU present (not each logical slice of one), for tf.device."""
    return ["/CPU:0"] + [f"/GPU:{i}" for i in range(len(tf.config.get_visible_devices("GPU")))]


def matmul(fast: bool) -> Result:
    """(10000x100) @ (100x100000) on every device ((10000x100) @ (100x10000) in fast mode), median of repeats."""
    rows, inner, cols = 10_000, 100, 10_000 if fast else 100_000
    table = []
    for device in accelerators():
        run, _cold, total = matmul_on(device, rows, inner, cols)  # the cold call is its warm-up
        timing = measure(run, warmup=0, repeats=3 if fast else 5, name=device)
        gflops = 2 * rows * inner * cols / timing.median / 1e9
        table.append([device, timing.median, timing.min, timing.max, round(gflops, 1), f"{total:.4e}"])
    fig = bars([r[0] for r in table], [r[1] for r in table], ylabel="seconds (median)",
               errors=([r[2] for r in table], [r[3] for r in table]),
               title=f"({rows}x{inner}) @ ({inner}x{cols}) per device")
    return Result("matmul", ["device", "median_s", "min_s", "max_s", "gflops", "sum"], table, fig)


def epoch_time(fast: bool) -> Result:
    """The Reuters Conv1D model: first and steady epoch time and samples/s on each device present."""
    data = load_reuters()
    batch, steps = 32, (40 if fast else len(data.x_train) // 32)
    ds = make_dataset(data.x_train, data.y_train, batch, repeat=True)
    rows = []
    for device in accelerators():
        model, first = first_epoch_on(device, ds, steps)
        timing = measure(one_epoch(device, model, ds, steps), warmup=0, repeats=2 if fast else 3)
        rows.append([device, timing.median, round(steps * batch / timing.median), first])
    fig = bars([r[0] for r in rows], [r[2] for r in rows], ylabel="samples/s",
               title=f"Reuters Conv1D, batch {batch}, {steps} steps/epoch")
    return Result("epoch-time", ["device", "steady_epoch_s", "samples_per_s", "first_epoch_s"], rows, fig)
