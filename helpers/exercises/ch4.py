"""Chapter 4's exercises (mixed precision): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import keras

from helpers.exercises.registry import exercise


@exercise("ch4.survivors")
def _survivors(answer):
    names = {answer} if isinstance(answer, str) else set(answer)
    if names == {"bfloat16", "float32"}:
        return None
    if "float16" in names:
        return ("float16's smallest value is about 6e-8 (2^-24, a subnormal), and anything below half of it rounds to "
                "0: 1e-9 underflows (try np.float16(1e-9)).")
    return "check the exponent range, not the resolution: ml_dtypes.finfo(dtype).tiny for each."


@exercise("ch4.loss_scaling")
def _loss_scaling(answer):
    # Measured: one step of the learner's train_step(model, optimizer, tiny_loss, x, y) under mixed_float16, on a
    # loss the check supplies (about 1e-7: the learner cannot make it larger), against the same step computed
    # exactly in float32. Unscaled, the float16 gradients underflow and the first layer does not move; a loss the
    # learner changed, or scaled without unscaling, moves it by the wrong amount.
    import numpy as np
    import tensorflow as tf

    if not callable(answer):
        return "pass the function train_step itself (without calling it)."
    learning_rate = 1e4  # plain SGD, so that one step moves each weight by -learning_rate * its gradient
    # Not Keras's default initial scale (2^15, which the solution names): a step that multiplies by a fixed 2^15
    # instead of asking the optimizer for its current scale is off by 2^(15-12) = 8x here, as it would be in training
    # once the dynamic scale has moved.
    initial_scale = 2.0**12

    def tiny_loss(y_true, y_pred):
        return tf.reduce_mean(tf.square(tf.cast(y_pred, "float32") - y_true)) * 1e-7

    def model_under(policy):
        keras.utils.set_random_seed(0)
        return keras.Sequential([keras.Input((8,)), keras.layers.Dense(8, dtype=policy),
                                 keras.layers.Dense(1, dtype="float32")])

    x, y = tf.random.stateless_normal((32, 8), seed=(1, 2)), tf.zeros((32, 1))
    model = model_under("mixed_float16")  # the layer's own policy: the global one stays as it is
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(learning_rate), initial_scale=initial_scale)
    before = [v.numpy().copy() for v in model.trainable_variables]
    in_float16 = [layer for layer in model.layers if layer.compute_dtype == "float16"]
    computed = _record_output_dtypes(in_float16)  # read inside the step: a policy switched and restored shows
    answer(model, optimizer, tiny_loss, x, y)
    changed = [layer.name for layer in in_float16
               if layer.dtype_policy.name != "mixed_float16" or layer.compute_dtype != "float16"
               or any(dtype != "float16" for dtype in computed[layer.name])]
    if changed:  # in float32 the gradients no longer underflow: no loss scaling needed, none learned
        return (f"keep the model in mixed_float16 ({changed[0]} computed in float32 during the step): scale the loss "
                "instead of changing the dtype.")
    moved = model.layers[0].kernel.numpy() - before[0]
    exact = model_under("float32")
    exact.set_weights(before)
    with tf.GradientTape() as tape:
        loss = tiny_loss(y, exact(x))
    expected = -learning_rate * tape.gradient(loss, exact.layers[0].kernel).numpy()
    if not np.all(np.isfinite(moved)):
        return "the weights became NaN or inf: scale the loss for the gradient only, and let apply_gradients unscale."
    if not np.any(moved):
        return ("the first layer's weights did not move: its float16 gradients underflowed to zero. Compute the "
                "gradients of optimizer.scale_loss(loss) instead of loss (apply_gradients unscales them).")
    error = float(np.linalg.norm(moved - expected) / np.linalg.norm(expected))
    if error <= 0.05:
        return None
    return (f"the first layer moved {np.linalg.norm(moved) / np.linalg.norm(expected):.3g}x as far as one step on "
            f"the loss tiny_loss gives should move it ({error:.0%} off). Train on that loss unchanged, take the "
            "gradients of optimizer.scale_loss(loss), and let optimizer.apply_gradients unscale them.")


def _record_output_dtypes(layers) -> dict:
    """Wrap each layer's `call` so that the dtype of every output it computes is recorded (at tracing time inside
    a tf.function): {layer name: [dtype, ...]}."""
    computed = {}
    for layer in layers:
        computed[layer.name] = seen = []

        def recording(*args, _call=layer.call, _seen=seen, **kwargs):
            outputs = _call(*args, **kwargs)
            _seen.append(keras.backend.standardize_dtype(outputs.dtype))
            return outputs

        layer.call = recording
    return computed
