"""Chapter 3's experiment: the Reuters model under each dtype policy, with and without XLA
(`python -m helpers.bench mixed-precision`)."""

from __future__ import annotations

import keras

# The notebook-cell block below calls helpers.models, helpers.timing and helpers.data by module, as the notebook does.
import helpers.data
import helpers.models
import helpers.timing
from helpers.data import load_reuters
from helpers.plots import bars
from helpers.results import Result

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")


# notebook cell: train_with_policy
def train_with_policy(policy, jit_compile, data, *, batch, steps, epochs, learning_rate=1e-3, seed=0):
    """Train the Reuters model under a dtype policy ("float32", "mixed_float16", "mixed_bfloat16"), with or without
    XLA; return steady steps/s (the median of the epochs after the first, which traces and compiles), each of those
    epochs' steps/s (their spread), and validation accuracy."""
    keras.config.set_dtype_policy(policy)  # layers built from here on compute in the policy's dtype
    try:
        keras.utils.set_random_seed(seed)
        model = helpers.models.reuters_conv1d(vocab_size=data.vocab_size, num_classes=data.num_classes)
        model.compile(optimizer=keras.optimizers.Nadam(learning_rate), loss=helpers.models.matching_loss(),
                      metrics=["accuracy"], jit_compile=jit_compile)  # adds a LossScaleOptimizer for mixed_float16
        timer = helpers.timing.EpochTimer(samples_per_epoch=steps * batch)
        train = helpers.data.make_dataset(data.x_train, data.y_train, batch, repeat=True)
        model.fit(train, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[timer])
        _, accuracy = model.evaluate(data.x_test, data.y_test, batch_size=256, verbose=0)
    finally:
        keras.config.set_dtype_policy("float32")  # never leak a policy into later code
    return {"policy": policy, "xla": jit_compile, "steps_per_s": steps / timer.steady_seconds,
            "epoch_steps_per_s": [steps / seconds for seconds in timer.epoch_seconds[1:]],
            "val_accuracy": float(accuracy), "first_epoch_s": timer.epoch_seconds[0],
            "optimizer": type(model.optimizer).__name__}
# end of notebook cell


def mixed_precision(fast: bool) -> Result:
    """float32 vs mixed_bfloat16 vs mixed_float16, each with and without XLA: steps/s and accuracy."""
    data = load_reuters()
    n = 2048 if fast else len(data.x_train)
    subset = data.head(n)
    batch = 64
    # Warm-up: the first training run in a process pays one-time costs that its first epoch does not absorb.
    train_with_policy("float32", False, subset, batch=batch, steps=8, epochs=2)
    runs = [train_with_policy(policy, xla, subset, batch=batch, steps=n // batch // (2 if fast else 1),
                              epochs=5 if fast else 6,
                              learning_rate=1e-2) for policy in POLICIES for xla in (False, True)]
    base = runs[0]["steps_per_s"]
    rows = [[r["policy"], r["xla"], round(r["steps_per_s"], 2), round(r["steps_per_s"] / base, 2),
             round(r["val_accuracy"], 3)] for r in runs]
    fig = bars([f"{r[0].removeprefix('mixed_')}{' +XLA' if r[1] else ''}" for r in rows],
                             [r[2] for r in rows], ylabel="training steps/s (steady)",
                             title=f"Reuters Conv1D, batch {batch}, per dtype policy")
    return Result("mixed-precision", ["policy", "xla", "steps_per_s", "vs_float32", "val_accuracy"], rows, fig)
