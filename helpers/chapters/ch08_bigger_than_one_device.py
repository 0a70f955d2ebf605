"""Chapter 8: past one device's memory. Finding the largest batch that fits, by trying (TensorFlow or JAX backend; no
TensorFlow import here, so the chapter also runs where only JAX is installed, as on Colab's TPU runtime)."""

from __future__ import annotations

import math

from helpers.course import CourseError, whole_number


# notebook cell: largest_batch
def is_out_of_memory(err: BaseException) -> bool:
    """TensorFlow raises tf.errors.ResourceExhaustedError ("OOM when allocating tensor ..."); JAX raises a
    JaxRuntimeError whose message starts with RESOURCE_EXHAUSTED; Python's own is MemoryError."""
    return (type(err).__name__ == "ResourceExhaustedError" or "RESOURCE_EXHAUSTED" in str(err)
            or isinstance(err, MemoryError))


def largest_batch(try_batch, start=8, limit=4096):
    """The largest of start, 2*start, 4*start, ... up to `limit` for which `try_batch(batch)` (one training step at
    that batch size) runs without running out of memory; None when even `start` does not fit. Any other error is
    raised as it is: only out-of-memory means "too big"."""
    fits, batch = None, start
    while batch <= limit:
        try:
            try_batch(batch)
        except Exception as err:
            if not is_out_of_memory(err):
                raise
            break  # memory is freed when the failed step's tensors go; in TensorFlow, keras.backend.clear_session()
        fits, batch = batch, batch * 2
    return fits
# end of notebook cell


class ResourceExhaustedError(RuntimeError):
    """A simulated out-of-memory error, named like TensorFlow's (a CPU has no small memory to run out of)."""


def activation_bytes_per_example(model) -> int:
    """Bytes of float32 layer outputs one example creates in a training step, kept for the backward pass (a rough
    estimate: layer outputs only, counted twice for their gradients)."""
    numbers = sum(math.prod(d for d in layer.output.shape[1:] if d) for layer in model.layers)
    return 2 * 4 * numbers


def simulated_device(model, step, memory_mb: float):
    """A `try_batch(batch)` for largest_batch(): it raises ResourceExhaustedError when the weights, their gradients
    and the optimizer's two slots (4 copies) plus the batch's activations need more than `memory_mb`, and otherwise
    runs `step(batch)` for real."""
    if not memory_mb > 0:
        raise CourseError(f"simulated_device(memory_mb={memory_mb!r}): give the pretend memory in MB, > 0.")
    fixed = 4 * 4 * model.count_params()
    per_example = activation_bytes_per_example(model)

    def try_batch(batch):
        whole_number("try_batch(", batch)
        needed_mb = (fixed + batch * per_example) / 1e6
        if needed_mb > memory_mb:
            raise ResourceExhaustedError(f"OOM when allocating tensors for batch {batch}: {needed_mb:.1f} MB needed, "
                                         f"{memory_mb:g} MB on this (simulated) device")
        step(batch)

    return try_batch
