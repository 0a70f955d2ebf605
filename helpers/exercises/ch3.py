"""Chapter 3's exercises (several GPUs): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import contextlib
import math
import numbers
import statistics

import keras

from helpers.exercises.registry import exercise, number_hint, timed_speedup

# The device counts a learner may give the notebook (DEVICES / COURSE_DEVICES): a per-replica batch or a global batch
# written for one of them must be right for all of them.
REPLICA_COUNTS = (1, 2, 4, 8)


@exercise("ch3.global_batch")
def _global_batch(answer):
    return number_hint(answer, 512, {
        128: "128 is each GPU's share; the dataset must produce all four shares at once.",
        32: "32 is 128 / 4: multiply the per-GPU batch by the number of GPUs, do not divide it.",
    }, "global batch = examples per replica x number of replicas.")


def _devices() -> list[str]:
    """The logical devices the notebook's strategy runs on: the GPUs if there are any, else the CPUs."""
    import tensorflow as tf

    return [d.name for d in (tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("CPU"))]


def _mirrored(devices):
    """MirroredStrategy over `devices` with an all-reduce that works there (as helpers.strategies.plan_strategy
    picks)."""
    import tensorflow as tf

    if len(devices) == 1:
        return tf.distribute.MirroredStrategy(devices)
    if "GPU" in devices[0].upper():
        several_cards = len(tf.config.get_visible_devices("GPU")) > 1
        ops = tf.distribute.NcclAllReduce() if several_cards else tf.distribute.HierarchicalCopyAllReduce()
    else:
        ops = tf.distribute.ReductionToOneDevice()
    return tf.distribute.MirroredStrategy(devices, cross_device_ops=ops)


@contextlib.contextmanager
def _full_float32():
    """TF32 off while the check runs: on Ampere and newer GPUs TensorFlow multiplies float32 matrices with 10-bit
    mantissas by default, which alone moves weights by more than the tolerance."""
    import tensorflow as tf

    was = tf.config.experimental.tensor_float_32_execution_enabled()
    tf.config.experimental.enable_tensor_float_32_execution(False)
    try:
        yield
    finally:
        tf.config.experimental.enable_tensor_float_32_execution(was)


def _whole(value) -> bool:
    import numpy as np

    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= 1


def _pairs(answer, name: str, second: str, counts=REPLICA_COUNTS):
    """{replicas: answer(replicas)} for every count, or a hint saying what is wrong with the answer."""
    if not callable(answer):
        return None, f"pass the function itself (no parentheses): check(..., {name})."
    found = {}
    for replicas in counts:
        got = answer(replicas)
        if not (isinstance(got, tuple) and len(got) == 2):
            return None, f"{name}({replicas}) returned {got!r}: return two values, (per_replica_batch, {second})."
        if not _whole(got[0]):
            return None, (f"{name}({replicas}) gives a per-replica batch of {got[0]!r}: it must be a whole number >= 1 "
                          "(divide with //, which keeps whole numbers).")
        found[replicas] = (int(got[0]), got[1])
    return found, None


# The reference of ch3.match_one_replica: one device, 32 examples per step, SGD at 0.1, two epochs.
REFERENCE_BATCH, REFERENCE_RATE = 32, 0.1
# float32 keeps 24 bits (about 7 digits). Splitting a batch between replicas changes only the order in which the
# per-example gradients are added: a few units in the 7th digit per step on these weights (largest about 1.3). Measured
# on 2 logical CPUs: 1.2e-7 for the right answer, 1.5e-3 for a rate 1% off, 6e-3 for a global batch of 34 instead of
# 32. 1e-4 sits between them, with room for GPUs' different summation orders (TF32 is off during the check).
TOLERANCE = 1e-4


def _train_regression(strategy, global_batch: int, rate: float):
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    with strategy.scope():
        # Seeded initialisers: the same start on every run, without resetting the notebook's global seeds.
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(
            1, kernel_initializer=keras.initializers.GlorotUniform(seed=0), bias_initializer="zeros")])
        model.compile(optimizer=keras.optimizers.SGD(rate), loss="mse")
    model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch), epochs=2, verbose=0)
    return np.concatenate([w.reshape(-1) for w in model.get_weights()])


@exercise("ch3.match_one_replica")
def _match_one_replica(answer):
    # Measured: the reference trained by fit on one device, then the same training under MirroredStrategy over as
    # many of this runtime's logical devices as the largest of 1, 2, 4, 8 it has, with the learner's settings for that
    # count (same device type, TF32 off). The other counts are held to what that run shows: the same global batch and
    # rate as the reference. On one device the starting code's numbers are right for 1 replica only, so the counts
    # it cannot train still refuse it.
    import numpy as np

    settings, hint = _pairs(answer, "one_replica_settings", "learning_rate")
    if hint:
        return hint
    for replicas, (_, rate) in settings.items():
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not rate > 0:
            return f"one_replica_settings({replicas}) gives a learning rate of {rate!r}: give a number > 0."
    devices = _devices()
    trained = max(n for n in REPLICA_COUNTS if n <= len(devices))
    batch, rate = settings[trained]
    with _full_float32():
        reference = _train_regression(_mirrored(devices[:1]), REFERENCE_BATCH, REFERENCE_RATE)
        mine = _train_regression(_mirrored(devices[:trained]), batch * trained, float(rate))
    gap = float(np.abs(mine - reference).max())
    if gap > TOLERANCE:
        return (f"with {trained} replica(s) the weights differ from the one-device run by up to {gap:.2g}: your global "
                f"batch is {batch * trained} ({trained} replica(s) x {batch}) at rate {rate:g}; the one-device run "
                f"took {REFERENCE_BATCH} examples per step at {REFERENCE_RATE:g}. Same global batch, same rate, same "
                "steps.")
    for replicas in REPLICA_COUNTS:
        batch, rate = settings[replicas]
        if replicas != trained and (batch * replicas != REFERENCE_BATCH
                                    or not math.isclose(rate, REFERENCE_RATE, rel_tol=1e-6)):
            return (f"with {replicas} replica(s) your settings give a global batch of {batch * replicas} ({replicas} x "
                    f"{batch}) at rate {rate:g}; the one-device run took {REFERENCE_BATCH} examples per step at "
                    f"{REFERENCE_RATE:g}, and the same weights need the same global batch and rate. (This runtime "
                    f"has {len(devices)} device(s): with DEVICES = {replicas} the check trains that count.)")
    return None


# ch3.busy_replicas: the starting code's global batch, the examples an epoch of the timed run has, and the goal. The
# lesson is fewer, larger steps: each step pays a fixed cost, so the gain shows on one device too.
STARTING_GLOBAL_BATCH = 8
EPOCH_EXAMPLES = 8192  # 1,024 steps at the starting batch of 8. On 2 logical CPUs an epoch's time jumps between two
# levels about 2x apart from call to call (measured here), so the A/A band can reach 2.8x: the right answer must gain
# clearly more than that, and fit's cost per call (about 0.2 s) must stay small beside the starting code's epoch.
MAX_PER_REPLICA = 256
SPEEDUP_GOAL = 2.0


def _epoch_runner(strategy, global_batch: int):
    """A function that runs one epoch of EPOCH_EXAMPLES examples through fit at `global_batch`, after a warm-up fit
    that traces the step: a small model (an average of word vectors), whose steps hold little work besides their
    fixed cost per step."""
    import numpy as np
    import tensorflow as tf

    from helpers.models import reuters_bag_of_words

    rng = np.random.default_rng(0)
    x = rng.integers(1, 1000, size=(EPOCH_EXAMPLES, 64)).astype("int32")
    y = rng.integers(0, 46, size=EPOCH_EXAMPLES)
    with strategy.scope():
        model = reuters_bag_of_words(vocab_size=1000, maxlen=64)
        model.compile(optimizer="nadam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch, drop_remainder=True).repeat()
    steps = max(1, EPOCH_EXAMPLES // global_batch)
    model.fit(ds, epochs=1, steps_per_epoch=min(steps, 2), verbose=0)
    return lambda: model.fit(ds, epochs=1, steps_per_epoch=steps, verbose=0)


@exercise("ch3.busy_replicas")
def _busy_replicas(answer):
    # Measured: for every device count a learner may set, the global batch must be the per-replica batch x replicas,
    # with a per-replica batch that does not shrink as replicas are added; then an epoch of the same examples through
    # fit under this runtime's MirroredStrategy, at the starting code's global batch and at the learner's, timed in
    # turns (helpers.exercises.registry.timed_speedup): the learner's must be SPEEDUP_GOAL x and outside the A/A noise.
    devices = _devices()
    counts = sorted({*REPLICA_COUNTS, len(devices)})
    sizes, hint = _pairs(answer, "batch_sizes", "global_batch", counts)
    if hint:
        return hint
    for replicas, (per_replica, global_batch) in sizes.items():
        if global_batch != per_replica * replicas:
            return (f"with {replicas} replica(s) batch_sizes gives {per_replica} per replica and a global batch of "
                    f"{global_batch!r}; fit splits the global batch between the replicas, so it must be per-replica "
                    f"batch x replicas ({per_replica} x {replicas} = {per_replica * replicas}).")
    if len({per_replica for per_replica, _ in sizes.values()}) > 1:
        listed = ", ".join(f"{sizes[n][0]} with {n}" for n in REPLICA_COUNTS)
        return (f"the per-replica batch changes with the number of replicas ({listed}): with the global batch fixed, "
                "each replica gets less work as replicas are added. Choose one per-replica batch and multiply it by "
                "num_replicas.")
    per_replica, global_batch = sizes[len(devices)]
    if per_replica > MAX_PER_REPLICA:
        return (f"{per_replica} examples per replica is more than this exercise needs (at most {MAX_PER_REPLICA}): a "
                "batch that large changes the training itself (section 3's learning-rate rules).")
    strategy = _mirrored(devices)
    replicas = strategy.num_replicas_in_sync
    starting = max(STARTING_GLOBAL_BATCH, replicas)
    runners = _epoch_runner(strategy, starting), _epoch_runner(strategy, global_batch)
    # Five rounds: helpers.readings then leaves out one disturbed round, so one slow run of the starting code cannot
    # set the bar (with 3 or 4 rounds every round counts).
    speedup = timed_speedup(*runners, repeats=5)
    if speedup.reaches(SPEEDUP_GOAL):
        return None
    base, mine = statistics.median(speedup.baseline_s), statistics.median(speedup.candidate_s)
    return (f"an epoch of {EPOCH_EXAMPLES} examples on {replicas} replica(s) took {mine:.2f} s at your global batch "
            f"{global_batch} ({per_replica} per replica) and {base:.2f} s at the starting code's {starting}: "
            f"{speedup}; the goal is {SPEEDUP_GOAL:g}x, outside that noise. Fewer, larger steps: give each replica "
            "more examples per step.")
