"""printbar, a timer that measures properly, and a Keras callback for per-epoch time."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime

import keras
import tensorflow as tf

from helpers.course import CourseError, whole_number


def printbar(label: str = "") -> None:
    """The seeds' separator line, with this machine's local time to the millisecond.

    The seeds built it inside @tf.function with a fixed UTC+8 offset and whole seconds; plain
    Python gets the time zone right and needs no graph.
    """
    now = datetime.now().astimezone()
    stamp = now.strftime("%H:%M:%S.") + f"{now.microsecond // 1000:03d} {now.strftime('%Z')}"
    print("=" * 80 + stamp + (f"  {label}" if label else ""))


def force(result):
    """Wait for every tensor in `result` to be computed (TF runs ops asynchronously on GPUs)."""
    return tf.nest.map_structure(lambda t: t.numpy() if hasattr(t, "numpy") else t, result)


@dataclass
class Timing:
    """Repeated wall-clock times of one piece of work, in seconds."""

    name: str
    times: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def min(self) -> float:
        return min(self.times)

    @property
    def max(self) -> float:
        return max(self.times)

    def __str__(self) -> str:
        return (
            f"{self.name}: median {_fmt(self.median)} (min {_fmt(self.min)}, max {_fmt(self.max)}, "
            f"{len(self.times)} runs)"
        )


def _fmt(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def measure(fn, *, warmup: int = 1, repeats: int = 5, name: str | None = None) -> Timing:
    """Time `fn()` properly: `warmup` untimed calls (tracing, device start-up), then `repeats`
    timed calls, each forced to finish with `.numpy()`. Report the median, not one lucky run."""
    if not callable(fn):
        raise CourseError(f"measure(): expected a function to call, got {type(fn).__name__}. "
                          "Wrap the work in a function or lambda: measure(lambda: a @ b).")
    whole_number("measure(warmup=", warmup, 0)
    whole_number("measure(repeats=", repeats, 1)
    timing = Timing(name or getattr(fn, "__name__", "work"))
    for _ in range(warmup):
        force(fn())
    for _ in range(repeats):
        start = time.perf_counter()
        force(fn())
        timing.times.append(time.perf_counter() - start)
    return timing


def examples_per_second(dataset, *, batches: int, warmup: int = 2) -> float:
    """How fast a tf.data pipeline delivers examples on its own, with no model attached: run
    `warmup` batches untimed (start-up, the first pass of a cache), then time `batches` more."""
    whole_number("examples_per_second(batches=", batches, 1)
    whole_number("examples_per_second(warmup=", warmup, 0)
    iterator = iter(dataset)
    try:
        for _ in range(warmup):
            next(iterator)
        examples, start = 0, time.perf_counter()
        for _ in range(batches):
            features = next(iterator)
            examples += int(tf.shape(tf.nest.flatten(features)[0])[0])
    except StopIteration:
        raise CourseError(f"examples_per_second(): the dataset ran out before {warmup} + {batches} batches; "
                          "add .repeat() or ask for fewer batches.") from None
    return examples / (time.perf_counter() - start)


class EpochTimer(keras.callbacks.Callback):
    """Records each epoch's wall time and throughput during `fit`.

    The first epoch includes tracing/compilation, so `steady_seconds` is the median of the others.
    """

    def __init__(self, samples_per_epoch: int | None = None):
        super().__init__()
        if samples_per_epoch is not None:
            whole_number("EpochTimer(samples_per_epoch=", samples_per_epoch, 1)
        self.samples_per_epoch = samples_per_epoch
        self.epoch_seconds: list[float] = []
        self.epoch_steps: list[int] = []

    def on_epoch_begin(self, epoch, logs=None):
        self._steps = 0
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self._steps = batch + 1  # with steps_per_execution > 1 Keras reports only every n-th step

    def on_epoch_end(self, epoch, logs=None):
        self.epoch_seconds.append(time.perf_counter() - self._start)
        self.epoch_steps.append(self._steps)

    @property
    def steady_seconds(self) -> float:
        """Median epoch time without the first epoch (or the only one, if there is just one)."""
        if not self.epoch_seconds:
            raise CourseError("EpochTimer: no epoch has finished yet; pass it to fit(callbacks=[...]).")
        rest = self.epoch_seconds[1:] or self.epoch_seconds
        return statistics.median(rest)

    @property
    def samples_per_second(self) -> float | None:
        if self.samples_per_epoch is None:
            return None
        return self.samples_per_epoch / self.steady_seconds

    def __str__(self) -> str:
        text = f"epochs: {', '.join(_fmt(s) for s in self.epoch_seconds)}; steady {_fmt(self.steady_seconds)}"
        if self.samples_per_second is not None:
            text += f", {self.samples_per_second:,.0f} samples/s"
        return text
