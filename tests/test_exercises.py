import keras
import pytest

from helpers import exercises
from helpers.exercises import check, exercise
from helpers.models import matching_loss, reuters_conv1d


def small_model(output):
    return reuters_conv1d(vocab_size=20, num_classes=3, maxlen=16, output=output)


RIGHT_ANSWERS = {
    "ch0.input_share": lambda: 0.8,
    "ch1.embedding_params": lambda: 30982 * 7,
    "ch1.logits_model": lambda: (small_model("logits"), matching_loss("logits")),
    "ch2.global_batch": lambda: 128 * 4,
    "ch3.survivors": lambda: ["bfloat16", "float32"],
    "ch4.scaled_lr": lambda: 0.4,
    "ch5.shuffle_buffer_mb": lambda: 1806,
    "ch6.global_batch": lambda: 192,
}


def verdict(capsys, name, answer):
    assert check(name, answer) is None  # nothing returned: the cell shows only the verdict
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return out.rstrip("\n")


def test_every_registered_exercise_has_a_right_answer_here():
    assert set(exercises._CHECKS) == set(RIGHT_ANSWERS)


@pytest.mark.parametrize("name", sorted(RIGHT_ANSWERS))
def test_right_answers_are_correct(capsys, name):
    assert verdict(capsys, name, RIGHT_ANSWERS[name]()) == f"[{name}] Correct. Well done."


@pytest.mark.parametrize(
    "name, answer, hint",
    [
        ("ch0.input_share", 0.801, None),  # within 1 %
        ("ch0.input_share", 80, "give a fraction between 0 and 1, not a percentage."),
        ("ch0.input_share", 0.2, "share = input time / (input time + compute time) per step."),
        ("ch0.input_share", "0.8", "share = input time / (input time + compute time) per step."),
        ("ch1.embedding_params", 216874.0, None),
        ("ch1.embedding_params", 30982 * 7 + 7, "an Embedding layer has no bias"),
        ("ch1.embedding_params", 30982, "an Embedding stores one vector of output_dim numbers"),
        ("ch2.global_batch", 128, "128 is each GPU's share"),
        ("ch2.global_batch", 32, "32 is 128 / 4"),
        ("ch2.global_batch", 256, "global batch = examples per replica x number of replicas."),
        ("ch3.survivors", {"float32", "bfloat16"}, None),
        ("ch3.survivors", ["float16", "float32"], "float16's smallest value is about 6e-8"),
        ("ch3.survivors", "float32", "check the exponent range"),
        ("ch4.scaled_lr", 0.401, None),
        ("ch4.scaled_lr", 0.025, "the batch grew 4x"),
        ("ch4.scaled_lr", 0.1, "with 4x the examples per step"),
        ("ch4.scaled_lr", 0.05, "128 is each core's share"),
        ("ch4.scaled_lr", 3.2, "linear rule: new rate"),
        ("ch5.shuffle_buffer_mb", 1806.336, None),
        ("ch5.shuffle_buffer_mb", 451.584, "the images were divided by 255"),
        ("ch5.shuffle_buffer_mb", 1722.65, "use 1 MB = 10^6 bytes"),
        ("ch5.shuffle_buffer_mb", 18, "bytes = images x height"),
        ("ch6.global_batch", 96, "each worker has 2 GPUs"),
        ("ch6.global_batch", 64, "that is one machine's share"),
        ("ch6.global_batch", 32, "global batch = examples per replica"),
    ],
)
def test_numeric_answers(capsys, name, answer, hint):
    out = verdict(capsys, name, answer)
    if hint is None:
        assert out == f"[{name}] Correct. Well done."
    else:
        assert out.startswith(f"[{name}] Not yet: {hint}")


def test_logits_model_with_softmax_layer(capsys):
    out = verdict(capsys, "ch1.logits_model", (small_model("softmax"), matching_loss("logits")))
    assert out == ("[ch1.logits_model] Not yet: the last Dense layer still applies softmax: "
                   "make it linear (activation=None).")


def test_logits_model_with_probability_loss(capsys):
    out = verdict(capsys, "ch1.logits_model", (small_model("logits"), matching_loss("softmax")))
    assert out == ("[ch1.logits_model] Not yet: a linear last layer outputs logits: build the loss "
                   "with from_logits=True.")


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy",
                                  keras.losses.CategoricalCrossentropy(from_logits=True)])
def test_logits_model_with_the_wrong_kind_of_loss(capsys, loss):
    out = verdict(capsys, "ch1.logits_model", (small_model("logits"), loss))
    assert out.startswith("[ch1.logits_model] Not yet: the labels are topic numbers")


@pytest.mark.parametrize("answer", [None, ...])
def test_unanswered(capsys, answer):
    out = verdict(capsys, "ch0.input_share", answer)
    assert out == ("[ch0.input_share] Not answered yet: replace the ... / None in the cell above, "
                   "run it, then this one.")


def test_unknown_exercise_lists_known_ones(capsys):
    out = verdict(capsys, "ch9.nope", 1)
    assert out == f"No exercise called 'ch9.nope'. Known exercises: {', '.join(sorted(RIGHT_ANSWERS))}."


def test_checker_that_raises_gives_a_hint_not_an_exception(capsys):
    out = verdict(capsys, "ch1.logits_model", 42)  # cannot be unpacked into (model, loss)
    assert out.startswith("[ch1.logits_model] Not yet: could not check this answer (TypeError: ")


def test_exercise_registers_and_returns_the_checker(monkeypatch, capsys):
    monkeypatch.setattr(exercises, "_CHECKS", dict(exercises._CHECKS))

    def checker(answer):
        return None if answer == "yes" else "say yes"

    assert exercise("test.yes")(checker) is checker
    assert exercises._CHECKS["test.yes"] is checker
    assert verdict(capsys, "test.yes", "yes") == "[test.yes] Correct. Well done."
    assert verdict(capsys, "test.yes", "no") == "[test.yes] Not yet: say yes"


def test_check_never_raises_on_an_unhashable_name(capsys):
    assert verdict(capsys, ["ch0.input_share"], 0.8).startswith("No exercise called")
