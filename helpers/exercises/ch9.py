"""Chapter 9's exercises (bigger than one device): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import math

from helpers.exercises.registry import exercise, number_hint


@exercise("ch9.effective_batch")
def _effective_batch(answer):
    # 16 examples per device per step, 4 steps accumulated, 2 devices: one update sees 16 * 4 * 2 examples.
    return number_hint(answer, 128, {64: "each update also averages over both devices: multiply by the number of "
                                         "devices too."},
                       "one update sees per-device batch x accumulation steps x devices examples.")


# Simulated devices on which a batch of up to `fits` examples fits (None: not even `start`), searched from 8 to 4096.
# Not powers of two, so that the doubling search alone is wrong; 8 and 4096 are the edges.
EXACT_CASES = (100, 777, 191, 8, 4095, 4096, 10**6, None)


# More tries than any search from 8 to 4096 needs, short of trying every size: past it, the search is stopped.
MOST_TRIES = 200


class _TooManyTries(BaseException):
    """Stops a search that does not end; a BaseException, so that a search's `except Exception` cannot swallow it."""


def _trial(search, fits, start=8, limit=4096):
    """Run the learner's search on a simulated device that fits up to `fits` examples; return (answer, tries).
    Raises _TooManyTries past MOST_TRIES tries (an endless loop would hang the check)."""
    from helpers.memory import simulated_memory

    per_example = 1e6  # 1 MB per example and 0.5 MB fixed: `fits` examples need fits + 0.5 MB, one more does not fit
    memory_mb = 0.1 if fits is None else fits + 0.75
    device = simulated_memory(0.5e6, per_example, memory_mb)
    tried = []

    def try_batch(batch):
        tried.append(batch)
        if len(tried) > MOST_TRIES:
            raise _TooManyTries(tried[-3:])
        device(batch)

    return search(try_batch, start, limit), tried


def _oom_escaped(err) -> str:
    # C9-X2: a search that catches only its backend's class (JaxRuntimeError, tf.errors.ResourceExhaustedError)
    # lets the simulated device's own out-of-memory error through.
    return (f"the simulated device's out-of-memory error ({type(err).__name__}: {err}) escaped the search: catch "
            "Exception and test it with is_out_of_memory(err), which knows TensorFlow's, JAX's, Python's and the "
            "simulated device's out-of-memory errors, instead of naming one class.")


@exercise("ch9.exact_largest_batch")
def _exact_largest_batch(answer):
    # Measured: the learner's search runs against simulated devices of several sizes, each try counted.
    if not callable(answer):
        return "pass your function itself, without calling it: exact_largest_batch, not exact_largest_batch(...)."
    # Doubling from 8 to 4096 tries 10 sizes, halving the gap it leaves (up to 2048) 11 more; 2 spare.
    most = math.ceil(math.log2(4096 / 8)) + 1 + math.ceil(math.log2(4096 / 2)) + 2
    from helpers.memory import ResourceExhaustedError

    for fits in EXACT_CASES:
        try:
            found, tried = _trial(answer, fits)
        except ResourceExhaustedError as err:
            return _oom_escaped(err)
        except _TooManyTries as stopped:
            where = "where not even the start (8) fits" if fits is None else f"where batches of up to {fits} fit"
            return (f"stopped after {MOST_TRIES} tries on a simulated device {where} (the last: "
                    f"{', '.join(map(str, stopped.args[0]))}): the search does not end. Stop when the size that "
                    "fits and the one that does not are neighbours (high - low == 1), and when not even start fits.")
        right = None if fits is None else min(fits, 4096)
        outside = [b for b in tried if not 8 <= b <= 4096]
        if outside:
            return (f"it tried a batch of {outside[0]}, outside start..limit (8..4096): search only sizes from start "
                    "to limit.")
        if found != right:
            where = ("where not even the start (8) fits" if fits is None
                     else f"where batches of up to {fits} fit" if fits <= 4096 else "where every batch up to 4096 fits")
            if found is not None and right is not None and found < right and found & (found - 1) == 0:
                return (f"on a simulated device {where}, it returned {found}: the doubling stops at a power of two. "
                        f"Search between the last size that fitted and the first that did not, halving the gap.")
            return f"on a simulated device {where}, it returned {found!r}; the largest batch that fits is {right!r}."
        # (C9-X1, accepted on purpose: a search that reads the answer out of try_batch.__closure__ passes. The check
        # runs in the learner's kernel and cannot hide its own state; tests/exercises/test_exercises_ch9.py records it.)
        if len(tried) > most:
            return (f"right answer, but it tried {len(tried)} sizes on a device where batches of up to {fits} fit; "
                    f"on a GPU each try is a training step (and a new compilation): halving the gap needs at most "
                    f"{most}.")
    # Only out-of-memory means "too big": another error (a shape mistake) must reach the learner. Here it comes from
    # the sizes between the doublings, which only the halving tries; 128 and up run out of memory.

    def broken(batch):
        if batch > 64 and batch & (batch - 1):
            raise ValueError("a shape mistake, not memory")
        if batch > 100:
            raise ResourceExhaustedError(f"OOM when allocating tensors for batch {batch}")

    try:
        found = answer(broken, 8, 4096)
    except ValueError:
        return None
    except ResourceExhaustedError as err:
        return _oom_escaped(err)
    return (f"a step that failed with a ValueError (not out of memory) was taken for 'too big' (it returned "
            f"{found!r}): catch only out-of-memory errors (is_out_of_memory) and raise the others.")


@exercise("ch9.kernel_on_model_axis")
def _kernel_on_model_axis(answer):
    # Measured: the learner's model, built under their ModelParallel layout; its kernel's sharding is read back.
    import keras

    if not isinstance(answer, keras.Model):
        return "pass the model you built after set_distribution(ModelParallel(...))."
    dense = [(layer.name, tuple(getattr(getattr(layer, "kernel", None), "shape", ())))
             for layer in answer.layers if isinstance(layer, keras.layers.Dense)]
    if dense != [("hidden", (64, 256)), ("output", (256, 46))]:  # another model (section 4's) may be split already
        return ("pass the model small that the exercise cell builds (Dense 'hidden', 64 x 256, then Dense 'output', "
                "256 x 46), not another model.")
    kernel = answer.get_layer("output").kernel
    sharding = getattr(kernel.value, "sharding", None)
    if sharding is not None and len(sharding.device_set) == 1:
        # One device: JAX keeps every weight whole whatever the layout says, so a split cannot be read back.
        return ("the mesh has one device, so no weight can be split and the check cannot see your layout: "
                "set DEVICES = 2 or another even number in the parameters cell (or leave it None: 4 CPU "
                "devices), restart the runtime and run all again.")
    axes = dict(getattr(getattr(sharding, "mesh", None), "shape", {}) or {})
    if axes.get("model") == 1:
        # An odd device count gives a model axis of one device (section 4's MODEL_AXIS): nothing can be split.
        return ("the mesh's model axis has one device (an odd number of devices), so no weight can be split and the "
                "check cannot see your layout: set DEVICES = 2 or another even number in the parameters cell (or "
                "leave it None: 4 CPU devices), restart the runtime and run all again.")
    spec = tuple(getattr(sharding, "spec", ()) or ())
    spec = spec + (None,) * (2 - len(spec))
    if spec == (None, "model"):
        return None
    if spec == ("model", None):
        return ("the kernel is split along its rows (the inputs); the goal is its columns (the outputs): "
                "(None, 'model').")
    return (f"the last Dense kernel ({kernel.path}) is laid out as {spec}: add a LayoutMap entry whose key (a regular "
            "expression such as '.*name/kernel') matches its path, with the layout (None, 'model'); build the model "
            "after set_distribution.")
