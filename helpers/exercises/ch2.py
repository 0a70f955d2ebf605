"""Chapter 2's exercises (several GPUs): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import keras

from helpers.exercises import exercise


@exercise("ch2.global_batch")
def _global_batch(answer):
    if answer == 512:
        return None
    if answer == 128:
        return "128 is each GPU's share; the dataset must produce all four shares at once."
    if answer == 32:
        return "32 is 128 / 4: multiply the per-GPU batch by the number of GPUs, do not divide it."
    return "global batch = examples per replica x number of replicas."


@exercise("ch2.match_one_replica")
def _match_one_replica(answer):
    # Measured: a small regression trained by fit on one device (batch 32, SGD 0.1) and under the learner's strategy
    # with the learner's per-replica batch and learning rate must end with the same weights.
    import numpy as np
    import tensorflow as tf

    strategy, per_replica_batch, learning_rate = answer
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")

    def train(batch, rate, scope):
        with scope:
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
            model.compile(optimizer=keras.optimizers.SGD(rate), loss="mse")
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(batch), epochs=2, verbose=0)
        return np.concatenate([w.reshape(-1) for w in model.get_weights()])

    reference = train(32, 0.1, tf.distribute.OneDeviceStrategy("/cpu:0").scope())
    global_batch = per_replica_batch * strategy.num_replicas_in_sync
    mine = train(global_batch, learning_rate, strategy.scope())
    gap = float(np.abs(mine - reference).max())
    if gap <= 1e-4:
        return None
    return (f"the weights differ from the one-device run by up to {gap:.2g}: your global batch is {global_batch} "
            f"({strategy.num_replicas_in_sync} replica(s) x {per_replica_batch}) at rate {learning_rate:g}; the "
            "one-device run took 32 examples per step at 0.1. Same global batch, same rate, same steps.")
