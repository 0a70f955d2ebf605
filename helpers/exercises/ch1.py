"""Chapter 1's exercises (a single GPU): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import keras

from helpers.exercises import exercise


@exercise("ch1.embedding_params")
def _embedding_params(answer):
    if answer == 30982 * 7:
        return None
    if answer == 30982 * 7 + 7:
        return "an Embedding layer has no bias: only one vector per word."
    return "an Embedding stores one vector of output_dim numbers for every word index (vocab_size of them)."


@exercise("ch1.logits_model")
def _logits_model(answer):
    model, loss = answer
    activation = getattr(model.layers[-1], "activation", None)
    if getattr(activation, "__name__", "") == "softmax":
        return "the last Dense layer still applies softmax: make it linear (activation=None)."
    if not isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        return "the labels are topic numbers (0..45): use keras.losses.SparseCategoricalCrossentropy."
    if not getattr(loss, "from_logits", False):
        return "a linear last layer outputs logits: build the loss with from_logits=True."
    return None


@exercise("ch1.reshuffled_batches")
def _reshuffled_batches(answer):
    # Observed: two epochs of the learner's dataset must hold every number once each, in new batches.
    epochs = [[sorted(int(v) for v in batch) for batch in answer] for _ in range(2)]
    for epoch in epochs:
        if sorted(v for batch in epoch for v in batch) != list(range(10)):
            return "every epoch must hold each of the numbers 0..9 exactly once."
        if [len(batch) for batch in epoch] != [5, 5]:
            return "keep batches of 5."
    if sorted(epochs[0]) == sorted(epochs[1]):
        return ("epoch 2 has the same batches as epoch 1 (at most in another order): shuffle the examples before "
                "batching them, after the cache.")
    return None
