"""Chapter 8's exercises (bigger than one device): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import exercise


@exercise("ch8.effective_batch")
def _effective_batch(answer):
    # 16 examples per device per step, 4 steps accumulated, 2 devices: one update sees 16 * 4 * 2 examples.
    if answer == 128:
        return None
    if answer == 64:
        return "each update also averages over both devices: multiply by the number of devices too."
    return "one update sees per-device batch x accumulation steps x devices examples."


@exercise("ch8.kernel_on_model_axis")
def _kernel_on_model_axis(answer):
    # Measured: the learner's model, built under their ModelParallel layout; its kernel's sharding is read back.
    import keras

    if not isinstance(answer, keras.Model):
        return "pass the model you built after set_distribution(ModelParallel(...))."
    dense = [layer for layer in answer.layers if isinstance(layer, keras.layers.Dense)]
    if not dense:
        return "the model has no Dense layer to shard."
    kernel = dense[-1].kernel
    sharding = getattr(kernel.value, "sharding", None)
    if sharding is not None and len(sharding.device_set) == 1:
        # One device: JAX keeps every weight whole whatever the layout says, so a split cannot be read back.
        return ("this runtime has one device, so no weight can be split and the check cannot see your layout. On a "
                "CPU runtime set DEVICES = 2 in the parameters cell, restart the runtime and run the notebook again.")
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
