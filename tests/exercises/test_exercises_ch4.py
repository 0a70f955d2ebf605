"""Chapter 4's exercise checkers: the right answers pass, the starting code and every shortcut found are refused.
The solution and the starting code are the notebook's, read when each test runs (solutions.py)."""

import keras
import pytest
import tensorflow as tf
from solutions import definition, folded_solution, run, starting_code

from helpers.exercises import check

NOT_YET = "[ch4.loss_scaling] Not yet: "


def verdict(capsys, answer):
    assert check("ch4.loss_scaling", answer) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.rstrip("\n")


def train_step(solution=None):
    """The exercise's train_step: the starting code, or with `solution` (a line that scales the loss) added inside
    the tape and the gradients taken of what that line names, as the folded solution says."""
    code = definition(starting_code("ch4.loss_scaling"), "train_step")
    if solution is not None:
        loss_line = next(line for line in code.splitlines() if line.lstrip().startswith("loss = "))
        indent = loss_line[:len(loss_line) - len(loss_line.lstrip())]
        code = code.replace(loss_line, f"{loss_line}\n{indent}{solution}")
        code = code.replace("tape.gradient(loss,", f"tape.gradient({solution.split(' = ')[0]},")
    return run(code, "train_step", tf=tf)


def starting_step():  # the notebook's starting code
    return train_step()


def solution_step():  # the starting code with the folded solution's line
    return train_step(folded_solution("ch4.loss_scaling"))


def test_the_solution_is_accepted(capsys):
    assert verdict(capsys, solution_step()) == "[ch4.loss_scaling] Correct. Well done."


def test_the_solution_inside_a_tf_function_is_accepted(capsys):
    assert verdict(capsys, tf.function(solution_step())) == "[ch4.loss_scaling] Correct. Well done."


def test_scaling_by_hand_and_unscaling_before_the_update_is_accepted(capsys):
    def by_hand(model, optimizer, tiny_loss, x, y):
        with tf.GradientTape() as tape:
            loss = tiny_loss(y, model(x, training=True))
            scaled = loss * 1024.0
        gradients = [g / 1024.0 for g in tape.gradient(scaled, model.trainable_variables)]
        optimizer.inner_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    assert verdict(capsys, by_hand) == "[ch4.loss_scaling] Correct. Well done."


def test_the_starting_code_is_refused(capsys):
    assert verdict(capsys, starting_step()) == (
        NOT_YET + "the first layer's weights did not move: its float16 gradients underflowed to zero. Compute the "
        "gradients of optimizer.scale_loss(loss) instead of loss (apply_gradients unscales them).")


def test_a_loss_of_its_own_instead_of_the_tiny_one_is_refused(capsys):
    # The old loophole: delete the "* 1e-7" and the gradients no longer underflow, with no loss scaling at all.
    def own_loss(model, optimizer, tiny_loss, x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss

    out = verdict(capsys, own_loss)
    assert out.startswith(NOT_YET + "the first layer moved ") and "Train on that loss unchanged" in out, out


def test_a_scaled_loss_that_is_never_unscaled_is_refused(capsys):
    def scaled_only(model, optimizer, tiny_loss, x, y):
        with tf.GradientTape() as tape:
            loss = tiny_loss(y, model(x, training=True)) * 2.0**15
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.inner_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    out = verdict(capsys, scaled_only)
    assert out.startswith(NOT_YET + "the first layer moved 3.28e+04x as far as one step"), out


def in_float32(model, optimizer, tiny_loss, x, y):
    # In float32 the gradients do not underflow: the step is right, with no loss scaling at all.
    model.layers[0].dtype_policy = "float32"
    with tf.GradientTape() as tape:
        loss = tiny_loss(y, model(x, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.inner_optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss


def test_computing_in_float32_instead_of_scaling_is_refused(capsys):
    out = verdict(capsys, in_float32)
    assert out.startswith(NOT_YET + "keep the model in mixed_float16 (") and out.endswith(
        " computed in float32 during the step): scale the loss instead of changing the dtype."), out


def test_c4_x2_computing_in_float32_and_restoring_the_policy_after_the_step_is_refused(capsys):
    # C4-X2: the checker used to read the layers' policy only after the step; it now records what they computed in.
    def switched_and_restored(model, optimizer, tiny_loss, x, y):
        loss = in_float32(model, optimizer, tiny_loss, x, y)
        model.layers[0].dtype_policy = "mixed_float16"
        return loss

    out = verdict(capsys, switched_and_restored)
    assert out.startswith(NOT_YET + "keep the model in mixed_float16 (") and (
        "computed in float32 during the step" in out), out


def test_c4_x1_a_hard_coded_2_to_the_15_factor_is_refused(capsys):
    # C4-X1: multiplying by Keras's default initial scale instead of asking the optimizer for its current scale
    # passed while the check ran at that scale; it starts at 2^12, as a scale that has moved would be.
    def fixed_factor(model, optimizer, tiny_loss, x, y):
        with tf.GradientTape() as tape:
            loss = tiny_loss(y, model(x, training=True))
            scaled = loss * 2.0**15
        gradients = tape.gradient(scaled, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    out = verdict(capsys, fixed_factor)
    assert out.startswith(NOT_YET + "the first layer moved 8x as far as one step"), out


def test_a_value_instead_of_a_function_is_refused(capsys):
    assert verdict(capsys, 0.5) == NOT_YET + "pass the function train_step itself (without calling it)."


def test_the_check_leaves_the_global_dtype_policy_alone(capsys):
    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        verdict(capsys, solution_step())
        assert keras.config.dtype_policy().name == "mixed_bfloat16"
    finally:
        keras.config.set_dtype_policy("float32")


@pytest.mark.parametrize("answer", [starting_step, solution_step])
def test_the_check_does_not_change_with_the_global_policy(capsys, answer):
    answer = answer()
    first = verdict(capsys, answer)
    keras.config.set_dtype_policy("mixed_float16")
    try:
        assert verdict(capsys, answer) == first
    finally:
        keras.config.set_dtype_policy("float32")
