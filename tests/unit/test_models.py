import keras
import numpy as np
import pytest

from helpers import CourseError, models
from helpers.chapters.ch01_single_gpu import reuters_conv1d
from helpers.models import matching_loss


@pytest.mark.parametrize("output", ["logits", "softmax"])
def test_default_model_has_the_seeds_parameter_count(output):
    model = reuters_conv1d(output=output)
    assert model.count_params() == 332_856
    assert model.name == f"reuters_conv1d_{output}"
    assert model.input_shape == (None, 300)
    assert model.output_shape == (None, 46)


def test_logits_model_ends_linear_softmax_model_ends_in_probabilities():
    logits = reuters_conv1d(vocab_size=50, num_classes=4, maxlen=20, output="logits")
    softmax = reuters_conv1d(vocab_size=50, num_classes=4, maxlen=20, output="softmax")
    assert logits.layers[-1].activation.__name__ == "linear"
    assert softmax.layers[-1].activation.__name__ == "softmax"
    tokens = np.random.default_rng(0).integers(0, 50, size=(3, 20)).astype("int32")
    probabilities = softmax.predict(tokens, verbose=0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-5)
    assert (probabilities >= 0).all()
    assert logits.predict(tokens, verbose=0).shape == (3, 4)


def test_layer_stack():
    model = reuters_conv1d(vocab_size=50, num_classes=4, maxlen=20)  # 20 -> 16 -> 8 -> 6 -> 3
    kinds = [type(layer).__name__ for layer in model.layers]
    assert kinds == ["Embedding", "Conv1D", "MaxPooling1D", "Conv1D", "MaxPooling1D", "Flatten",
                     "Dense"]
    assert model.layers[0].output_dim == 7
    expected = 50 * 7 + (7 * 5 * 64 + 64) + (64 * 3 * 32 + 32) + (3 * 32 * 4 + 4)
    assert model.count_params() == expected


def test_smallest_allowed_maxlen_builds():
    model = reuters_conv1d(vocab_size=10, num_classes=2, maxlen=14)
    assert model.output_shape == (None, 2)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocab_size": 1}, r"reuters_conv1d\(vocab_size=1\): use a whole number >= 2"),
        ({"vocab_size": True}, r"reuters_conv1d\(vocab_size=True\)"),
        ({"vocab_size": 100.0}, r"reuters_conv1d\(vocab_size=100.0\)"),
        ({"num_classes": 0}, r"reuters_conv1d\(num_classes=0\)"),
        ({"num_classes": "46"}, r"reuters_conv1d\(num_classes='46'\)"),
        ({"maxlen": False}, r"reuters_conv1d\(maxlen=False\)"),
        ({"maxlen": 11}, r"reuters_conv1d\(maxlen=11\): the two conv/pool stages need 12 tokens or more"),
        ({"output": "probabilities"}, r"reuters_conv1d\(output='probabilities'\): use 'logits' or"),
        ({"output": None}, r"reuters_conv1d\(output=None\)"),
    ],
)
def test_reuters_conv1d_rejects_bad_arguments(kwargs, message):
    with pytest.raises(CourseError, match=message):
        reuters_conv1d(**kwargs)


def test_matching_loss_from_logits_flags():
    assert matching_loss().from_logits is True
    assert matching_loss("logits").from_logits is True
    assert matching_loss("softmax").from_logits is False
    assert isinstance(matching_loss(), keras.losses.SparseCategoricalCrossentropy)


def test_matching_loss_agrees_between_outputs():
    logits = np.array([[2.0, 0.5, -1.0]], dtype="float32")
    probabilities = np.exp(logits) / np.exp(logits).sum()
    y = np.array([0])
    expected = -np.log(probabilities[0, 0])
    assert float(matching_loss("logits")(y, logits)) == pytest.approx(expected, rel=1e-5)
    assert float(matching_loss("softmax")(y, probabilities)) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("bad", ["probabilities", "", None, True])
def test_matching_loss_rejects_bad_output(bad):
    with pytest.raises(CourseError,
                       match=rf"matching_loss\(output={bad!r}\): use 'logits' or 'softmax'"):
        matching_loss(bad)


def test_bag_of_words_is_tiny_and_outputs_float32_logits():
    model = models.reuters_bag_of_words()
    assert model.count_params() == 30982 * 8 + 8 * 46 + 46
    assert [type(layer).__name__ for layer in model.layers] == ["Embedding", "GlobalAveragePooling1D", "Dense"]
    assert model.layers[-1].activation.__name__ == "linear" and model.layers[-1].dtype_policy.name == "float32"
    assert model(np.zeros((2, 300), "int32")).shape == (2, 46)


@pytest.mark.parametrize("kwargs", [{"vocab_size": 1}, {"num_classes": True}, {"maxlen": 3.0}])
def test_bag_of_words_rejects_bad_arguments(kwargs):
    name, value = next(iter(kwargs.items()))
    with pytest.raises(CourseError, match=rf"reuters_bag_of_words\({name}={value!r}\): use a whole number >= 2"):
        models.reuters_bag_of_words(**kwargs)
