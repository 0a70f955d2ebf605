"""Per-epoch time in `fit` (a Keras callback) and the course's way of writing a duration. Chapter 1 writes printbar
and measure (helpers/chapters/ch01_single_gpu.py)."""

from __future__ import annotations

import itertools
import statistics
import time

import keras

from helpers.errors import CourseError, whole_number


def format_seconds(seconds: float) -> str:
    """A duration as people read it: milliseconds under a second, seconds from one on."""
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


class EpochTimer(keras.callbacks.Callback):
    """Records each epoch's wall time and training throughput during `fit`.

    The first epoch includes tracing/compilation, so `steady_seconds` is the median of the others. With
    `validation_data`, Keras validates inside each epoch (before `on_epoch_end`): `validation_seconds` records that
    part, and `samples_per_second` counts training time only.
    """

    def __init__(self, samples_per_epoch: int | None = None):
        super().__init__()
        if samples_per_epoch is not None:
            whole_number("EpochTimer(samples_per_epoch=", samples_per_epoch, 1)
        self.samples_per_epoch = samples_per_epoch
        self.epoch_seconds: list[float] = []
        self.validation_seconds: list[float] = []
        self.epoch_steps: list[int] = []
        self._in_epoch, self._validation_start = False, None

    def on_epoch_begin(self, epoch, logs=None):
        self._steps = 0
        self._in_epoch, self._validation_start = True, None
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self._steps = batch + 1  # with steps_per_execution > 1 Keras reports only every n-th step

    def on_test_begin(self, logs=None):
        if self._in_epoch and self._validation_start is None:  # fit's validation, not a separate evaluate()
            self._validation_start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        end = time.perf_counter()
        self.epoch_seconds.append(end - self._start)
        self.validation_seconds.append(end - self._validation_start if self._validation_start else 0.0)
        self.epoch_steps.append(self._steps)
        self._in_epoch = False

    @property
    def train_seconds(self) -> list[float]:
        """Each epoch's time without its validation pass."""
        return [total - validation for total, validation in
                itertools.zip_longest(self.epoch_seconds, self.validation_seconds[:len(self.epoch_seconds)],
                                      fillvalue=0.0)]

    @staticmethod
    def _steady(seconds: list[float]) -> float:
        if not seconds:
            raise CourseError("EpochTimer: no epoch has finished yet; pass it to fit(callbacks=[...]).")
        return statistics.median(seconds[1:] or seconds)

    @property
    def steady_seconds(self) -> float:
        """Median epoch time without the first epoch (or the only one, if there is just one)."""
        return self._steady(self.epoch_seconds)

    @property
    def steady_train_seconds(self) -> float:
        """The same median, of the epochs' training parts only (without validation)."""
        return self._steady(self.train_seconds)

    @property
    def samples_per_second(self) -> float | None:
        """Training throughput: samples_per_epoch / steady_train_seconds (validation not counted)."""
        if self.samples_per_epoch is None:
            return None
        return self.samples_per_epoch / self.steady_train_seconds

    def __str__(self) -> str:
        epochs = ", ".join(format_seconds(s) for s in self.epoch_seconds)
        text = f"epochs: {epochs}; steady {format_seconds(self.steady_seconds)}"
        validated = any(self.validation_seconds)
        if validated:
            text += f", of which training {format_seconds(self.steady_train_seconds)} (the rest is validation)"
        if self.samples_per_second is not None:
            text += f", {self.samples_per_second:,.0f} {'training ' if validated else ''}samples/s"
        return text
