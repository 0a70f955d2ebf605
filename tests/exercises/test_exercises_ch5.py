"""Chapter 5's exercises: each checker accepts its solution and refuses the starting code and each loophole. The
solutions and the starting code are the notebook's, read when each test runs (solutions.py)."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf
from conftest import run_python
from solutions import folded_solution, inline_code, run, starting_code, with_solution

from helpers.exercises import ch5, check


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return out.rstrip("\n")


# ---------------------------------------------------------------------------- ch5.scaled_lr


def test_scaled_lr_solution_is_the_linear_rule(capsys):
    assert verdict(capsys, "ch5.scaled_lr", 0.4) == "[ch5.scaled_lr] Correct. Well done."


def test_scaled_lr_refuses_the_square_root_rule_for_sgd(capsys):
    out = verdict(capsys, "ch5.scaled_lr", 0.2)
    assert "square-root rule, for Adam-type optimizers" in out and "SGD with momentum" in out


# ---------------------------------------------------------------------------- ch5.fused_steps

# The notebook's exercise cell (START) and the cell as its folded solution changes it (SOLVED), then the loopholes,
# all checked in one Python on JAX (the check refuses any other backend). The solution and the starting code are
# checked at the real sizes (1,024 steps, 5 timed rounds): the timing is what accepts the one and refuses the other.
# The loopholes are refused on what the training did, before any timing: they run with fewer steps and rounds.
FUSED_CASES = """
import contextlib, io, json
import keras
from helpers.chapters.ch05_tpu import stacked_trainer
from helpers.exercises import ch5, check


def verdict(answer):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        check("ch5.fused_steps", answer)
    return out.getvalue().strip()


def notebook_trainer(cell):
    namespace = {"stacked_trainer": stacked_trainer}
    exec(cell, namespace)
    return namespace["fused_trainer"]


def half_the_batches(model):
    train = stacked_trainer(model, 32)
    return lambda xs, ys: train(xs[::2], ys[::2])


def reversed_batches(model):
    train = stacked_trainer(model, 32)
    return lambda xs, ys: train(xs[::-1], ys[::-1])


def twice(model):
    train = stacked_trainer(model, 32)
    return lambda xs, ys: (train(xs, ys), train(xs, ys))


def another_model(model):
    return stacked_trainer(ch5.fusing_model(), 32)


def first_call_only(model):
    train, calls = stacked_trainer(model, 32), []

    def once(xs, ys):  # trains on its first call, does nothing after
        calls.append(1)
        if len(calls) == 1:
            train(xs, ys)

    return once


def reversed_after_the_first_call(model):
    train, calls = stacked_trainer(model, 32), []

    def later_reversed(xs, ys):  # the right steps on every call, on the batches in another order after the first
        calls.append(1)
        train(xs, ys) if len(calls) == 1 else train(xs[::-1], ys[::-1])

    return later_reversed


def another_learning_rate(model):
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss=model.loss)
    return stacked_trainer(model, 32)


found = {"backend": keras.backend.backend(), "solution": verdict(notebook_trainer(SOLVED)),
         "start": verdict(notebook_trainer(START))}
ch5.FUSED_STEPS, ch5.FUSED_REPEATS = 64, 2  # compare() needs 2 rounds
found.update({
    "half the batches": verdict(half_the_batches),
    "nothing": verdict(lambda model: lambda xs, ys: None),
    "twice": verdict(twice),
    "another model": verdict(another_model),
    "first call only": verdict(first_call_only),
    "reversed after the first call": verdict(reversed_after_the_first_call),
    "reversed": verdict(reversed_batches),
    "another learning rate": verdict(another_learning_rate),
    "a model": verdict(ch5.fusing_model()),
    "not callable": verdict(lambda model: 32),
    "a trainer": verdict(stacked_trainer(ch5.fusing_model(), 32)),
})
print(json.dumps(found))
"""


def test_fused_steps_accepts_the_solution_refuses_the_rest():
    start = starting_code("ch5.fused_steps")
    cells = f"START = {start!r}\nSOLVED = {with_solution(start, folded_solution('ch5.fused_steps'))!r}\n"
    found = run_python(cells + FUSED_CASES, KERAS_BACKEND="jax")
    assert found["backend"] == "jax"
    # The real check (5 alternating timed rounds of 1,024 steps per side) on this machine, busy or not.
    assert found["solution"] == "[ch5.fused_steps] Correct. Well done.", found["solution"]
    # The starting code against itself: refused on its timing, not on what it trained.
    assert re.match(r"\[ch5\.fused_steps\] Not yet: your trainer trained the same 1024 steps \d+\.\dx as "
                    r"fast as the starting code \(", found["start"]), found["start"]
    assert "aim for 1.5x and outside that noise: run more steps in each compiled call" in found["start"]
    steps = "[ch5.fused_steps] Not yet: your trainer made {} optimizer steps where the starting one made 64 on the " \
            "same 64 batches: fusing must run every step once, on this model."
    assert found["half the batches"] == steps.format(32)
    assert found["nothing"] == steps.format(0)
    assert found["twice"] == steps.format(128)
    assert found["another model"] == steps.format(0)  # the model it was given never trained
    assert found["first call only"] == ("[ch5.fused_steps] Not yet: in the timed calls your trainer made 0 optimizer "
                                        "steps where 2 calls on 64 batches make 128: every call must train every step.")
    assert found["reversed after the first call"].startswith(
        "[ch5.fused_steps] Not yet: a later call of your trainer, from the starting configuration's weights, ended "), \
        found["reversed after the first call"]
    for case in ("reversed", "another learning rate"):  # the same number of steps, other updates
        assert found[case].startswith("[ch5.fused_steps] Not yet: after the same 64 steps on the same batches your "
                                      "model's weights differ from the starting configuration's by up to "), case
        assert found[case].endswith("Change only STEPS_PER_CALL."), case
    passed_too_much = ("[ch5.fused_steps] Not yet: pass the function that makes the trainer (fused_trainer), not a "
                       "model or what it returns.")
    assert found["a model"] == passed_too_much
    assert found["not callable"] == ("[ch5.fused_steps] Not yet: fused_trainer(model) must return the function that "
                                     "trains the model (as stacked_trainer does).")
    # What fused_trainer returns, a trainer, is callable too: called with the model alone it raises, and check says so.
    assert found["a trainer"].startswith("[ch5.fused_steps] Not yet: could not check this answer (TypeError: "), \
        found["a trainer"]


def test_fused_steps_under_tensorflow_says_the_check_trains_with_jax(capsys):
    called = []
    assert keras.backend.backend() == "tensorflow"  # this process: Keras on TensorFlow
    out = verdict(capsys, "ch5.fused_steps", lambda model: called.append(model))
    assert out == ("[ch5.fused_steps] Not yet: this check trains with JAX: run the chapter from the top, whose device "
                   "cell sets KERAS_BACKEND=jax before Keras is imported.")
    assert called == []  # no model was made or handed over


# ---------------------------------------------------------------------------- ch5.static_batches

GLOBAL = ch5.STATIC_BATCH  # fixed by the check, whatever batch the learner names
WHOLE = ch5.STATIC_WHOLE * GLOBAL  # 640 of the range's 643 numbers
STATIC = "ch5.static_batches"
NOTEBOOK = {}  # the notebook's classes, read again for each test (fixture below)


@pytest.fixture(autouse=True)
def notebook_classes():
    """Uneven, the exercise cell's starting code (batches of 64 numbers of a range, each its own label, and a last
    batch of 3), and Whole, the same class with the `# edit me` line replaced by the folded solution's `return`."""
    start = starting_code(STATIC)
    edited = next(line for line in start.splitlines() if "# edit me" in line)
    fix = next(code for code in inline_code(STATIC) if code.startswith("return "))
    solved = start.replace(edited, edited[:len(edited) - len(edited.lstrip())] + fix)
    NOTEBOOK.update(Uneven=run(start, "Uneven", keras=keras, np=np),
                    Whole=run(solved, "Uneven", keras=keras, np=np))


def made(change=None, base="Uneven", **kwargs):
    """An instance of the notebook's class `base`, with the methods of the class `change` in place of its own."""
    cls = NOTEBOOK[base] if change is None else type(change.__name__, (change, NOTEBOOK[base]), {})
    return cls(**kwargs)


class WrappedAround:  # on Uneven
    """Pads the last batch to 64 with the range's first numbers: 11 batches of 64, 61 numbers read twice."""

    def __getitem__(self, index):
        part = np.take(self.numbers, np.arange(index * self.batch_size, (index + 1) * self.batch_size), mode="wrap")
        return part, part


class ElevenWhole:  # on Whole
    """Counts 11 batches, each whole: the eleventh is the first again."""

    def __len__(self):
        return super().__len__() + 1

    def __getitem__(self, index):
        return super().__getitem__(index % super().__len__())


class NotPairs:  # on Whole
    def __getitem__(self, index):
        return super().__getitem__(index)[0]  # the features alone


class Zeros:  # on Whole
    def __getitem__(self, index):
        return np.zeros(self.batch_size, "int64"), np.zeros(self.batch_size, "int64")


class Relabelled:  # on Whole
    def __getitem__(self, index):
        part, _ = super().__getitem__(index)
        return part, part * 0


class LastWhole:  # on Whole
    """Whole batches of 64, but the range's last 640 numbers: the first 3 left out instead of the last."""

    def __getitem__(self, index):
        part = self.numbers[3 + index * self.batch_size : 3 + (index + 1) * self.batch_size]
        return part, part


class TwelveCounted:  # on Whole
    def __len__(self):
        return 12


def static_verdict(capsys, dataset):
    return verdict(capsys, STATIC, dataset)


def test_static_batches_accepts_counting_whole_batches_only(capsys):
    assert static_verdict(capsys, made(base="Whole")) == "[ch5.static_batches] Correct. Well done."


def test_static_batches_refuses_the_starting_code_with_the_batch_sizes(capsys):
    out = static_verdict(capsys, made())
    assert out.startswith(f"[ch5.static_batches] Not yet: batch sizes [3, {GLOBAL}]: every batch must hold {GLOBAL}, "
                          "one shape for XLA; leave the last, partial batch out"), out


@pytest.mark.parametrize("answer", [
    lambda: [(np.arange(GLOBAL), np.arange(GLOBAL))],  # a list of batches
    lambda: tf.data.Dataset.range(WHOLE).map(lambda i: (i, i)).batch(GLOBAL, drop_remainder=True),  # TensorFlow's way
    lambda: NOTEBOOK["Whole"],  # the class, not an instance
], ids=["list", "tf.data", "class"])
def test_static_batches_wants_a_pydataset_instance(capsys, answer):
    assert static_verdict(capsys, answer()) == (
        "[ch5.static_batches] Not yet: pass the dataset itself, an instance of your PyDataset class: "
        f"check(\"ch5.static_batches\", uneven); the check fixes the batch at {GLOBAL}.")


@pytest.mark.parametrize("change, base", [(WrappedAround, "Uneven"), (ElevenWhole, "Whole")],
                         ids=["wrap-around", "eleven-whole"])
def test_static_batches_refuses_an_eleventh_whole_batch(capsys, change, base):
    assert static_verdict(capsys, made(change, base)) == (
        f"[ch5.static_batches] Not yet: 11 batches of {GLOBAL}: the range has 10 whole ones, each read once.")


def test_static_batches_refuses_batches_that_are_not_pairs(capsys):
    assert static_verdict(capsys, made(NotPairs, "Whole")) == (
        "[ch5.static_batches] Not yet: each batch must stay a (features, labels) pair, as __getitem__ gives it.")


@pytest.mark.parametrize("change", [Zeros, Relabelled, LastWhole], ids=["zeros", "labels", "last-640"])
def test_static_batches_refuses_the_right_shapes_with_other_numbers(capsys, change):
    assert static_verdict(capsys, made(change, "Whole")) == (
        f"[ch5.static_batches] Not yet: the batches must hold the range's first {WHOLE} numbers with their labels, "
        "each once: keep __getitem__ as it is and change only how many batches __len__ counts.")


@pytest.mark.parametrize("change, kwargs, count", [(TwelveCounted, {}, 12), (None, {"batch_size": 1}, 643)],
                         ids=["twelve", "batches-of-one"])
def test_static_batches_refuses_counts_beyond_the_whole_batches_before_reading_them(capsys, change, kwargs, count):
    # C5-X2: the learner once named the batch, so batches of 1 passed; the check fixes it at 64.
    assert static_verdict(capsys, made(change, "Whole", **kwargs)) == (
        f"[ch5.static_batches] Not yet: len(dataset) is {count}: the range holds 10 whole batches of {GLOBAL} and "
        "3 examples left over; count whole batches only.")


class TenCounted:  # on Uneven
    """Counts this range's 10 whole batches by hand: right here, wrong for any other range."""

    def __len__(self):
        return 10


class CountedFromAnotherDefault:  # on Uneven
    """Leaves __len__ as given and moves the default range to 640: whole batches for that range only."""

    def __init__(self, count=10 * 64, batch_size=64):
        super().__init__(count, batch_size)


class NoCountArgument:  # on Whole
    def __init__(self):
        super().__init__()


@pytest.mark.parametrize("change", [TenCounted, CountedFromAnotherDefault], ids=["fixed count", "other default"])
def test_static_batches_refuses_a_count_that_fits_only_this_range(capsys, change):
    out = static_verdict(capsys, made(change))
    assert f"(count={ch5.OTHER_COUNT}) gives batch sizes" in out and "not a fixed number" in out, out


def test_static_batches_asks_to_keep_the_init_arguments(capsys):
    out = static_verdict(capsys, made(NoCountArgument, "Whole"))
    assert f"NoCountArgument(count={ch5.OTHER_COUNT}) failed (TypeError" in out and "keep __init__'s" in out, out
