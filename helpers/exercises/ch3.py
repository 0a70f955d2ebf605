"""Chapter 3's exercises (mixed precision): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import keras

from helpers.exercises import exercise


@exercise("ch3.survivors")
def _survivors(answer):
    names = {answer} if isinstance(answer, str) else set(answer)
    if names == {"bfloat16", "float32"}:
        return None
    if "float16" in names:
        return "float16's smallest value is about 6e-8: 1e-9 underflows to 0 (try np.float16(1e-9))."
    return "check the exponent range, not the resolution: ml_dtypes.finfo(dtype).tiny for each."


@exercise("ch3.loss_scaling")
def _loss_scaling(answer):
    # Measured: one step of the learner's train_step under mixed_float16 on a tiny loss; the float16 layer's weights
    # must move (its gradients underflow to zero unless the loss is scaled).
    import numpy as np
    import tensorflow as tf

    previous = keras.mixed_precision.dtype_policy()
    keras.mixed_precision.set_dtype_policy("mixed_float16")
    try:
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8), keras.layers.Dense(1, dtype="float32")])
        optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(1.0))
        kernel = model.layers[0].kernel
        before = kernel.numpy().copy()
        answer(model, optimizer, tf.random.stateless_normal((32, 8), seed=(1, 2)), tf.zeros((32, 1)))
        moved = float(np.abs(kernel.numpy() - before).max())
    finally:
        keras.mixed_precision.set_dtype_policy(previous)
    if not np.isfinite(moved):
        return "the weights became NaN or inf: scale the loss for the gradient only, and let apply_gradients unscale."
    if moved > 0:
        return None
    return ("the first layer's weights did not move: its float16 gradients underflowed to zero. Compute the "
            "gradients of optimizer.scale_loss(loss) instead of loss (apply_gradients unscales them).")
