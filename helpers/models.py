"""The course's model builders."""

from __future__ import annotations

import keras

from helpers.errors import CourseError, whole_number

OUTPUTS = ("logits", "softmax")


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
