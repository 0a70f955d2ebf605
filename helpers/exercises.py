"""'Your turn' cells: the learner writes an answer, the next cell checks it and prints a verdict.

Each exercise is a checker registered under a name: it gets the learner's answer and returns
None when the answer is right, or a hint saying what is still wrong. `check` never raises, so an
unanswered exercise does not stop "Run all".
"""

from __future__ import annotations

import math
import numbers

import keras

_CHECKS = {}


def exercise(name: str):
    """Register a checker: `@exercise("ch1.embedding_params") def _(answer): ...`."""
    def register(fn):
        _CHECKS[name] = fn
        return fn
    return register


def check(name: str, answer) -> None:
    """Print a pass mark or a hint for exercise `name` (nothing is returned, so a notebook cell
    shows only the verdict)."""
    if not isinstance(name, str) or name not in _CHECKS:
        known = ", ".join(sorted(_CHECKS))
        print(f"No exercise called {name!r}. Known exercises: {known}.")
        return
    if answer is None or answer is ...:
        print(f"[{name}] Not answered yet: replace the ... / None in the cell above, run it, then this one.")
        return
    try:
        hint = _CHECKS[name](answer)
    except Exception as err:  # a wrong type of answer gets a hint, not a traceback
        hint = f"could not check this answer ({type(err).__name__}: {err})"
    if hint:
        print(f"[{name}] Not yet: {hint}")
    else:
        print(f"[{name}] Correct. Well done.")


def _close(answer, expected, rel=0.01) -> bool:
    return isinstance(answer, numbers.Real) and math.isclose(float(answer), expected, rel_tol=rel)


@exercise("ch0.input_share")
def _input_share(answer):
    # 0.8 s preparing input + 0.2 s updating parameters per step: input is 80% of the step.
    if _close(answer, 0.8):
        return None
    if _close(answer, 80):
        return "give a fraction between 0 and 1, not a percentage."
    return "share = input time / (input time + compute time) per step."


@exercise("ch1.embedding_params")
def _embedding_params(answer):
    if answer == 30982 * 7:
        return None
    if answer == 30982 * 7 + 7:
        return "an Embedding layer has no bias: only one vector per word."
    return "an Embedding stores one vector of output_dim numbers for every word index (vocab_size of them)."


@exercise("ch1.logits_model")
def _logits_model(answer):
    model, loss = answer
    activation = getattr(model.layers[-1], "activation", None)
    if getattr(activation, "__name__", "") == "softmax":
        return "the last Dense layer still applies softmax: make it linear (activation=None)."
    if not isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        return "the labels are topic numbers (0..45): use keras.losses.SparseCategoricalCrossentropy."
    if not getattr(loss, "from_logits", False):
        return "a linear last layer outputs logits: build the loss with from_logits=True."
    return None


@exercise("ch2.global_batch")
def _global_batch(answer):
    if answer == 512:
        return None
    if answer == 128:
        return "128 is each GPU's share; the dataset must produce all four shares at once."
    if answer == 32:
        return "32 is 128 / 4: multiply the per-GPU batch by the number of GPUs, do not divide it."
    return "global batch = examples per replica x number of replicas."


@exercise("ch3.survivors")
def _survivors(answer):
    names = {answer} if isinstance(answer, str) else set(answer)
    if names == {"bfloat16", "float32"}:
        return None
    if "float16" in names:
        return "float16's smallest value is about 6e-8: 1e-9 underflows to 0 (try np.float16(1e-9))."
    return "check the exponent range, not the resolution: ml_dtypes.finfo(dtype).tiny for each."


@exercise("ch4.scaled_lr")
def _scaled_lr(answer):
    # 0.1 at batch 256; 128 per core x 8 cores = 1024 = 4x the batch -> 4x the learning rate.
    if _close(answer, 0.4):
        return None
    if _close(answer, 0.025):
        return "the batch grew 4x, so the learning rate grows 4x too: multiply, do not divide."
    if _close(answer, 0.1):
        return "with 4x the examples per step there are 4x fewer steps: scale the rate with the batch."
    if _close(answer, 0.05):
        return "128 is each core's share; the global batch is 128 x 8 cores."
    return "linear rule: new rate = old rate x (new global batch / old batch)."


@exercise("ch5.shuffle_buffer_mb")
def _shuffle_buffer_mb(answer):
    # 3000 images x 224 x 224 x 3 float32 values x 4 bytes.
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 1e6):
        return None
    if _close(answer, 3000 * 224 * 224 * 3 / 1e6):
        return "the images were divided by 255: they are float32, 4 bytes per value."
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 2**20):
        return "use 1 MB = 10^6 bytes here (you divided by 2^20)."
    return "bytes = images x height x width x channels x bytes per value; then divide by 10^6."


@exercise("ch6.global_batch")
def _ch6_global_batch(answer):
    if answer == 3 * 2 * 32:
        return None
    if answer == 3 * 32:
        return "each worker has 2 GPUs, and each GPU is a replica: count replicas, not machines."
    if answer == 2 * 32:
        return "that is one machine's share: all three machines take part in every step."
    return "global batch = examples per replica x replicas (machines x GPUs per machine)."


@exercise("ch5.faster_pipeline")
def _faster_pipeline(answer):
    # Measured: both pipelines run over a small generated image folder; the edited one must deliver every file once
    # per epoch and, after its first epoch, at least twice the slow one's images/s.
    import tempfile
    from pathlib import Path

    from helpers.images import list_image_folder, make_image_folder
    from helpers.timing import examples_per_second

    slow, faster = answer
    with tempfile.TemporaryDirectory() as folder:
        paths, labels, names = list_image_folder(make_image_folder(Path(folder) / "shapes", per_class=40))
        one_epoch = sorted(int(label) for _, batch in faster(paths, names) for label in batch)
        if one_epoch != sorted(labels.tolist()):
            return ("faster_pipeline must deliver every file exactly once per epoch, as slow_pipeline does "
                    f"({len(one_epoch)} labels came out for {len(paths)} files).")
        steps = -(-len(paths) // 64)  # batches per epoch; the timing starts after one full epoch
        # Each pipeline's best of three, taken in turns: a busy machine (another notebook, a shared Colab VM) slows
        # single short runs at random, and must not turn a right answer into a wrong one.
        datasets = [make(paths, names).repeat() for make in (slow, faster)]
        rates = [[], []]
        for _ in range(3):
            for rate, dataset in zip(rates, datasets):
                rate.append(examples_per_second(dataset, batches=2 * steps, warmup=steps + 1))
    ratio = max(rates[1]) / max(rates[0])
    if ratio >= 2:
        return None
    return (f"faster_pipeline delivered {ratio:.1f}x slow_pipeline's images/s; 2x is the goal. Decode in parallel "
            "(num_parallel_calls), keep decoded images with cache(), prepare batches ahead with prefetch().")


@exercise("ch7.not_input_bound")
def _not_input_bound(answer):
    # Measured: the answer is the step breakdown read from the learner's own profile (chapter 7's step_breakdown).
    if not isinstance(answer, dict) or not {"steps", "step ms", "input"} <= set(answer):
        return "pass the dict that step_breakdown(...) returns for your profile."
    if not answer["steps"]:
        return ("the profile has no marked steps, so it cannot say what the step waits for: profile with "
                "profile_fit (its ProfileSteps callback marks them).")
    waiting = 100 * answer["input"] / answer["step ms"]
    if waiting <= 20:
        return None
    return (f"{waiting:.0f}% of the step still waits for data; the goal is 20% or less. Read several files at once "
            "(file_dataset's parallel and io_threads), let them arrive in any order, and prefetch.")


@exercise("ch0.vectorized_dropout")
def _vectorized_dropout(answer):
    # Measured: the learner's whole-batch word dropout against the per-token Python loop it replaces.
    import time

    import numpy as np

    def per_token(batch, rng, rate=0.1):
        return np.stack([np.array([2 if rng.random() < rate else t for t in row], dtype=np.int32) for row in batch])

    batch = np.random.default_rng(1).integers(3, 30982, size=(32, 300)).astype(np.int32)
    out = np.asarray(answer(batch, np.random.default_rng(0)))
    if out.shape != batch.shape:
        return f"return an array of the batch's shape {batch.shape}, not {out.shape}."
    dropped = out != batch
    if not np.all(out[dropped] == 2):
        return "replace dropped tokens with 2 (the unknown word) and leave the others as they are."
    if not 0.07 <= dropped.mean() <= 0.13:
        return f"about 10% of the tokens should become 2; {dropped.mean():.0%} did."

    def seconds(fn):
        start = time.perf_counter()
        for _ in range(5):
            fn(batch, np.random.default_rng(0))
        return time.perf_counter() - start

    speedup = seconds(per_token) / seconds(answer)
    if speedup >= 10:
        return None
    return (f"it is {speedup:.1f}x as fast as the per-token loop; aim for 10x: draw one random mask for the whole "
            "batch (rng.random(batch.shape) < rate) and apply it with np.where.")


@exercise("ch1.reshuffled_batches")
def _reshuffled_batches(answer):
    # Observed: two epochs of the learner's dataset must hold every number once each, in new batches.
    epochs = [[sorted(int(v) for v in batch) for batch in answer] for _ in range(2)]
    for epoch in epochs:
        if sorted(v for batch in epoch for v in batch) != list(range(10)):
            return "every epoch must hold each of the numbers 0..9 exactly once."
        if [len(batch) for batch in epoch] != [5, 5]:
            return "keep batches of 5."
    if sorted(epochs[0]) == sorted(epochs[1]):
        return ("epoch 2 has the same batches as epoch 1 (at most in another order): shuffle the examples before "
                "batching them, after the cache.")
    return None


@exercise("ch2.match_one_replica")
def _match_one_replica(answer):
    # Measured: a small regression trained by fit on one device (batch 32, SGD 0.1) and under the learner's strategy
    # with the learner's per-replica batch and learning rate must end with the same weights.
    import numpy as np
    import tensorflow as tf

    strategy, per_replica_batch, learning_rate = answer
    rng = np.random.default_rng(0)
    x = rng.normal(size=(256, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")

    def train(batch, rate, scope):
        with scope:
            keras.utils.set_random_seed(0)
            model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
            model.compile(optimizer=keras.optimizers.SGD(rate), loss="mse")
        model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(batch), epochs=2, verbose=0)
        return np.concatenate([w.reshape(-1) for w in model.get_weights()])

    reference = train(32, 0.1, tf.distribute.OneDeviceStrategy("/cpu:0").scope())
    global_batch = per_replica_batch * strategy.num_replicas_in_sync
    mine = train(global_batch, learning_rate, strategy.scope())
    gap = float(np.abs(mine - reference).max())
    if gap <= 1e-4:
        return None
    return (f"the weights differ from the one-device run by up to {gap:.2g}: your global batch is {global_batch} "
            f"({strategy.num_replicas_in_sync} replica(s) x {per_replica_batch}) at rate {learning_rate:g}; the "
            "one-device run took 32 examples per step at 0.1. Same global batch, same rate, same steps.")


@exercise("ch3.loss_scaling")
def _loss_scaling(answer):
    # Measured: one step of the learner's train_step under mixed_float16 on a tiny loss; the float16 layer's weights
    # must move (its gradients underflow to zero unless the loss is scaled).
    import numpy as np
    import tensorflow as tf

    previous = keras.mixed_precision.dtype_policy()
    keras.mixed_precision.set_dtype_policy("mixed_float16")
    try:
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(8), keras.layers.Dense(1, dtype="float32")])
        optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(1.0))
        kernel = model.layers[0].kernel
        before = kernel.numpy().copy()
        answer(model, optimizer, tf.random.stateless_normal((32, 8), seed=(1, 2)), tf.zeros((32, 1)))
        moved = float(np.abs(kernel.numpy() - before).max())
    finally:
        keras.mixed_precision.set_dtype_policy(previous)
    if not np.isfinite(moved):
        return "the weights became NaN or inf: scale the loss for the gradient only, and let apply_gradients unscale."
    if moved > 0:
        return None
    return ("the first layer's weights did not move: its float16 gradients underflowed to zero. Compute the "
            "gradients of optimizer.scale_loss(loss) instead of loss (apply_gradients unscales them).")


@exercise("ch4.static_batches")
def _static_batches(answer):
    # Observed: one epoch of the learner's dataset; a TPU wants every batch the same shape.
    dataset, global_batch = answer
    sizes = [int(features.shape[0]) for features, _ in dataset]
    static = dataset.element_spec[0].shape[0]
    if static is None or any(size != global_batch for size in sizes):
        return (f"batch sizes {sorted(set(sizes))} (static size {static}): every batch must hold {global_batch}, "
                "known before the first step; drop the last, partial batch when batching.")
    return None


@exercise("ch6.each_element_once")
def _each_element_once(answer):
    # Measured: a dispatcher and 2 tf.data workers in this process; the learner's distribute(dataset, target) must
    # make the trainer receive each of 12 elements exactly once.
    from collections import Counter

    import tensorflow as tf

    service = tf.data.experimental.service
    dispatcher = service.DispatchServer()
    address = dispatcher.target.split("://")[1]
    workers = [service.WorkerServer(service.WorkerConfig(dispatcher_address=address)) for _ in range(2)]
    try:
        counts = Counter(int(x) for x in answer(tf.data.Dataset.range(12), dispatcher.target))
    finally:
        del workers, dispatcher  # a deleted server stops
    if sorted(counts) == list(range(12)) and set(counts.values()) == {1}:
        return None
    return (f"the trainer received {sum(counts.values())} elements for 12 ({len(counts)} distinct): with 2 tf.data "
            "workers, which processing mode splits one epoch between them?")


@exercise("ch8.effective_batch")
def _effective_batch(answer):
    # 16 examples per device per step, 4 steps accumulated, 2 devices: one update sees 16 * 4 * 2 examples.
    if answer == 128:
        return None
    if answer == 64:
        return "each update also averages over both devices: multiply by the number of devices too."
    return "one update sees per-device batch x accumulation steps x devices examples."


@exercise("ch8.kernel_on_model_axis")
def _kernel_on_model_axis(answer):
    # Measured: the learner's model, built under their ModelParallel layout; its kernel's sharding is read back.
    import keras

    if not isinstance(answer, keras.Model):
        return "pass the model you built after set_distribution(ModelParallel(...))."
    dense = [layer for layer in answer.layers if isinstance(layer, keras.layers.Dense)]
    if not dense:
        return "the model has no Dense layer to shard."
    kernel = dense[-1].kernel
    sharding = getattr(kernel.value, "sharding", None)
    if sharding is not None and len(sharding.device_set) == 1:
        # One device: JAX keeps every weight whole whatever the layout says, so a split cannot be read back.
        return ("this runtime has one device, so no weight can be split and the check cannot see your layout. On a "
                "CPU runtime set DEVICES = 2 in the parameters cell, restart the runtime and run the notebook again.")
    spec = tuple(getattr(sharding, "spec", ()) or ())
    spec = spec + (None,) * (2 - len(spec))
    if spec == (None, "model"):
        return None
    if spec == ("model", None):
        return ("the kernel is split along its rows (the inputs); the goal is its columns (the outputs): "
                "(None, 'model').")
    return (f"the last Dense kernel ({kernel.path}) is laid out as {spec}: add a LayoutMap entry whose key (a regular "
            "expression such as '.*name/kernel') matches its path, with the layout (None, 'model'); build the model "
            "after set_distribution.")
