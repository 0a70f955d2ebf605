"""Chapter 7's exercises (beyond one machine): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises.registry import exercise, number_hint, repeats_with_no_known_end


@exercise("ch7.global_batch")
def _ch7_global_batch(answer):
    return number_hint(answer, 3 * 2 * 32, {
        3 * 32: "each worker has 2 GPUs, and each GPU is a replica: count replicas, not machines.",
        2 * 32: "that is one machine's share: all three machines take part in every step.",
    }, "global batch = examples per replica x replicas (machines x GPUs per machine).")


def service_route(dataset):
    """How `dataset`'s elements reach the trainer, read from the dataset's graph: (sharding, bypasses).

    The walk starts at the returned dataset and follows every dataset input back (a concatenated, zipped or
    captured dataset too), stopping at each DataServiceDataset. `sharding` is how the tf.data service splits the
    source among its workers, a `tf.data.experimental.service.ShardingPolicy` ("distributed_epoch" is DYNAMIC,
    "parallel_epochs" OFF; OFF if any service reached uses it), or None when the walk reaches no service.
    `bypasses` lists the source datasets (RangeDataset, TensorSliceDataset, ...) it reaches without passing a
    service: elements that would reach the trainer without going through it."""
    import tensorflow as tf
    from tensorflow.core.framework import graph_pb2, types_pb2
    from tensorflow.core.protobuf import data_service_pb2
    from tensorflow.python.framework import op_def_registry

    graph = graph_pb2.GraphDef.FromString(dataset._as_serialized_graph().numpy())
    nodes = {node.name: node for node in graph.node}

    def producer(name):  # the node whose output `name` is; None for a control input ("^name")
        return None if name.startswith("^") else nodes.get(name.split(":")[0])

    def is_dataset(node):  # a dataset op outputs a variant (its handle)
        op = op_def_registry.get(node.op)
        if op is None:
            return "Dataset" in node.op
        return any(arg.type == types_pb2.DT_VARIANT or
                   (arg.type_attr and node.attr[arg.type_attr].type == types_pb2.DT_VARIANT)
                   for arg in op.output_arg)

    policies, bypasses, seen = [], set(), set()
    stack = [producer(name) for node in graph.node if node.op == "_Retval" for name in node.input]
    while stack:
        node = stack.pop()
        if node is None or node.name in seen:
            continue
        seen.add(node.name)
        if node.op.startswith("DataServiceDataset"):
            names = [arg.name for arg in op_def_registry.get(node.op).input_arg]
            mode = nodes[node.input[names.index("processing_mode")].split(":")[0]]
            policies.append(data_service_pb2.ProcessingModeDef.FromString(
                mode.attr["value"].tensor.string_val[0]).sharding_policy)
            continue
        inputs = [producer(name) for name in node.input]
        inputs = [each for each in inputs if each is not None and is_dataset(each)]
        if not inputs:
            bypasses.add(node.op)
        stack.extend(inputs)
    if not policies:
        return None, sorted(bypasses)
    off = tf.data.experimental.service.ShardingPolicy.OFF
    return (off if off.value in policies else tf.data.experimental.service.ShardingPolicy(policies[0])), sorted(
        bypasses)


ELEMENT_CAP = 48  # four times the 12 elements: more means an endless dataset (a .repeat()) or a runaway one
TIME_LIMIT_S = 60  # a dataset that keeps the check waiting longer than this gets a hint, not a hang


def _count_bounded(dataset):
    """(Counter of the elements received, None) or (None, a hint) when the dataset does not end within
    ELEMENT_CAP elements or TIME_LIMIT_S seconds (a `.repeat()` never ends: the check must not hang on it)."""
    import time
    from collections import Counter

    counts, start = Counter(), time.monotonic()
    for received, element in enumerate(dataset, start=1):
        counts[int(element)] += 1
        if received > ELEMENT_CAP or time.monotonic() - start > TIME_LIMIT_S:
            return None, (f"the returned dataset had not ended after {received} elements "
                          f"({time.monotonic() - start:.0f} s) for 12: remove any .repeat(); the trainer must get "
                          "one epoch, each element once.")
    return counts, None


@exercise("ch7.each_element_once")
def _each_element_once(answer):
    # Measured: a dispatcher and 2 tf.data workers in this process. The learner's function gets a dataset and the
    # dispatcher's address; the trainer must receive each of the 12 elements exactly once, from the tf.data service
    # (every path from the returned dataset back to a source in its graph passes a DataServiceDataset: nothing
    # concatenated, zipped or captured beside it), with one epoch split between the tf.data workers.
    import tensorflow as tf

    service = tf.data.experimental.service
    dispatcher = service.DispatchServer()
    address = dispatcher.target.split("://")[1]
    workers = [service.WorkerServer(service.WorkerConfig(dispatcher_address=address)) for _ in range(2)]
    expected = [10 * i + 3 for i in range(12)]
    try:
        dataset = answer(tf.data.Dataset.range(12).map(lambda i: 10 * i + 3), dispatcher.target)
        if not isinstance(dataset, tf.data.Dataset):
            return f"through_the_service must return a tf.data.Dataset (it returned a {type(dataset).__name__})."
        if repeats_with_no_known_end(dataset):
            return ("the returned dataset has a .repeat() and TensorFlow cannot tell where it ends: remove the "
                    ".repeat(); the trainer must get one epoch, each element once.")
        counts, endless = _count_bounded(dataset)
        if endless:
            return endless
        sharding, bypasses = service_route(dataset)
    finally:
        del workers, dispatcher  # a deleted server stops
    if sharding is None:
        return (f"the trainer received {sum(counts.values())} elements, but none came through the tf.data service: "
                "apply tf.data.experimental.service.distribute(...) to the dataset.")
    if bypasses:
        return (f"the trainer received {sum(counts.values())} elements, but the returned dataset also reads a source "
                f"beside the tf.data service ({', '.join(bypasses)}): return the dataset that "
                "tf.data.experimental.service.distribute(...) gives, with at most light steps (map, prefetch) after "
                "it.")
    if sorted(counts) != expected or set(counts.values()) != {1}:
        return (f"the trainer received {sum(counts.values())} elements for 12 ({len(counts)} distinct): with 2 "
                "tf.data workers, which processing mode splits one epoch between them?")
    if sharding == service.ShardingPolicy.OFF:
        return ("each element arrived once, but each of the 2 tf.data workers produced all 12 (processing mode "
                "\"parallel_epochs\"; something after it dropped the copies): let the workers split the epoch instead.")
    return None


@exercise("ch7.resumed_weights")
def _resumed_weights(answer):
    # Measured: the learner's train(model, dataset, epochs, backup_dir, callbacks) runs twice on a small model with
    # Adam. The first run is interrupted (an exception, as abruptly as a kill) after step 3 of epoch 2; the second
    # gets a new model with other initial weights, as a restarted program would, and the same backup_dir, which the
    # first run must have written to (nothing else survives a kill). It must train only epochs 2 and 3 (or the rest
    # of them, resuming mid-epoch) and end with the weights of an uninterrupted run, to 1e-6.
    import tempfile
    from pathlib import Path

    import keras
    import numpy as np
    import tensorflow as tf

    epochs, steps, batch, kill = 4, 4, 16, (2, 3)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(steps * batch, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)  # one pass per epoch, the same order each time

    def new_model(seed):
        keras.utils.set_random_seed(seed)
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
        model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", run_eagerly=True)  # tiny: no tracing
        return model

    class Interrupted(Exception):
        pass

    class Watch(keras.callbacks.Callback):
        """Counts the epochs and steps a run trains; raises Interrupted after step `kill[1]` of epoch `kill[0]`."""

        def __init__(self, kill=None):
            super().__init__()
            self.kill, self.epochs, self.steps = kill, [], 0

        def on_epoch_begin(self, epoch, logs=None):
            self.epochs.append(epoch)

        def on_train_batch_end(self, step, logs=None):
            self.steps += 1
            if self.kill == (self.epochs[-1], step + 1):
                raise Interrupted

    reference = new_model(0)
    reference.fit(dataset, epochs=epochs, verbose=0)
    first, second = Watch(kill), Watch()
    with tempfile.TemporaryDirectory() as backup_dir:
        try:
            answer(new_model(0), dataset, epochs, backup_dir, [first])
        except Interrupted:
            pass
        else:
            return ("the first run was to be interrupted after step 3 of epoch 2 but was not: pass `callbacks` to "
                    "fit, as the starting code does.")
        # A restarted program has only what the killed one wrote to disk: a snapshot kept in Python memory (a
        # module-level dict of weights) would not survive a real kill, though it survives this in-process one.
        wrote = any(Path(backup_dir).rglob("*"))
        restarted = new_model(1)
        answer(restarted, dataset, epochs, backup_dir, [second])
    if not second.epochs:
        return "the restarted run reported no training: pass `callbacks` to fit, as the starting code does."
    difference = max(float(np.abs(a - b).max()) for a, b in zip(reference.get_weights(), restarted.get_weights()))
    remaining = (epochs - kill[0]) * steps
    where = f"trained {second.steps} steps (epochs {second.epochs[0]}-{second.epochs[-1]})"
    # BackupAndRestore resumes by epoch (the 8 steps of epochs 2-3); an exact mid-epoch resume, which skips the 3
    # batches already trained in epoch 2, ends with the same weights in 5 steps and is accepted too.
    if second.steps in (remaining, remaining - kill[1]) and difference <= 1e-6:
        if not wrote:
            return ("the weights match, but the interrupted run left backup_dir empty: a killed program keeps "
                    "nothing in memory, so a restarted one can resume only from what was written to backup_dir "
                    "(keras.callbacks.BackupAndRestore(backup_dir) writes it as training goes).")
        return None
    if second.steps >= epochs * steps:
        ended = (f"and ended {difference:.1e} away from the uninterrupted run's weights" if difference > 1e-6 else
                 "(its weights match only because it re-created the first run's initial weights)")
        return (f"the restarted run {where}: it started over {ended}. Keep a backup in backup_dir as training goes "
                "and restore it when fit starts again (keras.callbacks.BackupAndRestore).")
    if difference <= 1e-6:
        return (f"the weights match, but the restarted run {where}; resuming trains only epochs 2-3 ({remaining} "
                f"steps, or {remaining - kill[1]} if it skips the batches already trained in epoch 2).")
    return (f"the restarted run {where} and ended {difference:.1e} away from the uninterrupted run's weights: it "
            "must continue from the model and optimizer state at the end of epoch 1 (a backup every N steps restarts "
            "the epoch from its first batch: section 7; or the optimizer's state was not restored: build a new "
            "model's optimizer before load_weights).")
