"""Chapter 5's exercises (TPUs): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises.registry import _close, exercise, timed_speedup


@exercise("ch5.scaled_lr")
def _scaled_lr(answer):
    # SGD with momentum (a ResNet, Goyal et al.'s setting): 0.1 at batch 256; 128 per chip x 8 chips = 1024 = 4x the
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
        return "128 is each chip's share; the global batch is 128 x 8 chips (replicas)."
    return "linear rule: new rate = old rate x (new global batch / old batch)."


STATIC_BATCH = 64  # the exercise's batch, fixed here: a learner's own "global batch" of 1 would make any batching pass
STATIC_WHOLE = 10  # range(10 * 64 + 3): 10 whole batches and 3 left over


@exercise("ch5.static_batches")
def _static_batches(answer):
    # Observed: one epoch of the learner's dataset (at most one batch more, so a repeat() cannot hang the check); a
    # TPU wants every batch the same shape, and the examples and labels must still be the range's, not a stand-in.
    import itertools

    import tensorflow as tf

    if not isinstance(answer, tf.data.Dataset):
        return ("pass the dataset itself: check(\"ch5.static_batches\", uneven); the check fixes the batch at "
                f"{STATIC_BATCH}.")
    spec = answer.element_spec
    if not isinstance(spec, tuple) or len(spec) != 2:
        return "each element must stay a (features, labels) pair, as the range's map gives it."
    whole = STATIC_WHOLE * STATIC_BATCH
    batches = list(itertools.islice(answer, STATIC_WHOLE + 1))
    sizes = [int(features.shape[0]) for features, _ in batches]
    static = spec[0].shape[0] if spec[0].shape.rank else None
    if static != STATIC_BATCH or any(size != STATIC_BATCH for size in sizes):
        return (f"batch sizes {sorted(set(sizes))} (static size {static}): every batch must hold {STATIC_BATCH}, "
                "known before the first step; drop the last, partial batch when batching.")
    if len(batches) > STATIC_WHOLE:
        return (f"the dataset gives more than {STATIC_WHOLE} batches, the range's whole batches: leave out "
                "repeat() and padding here, the check reads one epoch.")
    pairs = sorted((int(i), int(j)) for features, labels in batches
                   for i, j in zip(features.numpy().ravel(), labels.numpy().ravel()))
    if pairs != [(i, i) for i in range(whole)]:
        return (f"the batches must hold the range's first {whole} examples with their labels, each once (they hold "
                f"{len(pairs)} examples, not those): keep uneven's range and map, and change only how it is batched.")
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
    # Observed: the learner's compiled model (its steps_per_execution, its weights' shapes) and what it trains: the
    # same batches and number of steps as the starting configuration, ending with the same weights. Measured: the
    # same training timed against the starting configuration on one device, outside any strategy: under
    # MirroredStrategy on logical devices each step keeps its all-reduce, which fusing does not remove, and the gain
    # can sink into the noise of shared cores. A model built in a strategy's scope is timed as a copy outside it.
    import keras
    import numpy as np
    import tensorflow as tf

    if not callable(answer) or isinstance(answer, keras.Model):
        return "pass the function that builds and compiles the model (fused_model), not a model or its result."
    model = answer()
    if not isinstance(model, keras.Model) or getattr(model, "optimizer", None) is None:
        return "fused_model() must return a compiled Keras model (call model.compile(...) before returning it)."
    fused = model.steps_per_execution
    if not isinstance(fused, int) or fused < 2:
        return (f"steps_per_execution is {fused!r}: every training step is still its own call from Python into "
                "the device (section 6 shows what changes that).")
    strategy = model.distribute_strategy
    outside = strategy is tf.distribute.get_strategy()  # built outside any strategy's scope
    with strategy.scope():  # the same placement as the learner's model, for the same training
        start = fusing_model(steps_per_execution=1)
    shapes, start_shapes = [w.shape for w in model.get_weights()], [w.shape for w in start.get_weights()]
    if shapes != start_shapes or type(model.optimizer) is not type(start.optimizer):
        return ("this is not the starting model and optimizer (other weights or another optimizer): keep the "
                "model and Adam as given, and change only steps_per_execution.")
    start.set_weights(model.get_weights())  # the same starting point: the results must then match
    dataset = fusing_data(FUSED_PER_REPLICA * strategy.num_replicas_in_sync, FUSED_STEPS)  # per replica x replicas

    def train(which, data=dataset):
        return lambda: which.fit(data, epochs=1, steps_per_epoch=FUSED_STEPS, verbose=0)

    train(start)()  # untimed: each side traces its training function once, and this fit is what gets compared
    train(model)()
    steps, start_steps = (int(m.optimizer.iterations.numpy()) for m in (model, start))
    if steps != start_steps:
        return (f"your model made {steps:,} optimizer steps where the starting one made {start_steps:,}, in one fit "
                f"of {FUSED_STEPS} steps: fusing must run every step once. Keras runs whole executions, so choose a "
                f"steps_per_execution that divides {FUSED_STEPS} (yours is {fused}).")
    apart = max(float(np.max(np.abs(a - b))) for a, b in zip(model.get_weights(), start.get_weights()))
    if apart > 1e-4:
        return (f"after the same {steps:,} steps on the same batches your model's weights differ from the starting "
                f"configuration's by up to {apart:.2g}: step fusing changes how steps are launched, not what they "
                "compute. Change only steps_per_execution.")
    if outside:
        speed = timed_speedup(train(start), train(model), repeats=FUSED_REPEATS)
    else:  # the same configuration, rebuilt on one device, is what gets timed
        copy_start, copy = fusing_model(steps_per_execution=1), fusing_model(steps_per_execution=fused)
        copy.set_weights(copy_start.get_weights())
        one_device = fusing_data(FUSED_PER_REPLICA, FUSED_STEPS)
        train(copy_start, one_device)()
        train(copy, one_device)()
        speed = timed_speedup(train(copy_start, one_device), train(copy, one_device), repeats=FUSED_REPEATS)
    if not speed.reaches(FUSED_GOAL):
        return (f"with steps_per_execution={fused} your model trained the same {FUSED_STEPS} steps per fit "
                f"{speed}; aim for {FUSED_GOAL:g}x and outside that noise: fuse more steps per call, or run the check "
                "again "
                "if the machine was busy.")
    return None
