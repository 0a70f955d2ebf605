import re
import time

import keras
import numpy as np
import pytest
import solutions
import tensorflow as tf
from conftest import run_python
from solutions import folded_solution, run, starting_code, with_solution
from test_exercises_ch4 import train_step

from helpers.chapters.ch01_single_gpu import reuters_conv1d
from helpers.chapters.ch09_bigger_than_one_device import is_out_of_memory, largest_batch
from helpers.exercises import check, registry
from helpers.exercises.registry import exercise
from helpers.models import matching_loss


def solved(name, *names, **scope):
    """Exercise `name`'s folded solution, run with `scope` (what the notebook defines before it), giving `names`."""
    return run(folded_solution(name), *names, **scope)


def solved_cell(name, *names, **scope):
    """Exercise `name`'s starting code changed as its folded solution says, run with `scope`, giving `names`."""
    return run(with_solution(starting_code(name), folded_solution(name)), *names, **scope)


# Each right answer is the notebook's folded solution, read when the test runs; the ones its solution gives in prose
# (a number in the text, no code) are written here.
RIGHT_ANSWERS = {
    "ch0.faster_accelerator": lambda: solved("ch0.faster_accelerator", "step_seconds"),
    "ch0.vectorized_dropout": lambda: solved("ch0.vectorized_dropout", "batch_word_dropout", np=np),
    "ch1.embedding_params": lambda: solved("ch1.embedding_params", "embedding_params"),
    "ch1.logits_model": lambda: solved("ch1.logits_model", "logits_model", "logits_loss",
                                       reuters_conv1d=reuters_conv1d, keras=keras),
    "ch1.reshuffled_batches": lambda: solved("ch1.reshuffled_batches", "grouped", tf=tf),
    "ch2.dense_training_flops": lambda: solved("ch2.dense_training_flops", "dense_training_flops"),
    "ch2.adam_bytes_per_parameter": lambda: solved("ch2.adam_bytes_per_parameter", "adam_bytes_per_parameter"),
    "ch2.ring_bytes_per_device": lambda: solved("ch2.ring_bytes_per_device", "ring_bytes_per_device"),
    "ch3.global_batch": lambda: solved("ch3.global_batch", "global_batch"),
    "ch3.match_one_replica": lambda: solved_cell("ch3.match_one_replica", "one_replica_settings"),
    "ch4.survivors": lambda: solved("ch4.survivors", "survivors"),
    "ch4.loss_scaling": lambda: train_step(folded_solution("ch4.loss_scaling")),
    "ch5.scaled_lr": lambda: 0.4,  # prose: "4 x 0.1 = **0.4**"
    "ch6.shuffle_buffer_mb": lambda: 1806,  # prose: "about **1,806 MB**"
    "ch7.each_element_once": lambda: solved_cell("ch7.each_element_once", "through_the_service", tf=tf),
    "ch7.global_batch": lambda: 192,  # prose: "3 workers x 2 GPUs x 32 = **192**"
    "ch9.effective_batch": lambda: 16 * 4 * 2,  # prose: "16 per device x 2 devices = 32 per step; 4 steps"
    "ch9.exact_largest_batch": lambda: solved("ch9.exact_largest_batch", "exact_largest_batch",
                                              largest_batch=largest_batch, is_out_of_memory=is_out_of_memory),
}
# Checked on the JAX backend, in a fresh interpreter (test_kernel_on_model_axis_reads_the_sharding_back).
JAX_EXERCISES = {"ch9.kernel_on_model_axis"}
# Timed or long checks whose right answer (the notebook's solution) is run once, by the test named here.
SOLUTION_TESTED_IN = {
    "ch3.busy_replicas": "test_exercises_ch3.py::test_busy_replicas_on_two_devices_times_the_solution",
    "ch5.fused_steps": "test_exercises_ch5.py::test_fused_steps_accepts_the_solution_refuses_the_rest",
    "ch5.static_batches": "test_exercises_ch5.py::test_static_batches_accepts_counting_whole_batches_only",
    "ch6.faster_pipeline": "test_exercises_ch6.py::test_the_solution_is_accepted",
    "ch7.resumed_weights": "test_exercises_ch7.py::test_a_backup_restored_on_restart_is_accepted",
    "ch8.not_input_bound": "test_exercises_ch8.py::test_the_solution_is_accepted",
}


def verdict(capsys, name, answer):
    assert check(name, answer) is None  # nothing returned: the cell shows only the verdict
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return out.rstrip("\n")


def test_every_registered_exercise_has_a_right_answer_here():
    assert set(registry._CHECKS) == set(RIGHT_ANSWERS) | JAX_EXERCISES | set(SOLUTION_TESTED_IN)


@pytest.mark.parametrize("name", sorted(RIGHT_ANSWERS))
def test_right_answers_are_correct(capsys, name):
    assert verdict(capsys, name, RIGHT_ANSWERS[name]()) == f"[{name}] Correct. Well done."


# A wrong solution in the notebook must fail the test that runs it: one change of each kind of folded solution.
WRONG_SOLUTIONS = {  # exercise: (text of its folded solution, a wrong one in its place)
    "ch0.vectorized_dropout": ("< rate, 2, batch", "< rate, 0, batch"),  # a code block
    "ch1.embedding_params": ("30982 * 7`", "30982 * 7 + 7`"),  # an inline assignment
    "ch3.match_one_replica": ("32 // num_replicas", "32"),  # assignments put into the starting code
    "ch4.loss_scaling": ("optimizer.scale_loss(loss)", "loss * 1.0"),  # a line added to the starting code
    "ch9.exact_largest_batch": ("min(2 * fits, limit + 1)", "2 * fits"),
}


@pytest.mark.parametrize("name", sorted(WRONG_SOLUTIONS))
def test_a_wrong_folded_solution_fails_its_right_answer(monkeypatch, capsys, name):
    right, wrong = WRONG_SOLUTIONS[name]
    assert right in solutions.solution_text(name)  # the change below bites
    read = solutions.cells

    def with_the_wrong_solution(chapter):
        return [{**cell, "source": cell["source"].replace(right, wrong)}
                if cell["source"].startswith(solutions.SOLUTION) else cell for cell in read(chapter)]

    monkeypatch.setattr(solutions, "cells", with_the_wrong_solution)
    assert wrong.strip("`") in folded_solution(name)
    assert verdict(capsys, name, RIGHT_ANSWERS[name]()).startswith(f"[{name}] Not yet: ")


@pytest.mark.parametrize(
    "name, answer, hint",
    [
        ("ch0.faster_accelerator", (0.821, 0.8), None),  # within 1 %
        ("ch0.faster_accelerator", (82, 80), "give seconds, not percentages."),
        ("ch0.faster_accelerator", (0.1, 0.08), "the accelerator speeds up only the update (0.2 s); preparing the "
                                                "input still takes 0.8 s."),
        ("ch0.faster_accelerator", (1.0, 0.8), "one after the other, a step costs input + update: 0.8 s + the "
                                               "update, 10x faster."),
        ("ch0.faster_accelerator", (0.82, 0.82), "overlapped, input and update run at the same time: a step costs "
                                                 "the larger of the two, not their sum."),
        ("ch0.faster_accelerator", 0.82, "give two numbers in seconds, (one after the other, overlapped), e.g. "
                                         "(1.0, 0.9)."),
        ("ch1.embedding_params", 216874.0, None),
        ("ch1.embedding_params", 30982 * 7 + 7, "an Embedding layer has no bias"),
        ("ch1.embedding_params", 30982, "an Embedding stores one vector of output_dim numbers"),
        ("ch3.global_batch", 128, "128 is each GPU's share"),
        ("ch3.global_batch", 32, "32 is 128 / 4"),
        ("ch3.global_batch", 256, "global batch = examples per replica x number of replicas."),
        ("ch4.survivors", {"float32", "bfloat16"}, None),
        ("ch4.survivors", ["float16", "float32"], "float16's smallest value is about 6e-8"),
        ("ch4.survivors", "float32", "check the exponent range"),
        ("ch5.scaled_lr", 0.401, None),
        ("ch5.scaled_lr", 0.025, "the batch grew 4x"),
        ("ch5.scaled_lr", 0.1, "with 4x the examples per step"),
        ("ch5.scaled_lr", 0.05, "128 is each chip's share"),
        ("ch5.scaled_lr", 3.2, "linear rule: new rate"),
        ("ch6.shuffle_buffer_mb", 1806.336, None),
        ("ch6.shuffle_buffer_mb", 451.584, "the images were divided by 255"),
        ("ch6.shuffle_buffer_mb", 1722.65, "use 1 MB = 10^6 bytes"),
        ("ch6.shuffle_buffer_mb", 18, "bytes = images x height"),
        ("ch7.global_batch", 96, "each worker has 2 GPUs"),
        ("ch7.global_batch", 64, "that is one machine's share"),
        ("ch7.global_batch", 32, "global batch = examples per replica"),
        ("ch9.effective_batch", 64, "each update also averages over both devices"),
        ("ch9.effective_batch", 16, "one update sees per-device batch x accumulation steps x devices"),
    ],
)
def test_numeric_answers(capsys, name, answer, hint):
    out = verdict(capsys, name, answer)
    if hint is None:
        assert out == f"[{name}] Correct. Well done."
    else:
        assert out.startswith(f"[{name}] Not yet: {hint}")


def test_logits_model_with_softmax_layer(capsys):
    out = verdict(capsys, "ch1.logits_model", (reuters_conv1d(output="softmax"), matching_loss("logits")))
    assert out == ("[ch1.logits_model] Not yet: the last Dense layer still applies softmax: "
                   "make it linear (activation=None).")


def test_logits_model_with_probability_loss(capsys):
    out = verdict(capsys, "ch1.logits_model", (reuters_conv1d(output="logits"), matching_loss("softmax")))
    assert out == ("[ch1.logits_model] Not yet: a linear last layer outputs logits: build the loss "
                   "with from_logits=True.")


@pytest.mark.parametrize("loss", ["sparse_categorical_crossentropy",
                                  keras.losses.CategoricalCrossentropy(from_logits=True)])
def test_logits_model_with_the_wrong_kind_of_loss(capsys, loss):
    out = verdict(capsys, "ch1.logits_model", (reuters_conv1d(output="logits"), loss))
    assert out.startswith("[ch1.logits_model] Not yet: the labels are topic numbers")


@pytest.mark.parametrize("answer", [None, ...])
def test_unanswered(capsys, answer):
    out = verdict(capsys, "ch0.faster_accelerator", answer)
    assert out == "[ch0.faster_accelerator] Not answered yet: replace the ... / None in this cell and run it again."


def test_unknown_exercise_lists_known_ones(capsys):
    out = verdict(capsys, "ch10.nope", 1)
    assert out == f"No exercise called 'ch10.nope'. Known exercises: {', '.join(sorted(registry._CHECKS))}."


def test_checker_that_raises_gives_a_hint_not_an_exception(capsys):
    out = verdict(capsys, "ch1.logits_model", 42)  # cannot be unpacked into (model, loss)
    assert out.startswith("[ch1.logits_model] Not yet: could not check this answer (TypeError: ")


def test_exercise_registers_and_returns_the_checker(monkeypatch, capsys):
    monkeypatch.setattr(registry, "_CHECKS", dict(registry._CHECKS))

    def checker(answer):
        return None if answer == "yes" else "say yes"

    assert exercise("test.yes")(checker) is checker
    assert registry._CHECKS["test.yes"] is checker
    assert verdict(capsys, "test.yes", "yes") == "[test.yes] Correct. Well done."
    assert verdict(capsys, "test.yes", "no") == "[test.yes] Not yet: say yes"


def test_check_never_raises_on_an_unhashable_name(capsys):
    assert verdict(capsys, ["ch0.faster_accelerator"], 0.8).startswith("No exercise called")


# Chapter 6's faster_pipeline: its starting code and shortcuts are in test_exercises_ch6.py.


@pytest.mark.parametrize("name, answer, hint", [
    ("ch1.reshuffled_batches", lambda: run(starting_code("ch1.reshuffled_batches"), "grouped", tf=tf),
     r"epochs 1 to 3 have the same batches"),
    ("ch4.loss_scaling", train_step, r"the first layer's weights did not move"),
    ("ch7.each_element_once", lambda: run(starting_code("ch7.each_element_once"), "through_the_service", tf=tf),
     r"the trainer received 24 elements for 12"),
])
def test_measured_exercises_refuse_their_starting_code_with_what_they_measured(capsys, name, answer, hint):
    out = verdict(capsys, name, answer())
    assert re.match(rf"\[{re.escape(name)}\] Not yet: {hint}", out), out


def test_loss_scaling_check_restores_the_dtype_policy(capsys):
    verdict(capsys, "ch4.loss_scaling", train_step())
    assert keras.mixed_precision.dtype_policy().name == "float32"


# Chapter 3's match_one_replica and busy_replicas: starting code and shortcuts, on 1 and 2 devices, are in
# test_exercises_ch3.py.


def test_kernel_on_model_axis_reads_the_sharding_back():
    code = """
import io, json, contextlib
import keras
from keras import distribution as dist
from helpers.exercises import check

def verdict(layouts, devices=2):
    mesh = dist.DeviceMesh((1, devices), ["batch", "model"], dist.list_devices()[:devices])
    layout = dist.LayoutMap(mesh)
    for key, value in layouts.items():
        layout[key] = value
    dist.set_distribution(dist.ModelParallel(layout_map=layout, batch_dim_name="batch"))
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, name="hidden"),
                              keras.layers.Dense(46, name="output")])
    dist.set_distribution(None)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check("ch9.kernel_on_model_axis", model)
    return out.getvalue().strip()

print(json.dumps({
    "solution": verdict({".*hidden/kernel": ("model", None), ".*output/kernel": (None, "model")}),
    "start": verdict({".*hidden/kernel": ("model", None)}),
    "rows": verdict({".*output/kernel": ("model", None)}),
    "one device": verdict({".*output/kernel": (None, "model")}, devices=1),
    "not a model": (lambda: (check("ch9.kernel_on_model_axis", 3)))() or "",
}))
"""
    found = run_python(code, KERAS_BACKEND="jax", XLA_FLAGS="--xla_force_host_platform_device_count=2")
    assert found["solution"] == "[ch9.kernel_on_model_axis] Correct. Well done."
    assert re.match(r"\[ch9.kernel_on_model_axis\] Not yet: the last Dense kernel \(sequential\w*/output/kernel\) "
                    r"is laid out as \(None, None\)", found["start"])
    assert "split along its rows" in found["rows"]
    assert "has one device" in found["one device"] and "set DEVICES = 2" in found["one device"]


def test_timed_speedup_reads_the_learners_code_against_the_starting_code_by_the_course_rule():
    from helpers.exercises.registry import timed_speedup
    order = []
    result = timed_speedup(lambda: order.append("a") or time.sleep(0.02), lambda: order.append("b"), repeats=4)
    assert order.count("a") == 8 and order.count("b") == 4 and order[:3] == ["a", "b", "a"]
    assert result.ratio > 10 and len(result.baseline_s) == 8 and len(result.candidate_s) == 4
    assert result.verdict == "below" and result.reaches(5) and not result.reaches(1e9)
    assert str(result).endswith("x as fast as the starting code (time below the starting code's, outside the noise; "
                                "A/A band ±" + f"{result.noise - 1:.0%}, 1.5 times how far the starting code strayed "
                                "from itself)")


def test_a_speedup_inside_the_noise_does_not_reach_any_goal():
    from helpers.exercises.registry import Speedup
    assert not Speedup(ratio=1.5, noise=1.8, verdict="within noise", baseline_s=(1.0,), candidate_s=(1.0,)
                       ).reaches(1.2)
