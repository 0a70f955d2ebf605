"""Chapter 5's exercises: each checker accepts its solution and refuses the starting code and each loophole."""

import re

import keras
import pytest
import tensorflow as tf
from conftest import run_python

import helpers
from helpers.exercises import ch5, check

LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    return out.rstrip("\n")


@pytest.fixture
def short_check(monkeypatch):
    """Loopholes are refused on what the training did, whatever the timing said: time less of it."""
    monkeypatch.setattr(ch5, "FUSED_REPEATS", 2)
    monkeypatch.setattr(ch5, "FUSED_STEPS", 64)


# ---------------------------------------------------------------------------- ch5.scaled_lr


def test_scaled_lr_solution_is_the_linear_rule(capsys):
    assert verdict(capsys, "ch5.scaled_lr", 0.4) == "[ch5.scaled_lr] Correct. Well done."


def test_scaled_lr_refuses_the_square_root_rule_for_sgd(capsys):
    out = verdict(capsys, "ch5.scaled_lr", 0.2)
    assert "square-root rule, for Adam-type optimizers" in out and "SGD with momentum" in out


# ---------------------------------------------------------------------------- ch5.fused_steps


def test_fused_steps_solution_is_accepted(capsys):
    # The real check (5 alternating timed fits of 1,024 steps per side) on this machine, busy or not.
    out = verdict(capsys, "ch5.fused_steps", lambda: ch5.fusing_model(steps_per_execution=32))
    assert out == "[ch5.fused_steps] Correct. Well done.", out


def test_fused_steps_refuses_the_starting_code_without_timing_it(capsys):
    out = verdict(capsys, "ch5.fused_steps", ch5.fusing_model)
    assert out.startswith("[ch5.fused_steps] Not yet: steps_per_execution is 1: every training step is still")


def test_fused_steps_refuses_a_model_instead_of_the_function(capsys):
    out = verdict(capsys, "ch5.fused_steps", ch5.fusing_model(steps_per_execution=32))
    assert "pass the function that builds and compiles the model" in out


def test_fused_steps_refuses_an_uncompiled_model(capsys):
    out = verdict(capsys, "ch5.fused_steps", helpers.models.reuters_bag_of_words)
    assert "must return a compiled Keras model" in out


def test_fused_steps_refuses_a_smaller_model(capsys, short_check):
    def smaller():
        model = keras.Sequential([keras.Input((ch5.FUSED_FEATURES,)), keras.layers.Dense(ch5.FUSED_CLASSES)])
        model.compile(optimizer="adam", loss=LOSS, steps_per_execution=32)
        return model

    assert "this is not the starting model and optimizer" in verdict(capsys, "ch5.fused_steps", smaller)


def test_fused_steps_refuses_another_optimizer(capsys, short_check):
    def sgd():
        model = ch5.fusing_model()
        model.compile(optimizer="sgd", loss=LOSS, steps_per_execution=32)
        return model

    assert "this is not the starting model and optimizer" in verdict(capsys, "ch5.fused_steps", sgd)


def test_fused_steps_refuses_training_fewer_steps(capsys, short_check):
    class HalfTheSteps(keras.Sequential):  # a fit that quietly trains half of what it is asked to
        def fit(self, *args, steps_per_epoch=None, **kwargs):
            return super().fit(*args, steps_per_epoch=steps_per_epoch // 2, **kwargs)

    def fewer():
        model = HalfTheSteps(ch5.fusing_model().layers)
        model.compile(optimizer="adam", loss=LOSS, steps_per_execution=32)
        return model

    out = verdict(capsys, "ch5.fused_steps", fewer)
    assert re.search(r"your model made 32 optimizer steps where the starting one made 64, in one fit", out), out


def test_fused_steps_refuses_a_setting_that_runs_past_the_epoch(capsys, short_check):
    out = verdict(capsys, "ch5.fused_steps", lambda: ch5.fusing_model(steps_per_execution=48))
    assert re.search(r"made 96 optimizer steps where the starting one made 64.*divides 64 \(yours is 48\)", out), out


def test_fused_steps_refuses_a_changed_learning_rate(capsys, short_check):
    def faster_rate():
        model = ch5.fusing_model()
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss=LOSS, steps_per_execution=32)
        return model

    out = verdict(capsys, "ch5.fused_steps", faster_rate)
    assert "your model's weights differ from the starting configuration's" in out, out


def test_fused_steps_times_a_model_built_in_a_strategy_as_a_copy_outside_it():
    # C5-X1: under a 2-replica MirroredStrategy on 2 logical CPUs fusing gained 1.0x and the right answer was refused.
    # The check now trains the learner's model and the starting one under the learner's strategy (32 examples per
    # replica: the same steps, the same weights), and times the same configuration rebuilt on one device.
    out = run_python(
        "import json, helpers\n"
        "helpers.setup(devices=2, verbose=False)\n"
        "import tensorflow as tf\n"
        "from helpers.exercises import ch5, registry\n"
        "ch5.FUSED_REPEATS, ch5.FUSED_STEPS = 1, 32\n"
        "built, build = [], ch5.fusing_model\n"
        "def recorded(steps_per_execution=1):\n"
        "    built.append([steps_per_execution, tf.distribute.get_strategy().num_replicas_in_sync])\n"
        "    return build(steps_per_execution)\n"
        "ch5.fusing_model = recorded\n"
        "ch5.timed_speedup = lambda a, b, repeats: registry.Speedup(3.0, 1.05, 'below', (1.0,), (0.3,))\n"
        "strategy = helpers.strategies.choose_strategy(verbose=False)\n"
        "def mirrored():\n"
        "    with strategy.scope():\n"
        "        return ch5.fusing_model(steps_per_execution=8)\n"
        "print(json.dumps([strategy.num_replicas_in_sync, built, ch5._fused_steps(mirrored)]))")
    replicas, built, hint = out
    assert replicas == 2
    assert built == [[8, 2], [1, 2], [1, 1], [8, 1]], built  # the learner's, the start in its strategy, two copies
    assert hint is None, hint


def test_fused_steps_hint_for_the_starting_code_does_not_name_the_argument(capsys):
    out = verdict(capsys, "ch5.fused_steps", ch5.fusing_model)
    assert "compile()" not in out and "section 6" in out


GLOBAL = ch5.STATIC_BATCH  # fixed by the check, whatever batch the learner names


def static_verdict(capsys, dataset):
    check("ch5.static_batches", dataset)
    return capsys.readouterr().out.strip()


def uneven_range():
    return tf.data.Dataset.range(10 * GLOBAL + 3).map(lambda i: (i, i))


def test_static_batches_accepts_dropping_the_partial_batch(capsys):
    assert static_verdict(capsys, uneven_range().batch(GLOBAL, drop_remainder=True)).endswith("Correct. Well done.")


def test_static_batches_refuses_the_starting_code(capsys):
    assert f"every batch must hold {GLOBAL}" in static_verdict(capsys, uneven_range().batch(GLOBAL))


def test_static_batches_does_not_hang_on_a_repeated_dataset(capsys):
    out = static_verdict(capsys, uneven_range().batch(GLOBAL, drop_remainder=True).repeat())
    assert "more than 10 batches, the range's whole batches: leave out repeat() and padding" in out


def test_static_batches_refuses_stand_in_batches_of_the_right_shape(capsys):
    stand_in = tf.data.Dataset.from_tensors((tf.zeros(GLOBAL, tf.int64),) * 2)
    assert "must hold the range's first 640 examples with their labels" in static_verdict(capsys, stand_in)


def test_static_batches_refuses_a_padded_last_batch_that_repeats_examples(capsys):
    padded = uneven_range().concatenate(uneven_range().take(GLOBAL - 3)).batch(GLOBAL, drop_remainder=True)  # 11
    assert "more than 10 batches" in static_verdict(capsys, padded)


def test_static_batches_refuses_batches_of_one_with_a_global_batch_of_one(capsys):
    # C5-X2: the learner once supplied the global batch, so ten batches of 1 "with a global batch of 1" passed.
    ones = tf.data.Dataset.range(10).map(lambda i: (i, i)).batch(1, drop_remainder=True)
    assert f"every batch must hold {GLOBAL}" in static_verdict(capsys, ones)
    assert "pass the dataset itself" in static_verdict(capsys, (ones, 1))


def test_static_batches_refuses_labels_that_are_not_the_range(capsys):
    # C5-X2: only the features were compared; the labels are now compared too.
    relabelled = tf.data.Dataset.range(10 * GLOBAL + 3).map(lambda i: (i, i * 0)).batch(GLOBAL, drop_remainder=True)
    assert "with their labels" in static_verdict(capsys, relabelled)


def test_static_batches_refuses_batch_then_filter_full_batches(capsys):
    # .batch(G).filter(full) keeps only whole batches, but the batch dimension stays unknown (None).
    full = uneven_range().batch(GLOBAL).filter(lambda x, y: tf.shape(x)[0] == GLOBAL)
    assert "(static size None): every batch must hold" in static_verdict(capsys, full)


def test_static_batches_refuses_take_then_batch(capsys):
    # .take(10 * G).batch(G) gives 10 whole batches, but batch() without drop_remainder leaves the size None.
    taken = uneven_range().take(10 * GLOBAL).batch(GLOBAL)
    assert "(static size None): every batch must hold" in static_verdict(capsys, taken)
