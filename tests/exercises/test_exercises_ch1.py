"""Chapter 1's exercise checkers: the right answers pass, the starting code and every shortcut found are refused.
The solutions and the starting code are the notebook's, read when each test runs (solutions.py)."""

import keras
import pytest
import tensorflow as tf
from solutions import folded_solution, run, starting_code

from helpers.chapters.ch01_single_gpu import reuters_conv1d
from helpers.exercises import check


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.rstrip("\n")


NOT_ANSWERED = "Not answered yet: replace the ... / None in this cell"


def logits_answer(code):
    """What the exercise cell passes to check: None while logits_model is None, else (logits_model, logits_loss)."""
    model, loss = run(code, "logits_model", "logits_loss", reuters_conv1d=reuters_conv1d, keras=keras)
    return None if model is None else (model, loss)


def conv1d(output="logits", **kwargs):  # the chapter's model: 300 word indices in, 46 topics out
    return reuters_conv1d(output=output, **kwargs)


def with_softmax_layer():  # logits, then a Softmax layer: the model outputs probabilities again
    return keras.Sequential([*conv1d().layers, keras.layers.Softmax()])


def with_softmax_op():  # a functional model whose last Dense is linear, then keras.ops.softmax: probabilities
    inputs = keras.Input(shape=(300,), dtype="int32")
    return keras.Model(inputs, keras.ops.softmax(conv1d()(inputs)))


def with_sigmoid():
    model = conv1d()
    model.layers[-1].activation = keras.activations.sigmoid
    return model


LOGITS_LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def with_log_softmax():  # log-probabilities: from_logits=True gives the same loss on them (accepted on purpose)
    model = conv1d()
    model.layers[-1].activation = keras.activations.log_softmax
    return model


def dense_only():  # any linear 46-output model: the lesson is the pairing, not the architecture (accepted on purpose)
    return keras.Sequential([keras.Input((300,)), keras.layers.Dense(46)])


@pytest.mark.parametrize("answer, says", [
    (lambda: logits_answer(folded_solution("ch1.logits_model")), "Correct. Well done."),
    (lambda: logits_answer(starting_code("ch1.logits_model")), NOT_ANSWERED),
    (lambda: (conv1d("softmax"), LOGITS_LOSS), "the last Dense layer still applies softmax"),
    (lambda: (conv1d("logits"), keras.losses.SparseCategoricalCrossentropy()), "build the loss with from_logits=True"),
    (lambda: (conv1d("logits"), keras.losses.CategoricalCrossentropy(from_logits=True)),
     "the labels are topic numbers"),
    (lambda: (with_softmax_layer(), LOGITS_LOSS), "the model outputs probabilities (every row is non-negative"),
    (lambda: (with_softmax_op(), LOGITS_LOSS), "the model outputs probabilities (every row is non-negative"),
    (lambda: (with_sigmoid(), LOGITS_LOSS), "activation sigmoid) does not output logits"),
    (lambda: (with_log_softmax(), LOGITS_LOSS), "Correct. Well done."),
    (lambda: (dense_only(), LOGITS_LOSS), "Correct. Well done."),
    (lambda: (keras.Sequential([keras.layers.Dense(1)]), LOGITS_LOSS), "the model outputs shape (4, 1)"),
    (lambda: (conv1d(num_classes=3), LOGITS_LOSS), "the model outputs shape (4, 3)"),
    (lambda: (conv1d(maxlen=16), LOGITS_LOSS), "calling the model on a batch of shape (4, 300) failed"),
], ids=["solution", "starting code", "softmax output", "probabilities loss", "one-hot loss", "Softmax layer",
        "softmax op", "sigmoid", "log_softmax accepted", "any linear 46-output model accepted",
        "Dense(1) alone", "3 classes", "other input length"])
def test_logits_model(capsys, answer, says):
    assert says in verdict(capsys, "ch1.logits_model", answer())


def numbers():
    return tf.data.Dataset.range(10)


@pytest.mark.parametrize("answer, says", [
    (lambda: run(folded_solution("ch1.reshuffled_batches"), "grouped", tf=tf), "Correct. Well done."),
    (lambda: run(starting_code("ch1.reshuffled_batches"), "grouped", tf=tf), "epochs 1 to 3 have the same batches"),
    # the original order
    (lambda: numbers().shuffle(10, seed=1).batch(5).cache(), "epochs 1 to 3 have the same batches"),
    (lambda: numbers().cache().shuffle(10, seed=1, reshuffle_each_iteration=False).batch(5),
     "epochs 1 to 3 have the same batches"),
    (lambda: numbers().cache().shuffle(10, seed=1).batch(4), "keep batches of 5"),
    (lambda: numbers().take(8).cache().shuffle(8, seed=1).batch(4), "each of the numbers 0..9 exactly once"),
    (lambda: numbers().shuffle(10, seed=1).batch(5), "the pipeline has no cache()"),
    (lambda: [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], "give the tf.data.Dataset itself"),
    # cache between shuffle and batch: the cache replays the first epoch's order
    (lambda: numbers().shuffle(10, seed=1).cache().batch(5), "epochs 1 to 3 have the same batches"),
    # C1-X2: a cache on an empty branch the numbers never pass through; accepted on purpose (contrived)
    (lambda: numbers().shuffle(10, seed=1).batch(5).concatenate(tf.data.Dataset.range(0).batch(5).cache()),
     "Correct. Well done."),
    # C1-X4: an endless dataset gets a hint, not a hang
    (lambda: numbers().cache().shuffle(10, seed=1).batch(5).repeat(), "the dataset never ends"),
    (lambda: numbers().cache().shuffle(10, seed=1).batch(5).repeat().filter(lambda b: True),
     "TensorFlow cannot tell where it ends"),
    # a filter that never passes anything: reading it would never return, so the graph decides
    (lambda: numbers().cache().shuffle(10, seed=1).batch(5).repeat().filter(lambda b: False),
     "TensorFlow cannot tell where it ends"),
    # a finite dataset of unknown length is still read: an endless generator is bounded by MAX_BATCHES
    (lambda: tf.data.Dataset.from_generator(lambda: iter(int, 1), output_signature=tf.TensorSpec((), tf.int64))
     .batch(5), "an epoch went on past 10 batches"),
], ids=["solution", "starting code", "cache last", "no reshuffle", "other batch size", "lost numbers", "no cache",
        "not a dataset", "cache after shuffle", "cache on an empty branch accepted", "repeat",
        "repeat of unknown length", "repeat that never yields", "endless generator"])
def test_reshuffled_batches(capsys, answer, says):
    assert says in verdict(capsys, "ch1.reshuffled_batches", answer())


def split(dataset):
    return sorted(sorted(int(v) for v in batch) for batch in dataset)


def test_reshuffled_batches_accepts_an_unseeded_shuffle_whose_first_two_epochs_match(capsys):
    # An unseeded shuffle deals epoch 2 into epoch 1's batches about 1 time in 126: find a global seed that does.
    def unseeded():
        return numbers().cache().shuffle(10).batch(5)

    for seed in range(5000):
        tf.random.set_seed(seed)
        dataset = unseeded()
        first, second, third = split(dataset), split(dataset), split(dataset)
        if first == second != third:
            break
    else:
        pytest.fail("no global seed in 0..4999 gave two equal epochs then a different one")
    tf.random.set_seed(seed)  # the same three epochs again, drawn by the check
    assert verdict(capsys, "ch1.reshuffled_batches", unseeded()).endswith("Correct. Well done.")
