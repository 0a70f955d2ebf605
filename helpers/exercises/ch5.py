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
OTHER_COUNT = 5 * 64 + 7  # a second range the learner's class must batch the same way


@exercise("ch5.static_batches")
def _static_batches(answer):
    # Observed: len(answer) batches of the learner's PyDataset, read by index as fit reads them; XLA wants every
    # batch the same shape, and the examples and labels must still be the range's, not a stand-in.
    import keras
    import numpy as np

    if not isinstance(answer, keras.utils.PyDataset):
        return ("pass the dataset itself, an instance of your PyDataset class: check(\"ch5.static_batches\", "
                f"uneven); the check fixes the batch at {STATIC_BATCH}.")
    count = len(answer)
    if not 1 <= count <= STATIC_WHOLE + 1:
        return (f"len(dataset) is {count}: the range holds {STATIC_WHOLE} whole batches of {STATIC_BATCH} and 3 "
                "examples left over; count whole batches only.")
    batches = [answer[index] for index in range(count)]
    if not all(isinstance(batch, tuple) and len(batch) == 2 for batch in batches):
        return "each batch must stay a (features, labels) pair, as __getitem__ gives it."
    sizes = [len(np.asarray(features)) for features, _ in batches]
    if any(size != STATIC_BATCH for size in sizes):
        return (f"batch sizes {sorted(set(sizes))}: every batch must hold {STATIC_BATCH}, one shape for XLA; leave "
                "the last, partial batch out (what __len__ counts decides which batches fit reads).")
    if count != STATIC_WHOLE:
        return f"{count} batches of {STATIC_BATCH}: the range has {STATIC_WHOLE} whole ones, each read once."
    pairs = sorted((int(i), int(j)) for features, labels in batches
                   for i, j in zip(np.asarray(features).ravel(), np.asarray(labels).ravel()))
    whole = STATIC_WHOLE * STATIC_BATCH
    if pairs != [(i, i) for i in range(whole)]:
        return (f"the batches must hold the range's first {whole} numbers with their labels, each once: keep "
                "__getitem__ as it is and change only how many batches __len__ counts.")
    try:  # another range: __len__ must count whole batches of any count, not only of this one
        other = type(answer)(count=OTHER_COUNT)
        sizes = [len(np.asarray(other[index][0])) for index in range(len(other))]
    except Exception as err:
        return (f"{type(answer).__name__}(count={OTHER_COUNT}) failed ({type(err).__name__}: {err}): keep __init__'s "
                "arguments as given, and count the whole batches in __len__.")
    if sizes != [STATIC_BATCH] * (OTHER_COUNT // STATIC_BATCH):
        return (f"{type(answer).__name__}(count={OTHER_COUNT}) gives batch sizes {sizes}: __len__ must count the whole "
                f"batches of whatever range it is given ({OTHER_COUNT // STATIC_BATCH} here), not a fixed number.")
    return None


FUSED_FEATURES, FUSED_CLASSES = 20, 4
FUSED_STEPS = 1024  # training steps per timed call of a trainer, FUSED_BATCH examples each
FUSED_BATCH = 32
FUSED_REPEATS = 5  # timed calls per side (timed_speedup alternates them), after one untimed call each
FUSED_GOAL = 1.5  # the starting code's time / the learner's


def fusing_model():
    """The step-fusing exercise's model: a classifier so small that each training step is little work next to the
    call from Python that launches it, compiled with Adam."""
    import keras

    model = keras.Sequential([keras.Input((FUSED_FEATURES,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(FUSED_CLASSES)], name="tiny_classifier")
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def fusing_data():
    """The exercise's training data as stacks (FUSED_STEPS, FUSED_BATCH, ...) on the default device: a learnable
    class per example, in a fixed order."""
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.normal(size=(FUSED_STEPS, FUSED_BATCH, FUSED_FEATURES)).astype("float32")
    y = np.argmax(x @ rng.normal(size=(FUSED_FEATURES, FUSED_CLASSES)), axis=-1)
    return jnp.asarray(x), jnp.asarray(y)


@exercise("ch5.fused_steps")
def _fused_steps(answer):
    # Observed: what the learner's trainer does to a fresh model (its optimizer's step count, its weights) against
    # the starting configuration (one step per call) from the same weights on the same stacks. Measured: both timed,
    # alternating, each call waited for until its weights are computed (JAX returns before the device is done).
    import keras

    if keras.backend.backend() != "jax":
        return ("this check trains with JAX: run the chapter from the top, whose device cell sets KERAS_BACKEND=jax "
                "before Keras is imported.")
    import jax
    import numpy as np

    from helpers.chapters.ch05_tpu import model_state, stacked_trainer, write_state

    if not callable(answer) or isinstance(answer, keras.Model):
        return "pass the function that makes the trainer (fused_trainer), not a model or what it returns."
    model, start_model = fusing_model(), fusing_model()
    start_model.set_weights(model.get_weights())
    train = answer(model)
    if not callable(train):
        return "fused_trainer(model) must return the function that trains the model (as stacked_trainer does)."
    start = stacked_trainer(start_model, 1)
    xs, ys = fusing_data()

    def waited(trainer, which):
        def run():
            trainer(xs, ys)
            jax.block_until_ready([w.value for w in which.weights])

        return run

    def steps_of(which) -> int:
        return int(keras.ops.convert_to_numpy(which.optimizer.iterations))

    def weights_apart() -> float:
        return max(float(np.max(np.abs(a - b))) for a, b in zip(model.get_weights(), start_model.get_weights()))

    waited(start, start_model)()  # untimed: each side compiles, and this training is what gets compared
    waited(train, model)()
    steps, start_steps = steps_of(model), steps_of(start_model)
    if steps != start_steps:
        return (f"your trainer made {steps:,} optimizer steps where the starting one made {start_steps:,} on the same "
                f"{FUSED_STEPS} batches: fusing must run every step once, on this model.")
    if (apart := weights_apart()) > 1e-4:
        return (f"after the same {steps:,} steps on the same batches your model's weights differ from the starting "
                f"configuration's by up to {apart:.2g}: fusing changes how steps are launched, not what they "
                "compute. Change only STEPS_PER_CALL.")
    speed = timed_speedup(waited(start, start_model), waited(train, model), repeats=FUSED_REPEATS)
    timed_steps = steps_of(model) - steps
    if timed_steps != FUSED_REPEATS * FUSED_STEPS:  # compare() called it FUSED_REPEATS times, each on every batch
        return (f"in the timed calls your trainer made {timed_steps:,} optimizer steps where {FUSED_REPEATS} calls "
                f"on {FUSED_STEPS} batches make {FUSED_REPEATS * FUSED_STEPS:,}: every call must train every step.")
    # After the timed calls, from the same weights and optimizer state again: one more call each must still agree.
    write_state(model, model_state(start_model))
    waited(start, start_model)()
    waited(train, model)()
    if (apart := weights_apart()) > 1e-4:
        return (f"a later call of your trainer, from the starting configuration's weights, ended {apart:.2g} away from "
                "it: every call must train the same steps. Change only STEPS_PER_CALL.")
    if not speed.reaches(FUSED_GOAL):
        return (f"your trainer trained the same {FUSED_STEPS} steps {speed}; aim for "
                f"{FUSED_GOAL:g}x and outside that noise: run more steps in each compiled call, or run the check "
                "again if the machine was busy.")
    return None
