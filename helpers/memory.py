"""A simulated device memory for chapter 9 and its exercises: a CPU has no small memory to run out of, so a pretend
device of a few MB raises an out-of-memory error of its own. Needs no TensorFlow (Colab's TPU runtime has none)."""

from __future__ import annotations

from helpers.errors import CourseError, whole_number
from helpers.quiet import import_tensorflow_for_keras_quietly

# Chapter 9 imports this module after Keras and before its first seed, which imports TensorFlow where it is
# installed: import it now, without its start-up lines.
import_tensorflow_for_keras_quietly()

MOST_TRIES = 10_000  # far more than any search needs (one size at a time from 8 to 4096 is about 4,000)


class ResourceExhaustedError(RuntimeError):
    """A simulated out-of-memory error, named like TensorFlow's."""


def simulated_memory(fixed: float, per_example: float, memory_mb: float, step=None):
    """A `try_batch(batch)` for a largest-batch search: a device of `memory_mb` MB where a step needs `fixed` bytes
    plus `per_example` bytes per example. It raises ResourceExhaustedError when that exceeds the memory, and otherwise
    runs `step(batch)` (when given) for real. Past MOST_TRIES tries it raises a CourseError: a search that does not
    end gets an error, not a hang."""
    if isinstance(memory_mb, bool) or not isinstance(memory_mb, (int, float)) or not memory_mb > 0:
        raise CourseError(f"simulated device (memory_mb={memory_mb!r}): give the pretend memory in MB, > 0.")
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
