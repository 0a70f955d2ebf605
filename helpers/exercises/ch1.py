"""Chapter 1's exercises (a single GPU): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import itertools

import keras
import numpy as np

from helpers.exercises.registry import dataset_op_types, exercise, number_hint, repeats_with_no_known_end


@exercise("ch1.embedding_params")
def _embedding_params(answer):
    return number_hint(answer, 30982 * 7, {30982 * 7 + 7: "an Embedding layer has no bias: only one vector per word."},
                       "an Embedding stores one vector of output_dim numbers for every word index (vocab_size of "
                       "them).")


@exercise("ch1.logits_model")
def _logits_model(answer):
    model, loss = answer
    # Observed: what the model outputs for a small batch of the chapter's input (4 newswires of 300 word indices).
    words = np.random.default_rng(0).integers(1, 1000, size=(4, 300)).astype("int32")
    try:
        outputs = keras.ops.convert_to_numpy(model(words, training=False))
    except Exception as err:  # noqa: BLE001 -- any failure becomes a hint
        return (f"calling the model on a batch of shape (4, 300) failed ({type(err).__name__}): build it with "
                "reuters_conv1d(output=...), which takes 300 word indices per newswire.")
    if outputs.ndim != 2 or outputs.shape[-1] != 46:
        return (f"the model outputs shape {tuple(outputs.shape)} for 4 newswires: it needs 46 numbers per newswire, "
                "one per topic (shape (4, 46)).")
    last = model.layers[-1] if getattr(model, "layers", None) else None
    activation = getattr(getattr(last, "activation", None), "__name__", None)
    if (outputs >= 0).all() and np.allclose(outputs.sum(axis=-1), 1.0, atol=1e-3):
        if activation == "softmax":
            return "the last Dense layer still applies softmax: make it linear (activation=None)."
        return ("the model outputs probabilities (every row is non-negative and sums to 1), not logits: remove the "
                "softmax after the last Dense layer and make that layer linear (activation=None).")
    # log_softmax is accepted: its outputs are logits shifted per row, and from_logits=True gives the same loss on them
    if activation not in (None, "linear", "log_softmax"):  # e.g. a sigmoid: not logits either
        return (f"the model's last layer ({type(last).__name__}, activation {activation}) does not output "
                "logits: end in a Dense layer with activation=None.")
    if not isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        return "the labels are topic numbers (0..45): use keras.losses.SparseCategoricalCrossentropy."
    if not getattr(loss, "from_logits", False):
        return "a linear last layer outputs logits: build the loss with from_logits=True."
    return None


MAX_BATCHES = 10  # an epoch of 0..9 in batches of 5 has 2; reading more than this many means it does not end


@exercise("ch1.reshuffled_batches")
def _reshuffled_batches(answer):
    import tensorflow as tf

    if not isinstance(answer, tf.data.Dataset):
        return f"the answer is a {type(answer).__name__}: give the tf.data.Dataset itself (grouped)."
    if answer.cardinality() == tf.data.INFINITE_CARDINALITY:
        return ("the dataset never ends (a .repeat()?): give one epoch of the numbers; Keras' fit and a for loop "
                "start a new epoch by iterating the dataset again.")
    if repeats_with_no_known_end(answer):
        return ("the dataset has a .repeat() and TensorFlow cannot tell where it ends (a filter after it?): give "
                "one epoch of the numbers, without .repeat().")
    # Observed: three epochs of the learner's dataset must hold every number once each, in new batches. An unseeded
    # shuffle deals the same two batches about 1 time in 126, so only three identical epochs are refused. Each epoch
    # is read for at most MAX_BATCHES batches, so a dataset that never ends gets a hint, not a hang.
    epochs = [[sorted(int(v) for v in batch) for batch in itertools.islice(answer, MAX_BATCHES + 1)]
              for _ in range(3)]
    if any(len(epoch) > MAX_BATCHES for epoch in epochs):
        return (f"an epoch went on past {MAX_BATCHES} batches (a .repeat()?): 10 numbers in batches of 5 make 2 "
                "batches per epoch.")
    for epoch in epochs:
        if sorted(v for batch in epoch for v in batch) != list(range(10)):
            return "every epoch must hold each of the numbers 0..9 exactly once."
        if [len(batch) for batch in epoch] != [5, 5]:
            return "keep batches of 5."
    if all(sorted(epoch) == sorted(epochs[0]) for epoch in epochs[1:]):
        return ("epochs 1 to 3 have the same batches (at most in another order): shuffle the examples before "
                "batching them, after the cache.")
    # A cache anywhere in the graph counts: a cache on a branch the numbers do not take (concatenate(... .cache()))
    # passes, accepted on purpose (tests/exercises/test_exercises_ch1.py); every natural misplacement is refused above.
    if not any(op.startswith("CacheDataset") for op in dataset_op_types(answer)):
        return "the pipeline has no cache(): cache the numbers first, then shuffle and batch them."
    return None
