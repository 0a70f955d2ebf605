"""Chapter 5's exercises (TPUs): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises.registry import _close, exercise, timed_speedup


@exercise("ch5.scaled_lr")
def _scaled_lr(answer):
    # SGD with momentum (a ResNet, Goyal et al.'s setting): 0.1 at batch 256; 128 per core x 8 cores = 1024 = 4x the
    # batch -> the linear rule gives 4x the learning rate.
    if _close(answer, 0.4):
        return None
    if _close(answer, 0.2):
        return ("0.1 x sqrt(4) is the square-root rule, for Adam-type optimizers; this model trains with SGD with "
                "momentum, where the rate grows linearly with the batch.")
    if _close(answer, 0.025):
        return "the batch grew 4x, so the learning rate grows 4x too: multiply, do not divide."
    if _close(answer, 0.1):
        return "with 4x the examples per step there are 4x fewer steps: scale the rate with the batch."
    if _close(answer, 0.05):
        return "128 is each core's share; the global batch is 128 x 8 cores."
    return "linear rule: new rate = old rate x (new global batch / old batch)."


@exercise("ch5.static_batches")
def _static_batches(answer):
    # Observed: one epoch of the learner's dataset (at most one batch more, so a repeat() cannot hang the check); a
    # TPU wants every batch the same shape, and the examples must still be the range's, not a stand-in.
    import itertools

    dataset, global_batch = answer
    whole = 10 * global_batch  # the starting code's range(10 * GLOBAL_BATCH + 3): 10 whole batches and 3 left over
    batches = list(itertools.islice(dataset, 11))
    sizes = [int(features.shape[0]) for features, _ in batches]
    static = dataset.element_spec[0].shape[0]
    if static is None or any(size != global_batch for size in sizes):
        return (f"batch sizes {sorted(set(sizes))} (static size {static}): every batch must hold {global_batch}, "
                "known before the first step; drop the last, partial batch when batching.")
    if len(batches) > 10:
        return (f"the dataset gives more than {whole // global_batch} batches, the range's whole batches: leave out "
                "repeat() and padding here, the check reads one epoch.")
    seen = sorted(int(i) for features, _ in batches for i in features.numpy())
    if seen != list(range(whole)):
        return (f"the batches must hold the range's first {whole} examples, each once (they hold {len(seen)} "
                "examples, not those): keep uneven's range and map, and change only how it is batched.")
    return None


def fusing_model(steps_per_execution=1):
    """The step-fusing exercise's model as the notebook gives it (`fused_model`, with steps_per_execution=1): a
    classifier so small that each training step is little work next to the call from Python that launches it."""
    import keras

    model = keras.Sequential([keras.Input((FUSED_FEATURES,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(FUSED_CLASSES)], name="tiny_classifier")
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  steps_per_execution=steps_per_execution)
    return model


def fusing_data(global_batch: int, steps: int):
    """The exercise's training data: `steps` batches of `global_batch` examples with FUSED_FEATURES features and a
    learnable class, in a fixed order (no shuffle), repeated: each fit starts again at the same first batch."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(steps * global_batch, FUSED_FEATURES)).astype("float32")
    y = np.argmax(x @ rng.normal(size=(FUSED_FEATURES, FUSED_CLASSES)), axis=1)
    return (tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch, drop_remainder=True).cache().repeat()
            .prefetch(tf.data.AUTOTUNE))


FUSED_FEATURES, FUSED_CLASSES = 20, 4
FUSED_STEPS = 1024  # training steps per timed fit call, 32 examples per replica each
FUSED_PER_REPLICA = 32
FUSED_REPEATS = 5  # timed calls per side (timed_speedup alternates them), after one untimed call each
FUSED_GOAL = 1.5  # the starting code's time / the learner's


@exercise("ch5.fused_steps")
def _fused_steps(answer):
    # Observed: the learner's compiled model (its steps_per_execution, its weights' shapes); measured: the same
    # training (the same batches, the same number of steps per fit) timed against the starting configuration; and
    # then the result: both made the same optimizer steps and ended with the same weights.
    import keras
    import numpy as np

    if not callable(answer) or isinstance(answer, keras.Model):
        return "pass the function that builds and compiles the model (fused_model), not a model or its result."
    model = answer()
    if not isinstance(model, keras.Model) or getattr(model, "optimizer", None) is None:
        return "fused_model() must return a compiled Keras model (call model.compile(...) before returning it)."
    fused = model.steps_per_execution
    if not isinstance(fused, int) or fused < 2:
        return (f"steps_per_execution is {fused!r}: every training step is still its own call from Python into "
                "the device. Raise it in compile(), so that one call runs several steps.")
    strategy = model.distribute_strategy
    with strategy.scope():  # the same placement as the learner's model: under its strategy, if it has one
        start = fusing_model(steps_per_execution=1)
    shapes, start_shapes = [w.shape for w in model.get_weights()], [w.shape for w in start.get_weights()]
    if shapes != start_shapes or type(model.optimizer) is not type(start.optimizer):
        return ("this is not the starting model and optimizer (other weights or another optimizer): keep the "
                "model and Adam as given, and change only steps_per_execution.")
    start.set_weights(model.get_weights())  # the same starting point: the results must then match
    dataset = fusing_data(FUSED_PER_REPLICA * strategy.num_replicas_in_sync, FUSED_STEPS)  # per replica x replicas

    def train(which):
        return lambda: which.fit(dataset, epochs=1, steps_per_epoch=FUSED_STEPS, verbose=0)

    train(start)()  # untimed: each side traces its training function once
    train(model)()
    speed = timed_speedup(train(start), train(model), repeats=FUSED_REPEATS)
    calls = FUSED_REPEATS + 1
    steps, start_steps = (int(m.optimizer.iterations.numpy()) for m in (model, start))
    if steps != start_steps:
        return (f"your model made {steps:,} optimizer steps where the starting one made {start_steps:,}, in "
                f"{calls} fits of {FUSED_STEPS} steps each: fusing must run every step once. Keras runs whole "
                f"executions, so choose a steps_per_execution that divides {FUSED_STEPS} (yours is {fused}).")
    apart = max(float(np.max(np.abs(a - b))) for a, b in zip(model.get_weights(), start.get_weights()))
    if apart > 1e-4:
        return (f"after the same {steps:,} steps on the same batches your model's weights differ from the starting "
                f"configuration's by up to {apart:.2g}: step fusing changes how steps are launched, not what they "
                "compute. Change only steps_per_execution.")
    if not speed.reaches(FUSED_GOAL):
        return (f"with steps_per_execution={fused} your model trained the same {FUSED_STEPS} steps per fit "
                f"{speed.ratio:.2f}x as fast as the starting code, which varied {speed.noise:.2f}x against itself; "
                f"aim for {FUSED_GOAL:g}x and outside that noise: fuse more steps per call, or run the check again "
                "if the machine was busy.")
    return None
