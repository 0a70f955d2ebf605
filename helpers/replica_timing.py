"""Timing data-parallel training inside the notebook's own process (chapter 3, section 7): steady epochs of `fit`
under a strategy (samples_per_second), and the gradient exchange between its replicas alone (exchange_seconds)."""

from __future__ import annotations

import time

import keras
import numpy as np
import tensorflow as tf

from helpers.data import make_dataset
from helpers.errors import whole_number
from helpers.models import matching_loss
from helpers.timing import EpochTimer

PARTS = ("dense", "sparse", "both")


def samples_per_second(strategy, build, x, y, per_replica_batch: int, steps: int):
    """A function that runs one epoch of `steps` steps through fit at per_replica_batch x replicas and returns the
    samples/s it measured (an EpochTimer's epoch: no start-up in it). The model (`build()`) is built, compiled and
    traced here, once, so that each call is a steady epoch; the function keeps it as `.model`."""
    whole_number("samples_per_second(steps=", steps, 2)
    global_batch = per_replica_batch * strategy.num_replicas_in_sync
    ds = make_dataset(x, y, global_batch, repeat=True, drop_remainder=True)
    with strategy.scope():
        model = build()
        model.compile(optimizer="nadam", loss=matching_loss())
    model.fit(ds, epochs=1, steps_per_epoch=2, verbose=0)  # traces the step

    def run() -> float:
        timer = EpochTimer(samples_per_epoch=steps * global_batch)
        model.fit(ds, epochs=1, steps_per_epoch=steps, verbose=0, callbacks=[timer])
        return steps * global_batch / timer.epoch_seconds[-1]

    run.model, run.global_batch = model, global_batch
    return run


def _gradient_stand_ins(model, rows: int):
    """For each part ("dense", "sparse", "both"): a function making gradients of the shapes Keras's optimizer hands
    to the all-reduce: a dense tensor per non-embedding weight, and for an Embedding an IndexedSlices of `rows` rows
    (one per token of the replica's batch). Also the counts of values each replica sends."""
    embedding = [w for layer in model.layers if isinstance(layer, keras.layers.Embedding)
                 for w in layer.trainable_weights][:1]
    dense = [v for v in model.trainable_variables if all(v is not e for e in embedding)]
    vocab, width = (int(n) for n in embedding[0].shape) if embedding else (1, 1)

    def gradients(part):
        grads = [tf.fill(v.shape, 1.0) for v in dense] if part in ("dense", "both") else []
        if embedding and part in ("sparse", "both"):
            grads.append(tf.IndexedSlices(tf.fill((rows, width), 1.0), tf.range(rows, dtype="int64") % vocab,
                                          tf.constant([vocab, width], "int64")))
        return grads

    counts = {"dense_values": sum(int(np.prod(v.shape)) for v in dense),
              "sparse_values": rows * width if embedding else 0, "sparse_rows": rows}
    return gradients, counts


def _sampler(strategy, gradients, exchange: bool, calls: int):
    """A function that runs `calls` traced steps making the gradients on every replica, all-reduced or not."""
    def replica():
        grads = gradients()
        if exchange:
            grads = tf.distribute.get_replica_context().all_reduce("sum", grads)
        return [tf.reduce_sum(g.values if isinstance(g, tf.IndexedSlices) else g[:1]) for g in grads]

    step = tf.function(lambda: strategy.run(replica))
    step()  # trace

    def sample():
        for _ in range(calls):
            out = step()
        [t.numpy() for t in tf.nest.flatten(strategy.experimental_local_results(out))]  # wait for a GPU to finish

    return sample


def exchange_seconds(strategy, model, per_replica_batch: int, maxlen: int = 300, calls: int = 20,
                     rounds: int = 5) -> dict:
    """The gradient exchange of `model` across `strategy`'s replicas, as Keras's optimizer hands it over
    (keras/src/backend/tensorflow/optimizer.py: one replica_context.all_reduce(SUM, grads)): the Embedding's gradient
    is an IndexedSlices, gathered; the other gradients are dense and all-reduced. Each part is timed as a call with
    the exchange minus the same call without it, each the best of `rounds` samples of `calls` calls, in turns (the
    best: another program's load only adds time, and a difference of two disturbed figures can go negative).
    Returns seconds per step for "dense", "sparse" and "both", and the values each replica sends."""
    gradients, counts = _gradient_stand_ins(model, per_replica_batch * maxlen)
    parts = [part for part in PARTS if gradients(part)]  # a model without an Embedding has no sparse part
    runs = {(part, exchange): _sampler(strategy, lambda part=part: gradients(part), exchange, calls)
            for part in parts for exchange in (False, True)}
    samples = {key: [] for key in runs}
    for r in range(rounds):  # in turns, so a machine that slows down favours none of them
        keys = list(runs)[r % len(runs):] + list(runs)[:r % len(runs)]
        for key in keys:
            start = time.perf_counter()
            runs[key]()
            samples[key].append((time.perf_counter() - start) / calls)
    cost = {part: max(0.0, min(samples[part, True]) - min(samples[part, False])) if part in parts else 0.0
            for part in PARTS}
    return cost | counts
