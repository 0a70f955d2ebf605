"""The course's model builders."""

from __future__ import annotations

import keras

import helpers.errors  # the notebook-cell block below calls helpers.errors.whole_number, as the notebook does
from helpers.errors import CourseError, whole_number

OUTPUTS = ("logits", "softmax")


# notebook cell: reuters_conv1d
def reuters_conv1d(vocab_size=30982, num_classes=46, maxlen=300, output="logits"):
    """The Conv1D newswire classifier of the original tutorials (332,856 parameters with the defaults).

    Starts from keras.Input: Keras 3 drops Embedding(input_length=...) with a deprecation warning, which leaves a
    model without an input shape unbuilt. output="logits" ends in a linear layer (pair it with from_logits=True);
    "softmax" ends in probabilities.
    """
    for name, value in (("vocab_size", vocab_size), ("num_classes", num_classes), ("maxlen", maxlen)):
        helpers.errors.whole_number(f"reuters_conv1d({name}=", value, 2)
    if maxlen < 12:
        raise helpers.CourseError(f"reuters_conv1d(maxlen={maxlen}): the two conv/pool stages need 12 tokens or more.")
    if output not in ("logits", "softmax"):
        raise helpers.CourseError(f"reuters_conv1d(output={output!r}): use 'logits' or 'softmax'.")
    return keras.Sequential(
        [
            keras.Input(shape=(maxlen,), dtype="int32"),
            keras.layers.Embedding(vocab_size, 7),
            keras.layers.Conv1D(filters=64, kernel_size=5, activation="relu"),
            keras.layers.MaxPool1D(2),
            keras.layers.Conv1D(filters=32, kernel_size=3, activation="relu"),
            keras.layers.MaxPool1D(2),
            keras.layers.Flatten(),
            # float32 even under a mixed-precision policy: softmax and the loss need its range.
            keras.layers.Dense(num_classes, activation=None if output == "logits" else "softmax", dtype="float32"),
        ],
        name=f"reuters_conv1d_{output}",
    )
# end of notebook cell


def reuters_bag_of_words(vocab_size: int = 30982, num_classes: int = 46, maxlen: int = 300) -> keras.Model:
    """A deliberately tiny newswire classifier (average of word vectors -> logits): so little work per
    step that fixed per-step costs dominate, as they do for small models on a TPU."""
    for name, value in (("vocab_size", vocab_size), ("num_classes", num_classes), ("maxlen", maxlen)):
        whole_number(f"reuters_bag_of_words({name}=", value, 2)
    return keras.Sequential(
        [
            keras.Input(shape=(maxlen,), dtype="int32"),
            keras.layers.Embedding(vocab_size, 8),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(num_classes, dtype="float32"),
        ],
        name="reuters_bag_of_words",
    )


def matching_loss(output: str = "logits") -> keras.losses.Loss:
    """The loss that fits the model's last layer: from_logits=True only for logits."""
    if output not in OUTPUTS:
        raise CourseError(f"matching_loss(output={output!r}): use 'logits' or 'softmax'.")
    return keras.losses.SparseCategoricalCrossentropy(from_logits=output == "logits")
