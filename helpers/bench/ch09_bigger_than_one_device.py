"""Chapter 9: past one device's memory. Finding the largest batch that fits, by trying, against a simulated device
whose memory is counted from the model and its optimizer (TensorFlow or JAX backend; TensorFlow is not needed, so
the chapter also runs where only JAX is installed, as on Colab's TPU runtime)."""

from __future__ import annotations

import math

from helpers.errors import CourseError, whole_number
from helpers.quiet import import_tensorflow_for_keras_quietly

import_tensorflow_for_keras_quietly()  # the notebook imports this module after Keras, before its first seed


class ResourceExhaustedError(RuntimeError):
    """A simulated out-of-memory error, named like TensorFlow's (a CPU has no small memory to run out of)."""


BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "int32": 4, "int64": 8}


def _nbytes(variable) -> int:
    return math.prod(variable.shape) * BYTES.get(str(variable.dtype).split(".")[-1], 4)


def fixed_bytes(model) -> dict[str, int]:
    """The bytes a training step holds whatever the batch, by kind: the weights, one gradient per trainable weight,
    and the optimizer's variables (Adam: two moments per trainable weight; with `gradient_accumulation_steps`, one
    accumulator per trainable weight too), read from the optimizer itself (built here if it was not yet)."""
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        raise CourseError(f"fixed_bytes({model.name}): compile the model first: its optimizer's variables are part "
                          "of the memory a training step needs.")
    if not optimizer.built:
        optimizer.build(model.trainable_variables)  # what fit() does before its first step
    return {"weights": sum(_nbytes(w) for w in model.weights),
            "gradients": sum(_nbytes(w) for w in model.trainable_weights),
            "optimizer": sum(_nbytes(v) for v in optimizer.variables)}


def activation_bytes_per_example(model) -> int:
    """Bytes of float32 layer outputs one example creates in a training step, kept for the backward pass (a rough
    estimate: layer outputs only, counted twice for their gradients)."""
    numbers = sum(math.prod(d for d in layer.output.shape[1:] if d) for layer in model.layers)
    return 2 * 4 * numbers


def needed_mb(model, batch: int) -> float:
    """The simulated memory one training step at `batch` needs, in MB: fixed_bytes(model) + batch x the layer
    outputs of one example."""
    whole_number("needed_mb(batch=", batch)
    return (sum(fixed_bytes(model).values()) + batch * activation_bytes_per_example(model)) / 1e6


MOST_TRIES = 10_000  # far more than any search needs (one size at a time from 8 to 4096 is about 4,000)


def simulated_memory(fixed: float, per_example: float, memory_mb: float, step=None):
    """A `try_batch(batch)` for largest_batch(): a device of `memory_mb` MB where a step needs `fixed` bytes plus
    `per_example` bytes per example. It raises ResourceExhaustedError when that exceeds the memory, and otherwise
    runs `step(batch)` (when given) for real. Past MOST_TRIES tries it raises a CourseError: a search that does
    not end gets an error, not a hang."""
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, (int, float)) or not memory_mb > 0:
        raise CourseError(f"simulated_device(memory_mb={memory_mb!r}): give the pretend memory in MB, > 0.")
    tries = []

    def try_batch(batch):
        tries.append(batch)
        if len(tries) > MOST_TRIES:
            raise CourseError(f"try_batch: {MOST_TRIES:,} tries on this simulated device (the last: {tries[-3:]}): "
                              "the search does not end. Stop when the size that fits and the one that does not are "
                              "neighbours, and when not even start fits.")
        whole_number("try_batch(", batch)
        needed = (fixed + batch * per_example) / 1e6
        if needed > memory_mb:
            raise ResourceExhaustedError(f"OOM when allocating tensors for batch {batch}: {needed:.1f} MB needed, "
                                         f"{memory_mb:g} MB on this (simulated) device")
        if step is not None:
            step(batch)

    return try_batch


def simulated_device(model, step, memory_mb: float):
    """A `try_batch(batch)` for largest_batch() on a simulated device of `memory_mb` MB: it raises
    ResourceExhaustedError when the weights, their gradients and the optimizer's variables (fixed_bytes) plus the
    batch's layer outputs need more, and otherwise runs `step(batch)` (None: none)."""
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, (int, float)) or not memory_mb > 0:
        raise CourseError(f"simulated_device(memory_mb={memory_mb!r}): give the pretend memory in MB, > 0.")
    return simulated_memory(sum(fixed_bytes(model).values()), activation_bytes_per_example(model), memory_mb, step)
