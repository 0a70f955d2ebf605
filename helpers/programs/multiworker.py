"""One worker of a synchronous multi-worker training job (chapter 6): python multiworker.py --out DIR [--steps 20].

Start one copy per worker, each with its own TF_CONFIG (the cluster, and which worker this is). Keras 3's model.fit
does not work under MultiWorkerMirroredStrategy (keras-team/keras#20585), so this is the custom training loop that
does. It prints "step N loss L" per step and writes its final weights to DIR/worker-INDEX.npz. The chief (worker 0)
keeps a checkpoint every --save-every steps, and a restarted job resumes from it. On SIGTERM (a preemption notice),
PreemptionCheckpointHandler has every worker save at the same step, then the program exits with code 42.
--collective-timeout S makes a collective that waits more than S seconds fail instead of waiting forever;
--hang-at N makes worker 1 stall before step N (as if stuck reading from a hung network disk), to see it.
"""

import argparse
import gc
import json
import os
import shutil
import sys
import time

import keras
import numpy as np
import tensorflow as tf

# TensorFlow's modules live until the program ends: exempt them from garbage collection, which would otherwise
# spend about 2 s scanning them once more at exit (Python docs: gc.freeze).
gc.freeze()

PER_REPLICA_BATCH = 16
RESTART_CODE = 42  # the exit code after a preemption checkpoint: "restart me" (TensorFlow's default off Google Cloud)


def checkpoint_dir(out, task_index):
    """The chief writes the real checkpoint; the others must save too (saving may need an all-reduce), into a
    temporary folder they empty afterwards: two writers never share a path. PreemptionCheckpointHandler's names."""
    if task_index == 0:
        return os.path.join(out, "checkpoint")
    return os.path.join(out, f"workertemp_{task_index}", "checkpoint")


def train(out, steps, save_every=5, collective_timeout=None, hang_at=None):
    # First, before any other TensorFlow op: collective ops must be configured at program start-up. The timeout
    # (None: wait forever) turns an all-reduce stuck on a silent peer into a DeadlineExceededError.
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=collective_timeout)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    config = json.loads(os.environ["TF_CONFIG"])
    index, workers = config["task"]["index"], len(config["cluster"]["worker"])
    print(f"worker {index} of {workers} connected", flush=True)
    keras.utils.set_random_seed(index)  # a different seed on each worker, on purpose: see the sum printed below
    # Replicas: all devices of all workers (one CPU each here; a worker with 4 GPUs adds 4).
    global_batch = PER_REPLICA_BATCH * strategy.num_replicas_in_sync  # each replica takes its share of every batch
    rng = np.random.default_rng(0)  # the same data on every worker; each keeps its own share (auto-sharding)
    x = rng.normal(size=(steps * global_batch, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch)
    options = tf.data.Options()  # in-memory data: shard by elements
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    batches = iter(strategy.experimental_distribute_dataset(dataset.with_options(options)))
    with strategy.scope():
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(0.05)
    # The same on every worker whatever the seeds: a variable created under the strategy takes the chief's initial
    # value, broadcast to the others (collective_all_reduce_strategy.py, _get_variable_creator_initial_value).
    print(f"worker {index}: sum of its initial weights {sum(float(w.sum()) for w in model.get_weights()):.6f}",
          flush=True)

    @tf.function
    def step(features, labels):
        def replica_step(features, labels):
            with tf.GradientTape() as tape:
                per_example = tf.reduce_mean(tf.square(model(features, training=True) - labels), axis=-1)
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=global_batch)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))  # all-reduced across workers
            return loss

        return strategy.reduce("SUM", strategy.run(replica_step, args=(features, labels)), axis=None)

    done = tf.Variable(0, dtype=tf.int64)  # steps trained so far, saved with the model and the optimizer
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, done=done)
    manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir(out, index), max_to_keep=1)

    def save():  # every worker saves (it may need an all-reduce); only the chief's copy is kept
        manager.save()
        if index != 0:
            shutil.rmtree(checkpoint_dir(out, index), ignore_errors=True)

    def exit_after_preemption():
        print(f"preempted: checkpoint saved after step {int(done)}; exiting with code {RESTART_CODE}", flush=True)
        sys.exit(RESTART_CODE)

    # Restores the chief's latest checkpoint on every worker. On SIGTERM to any worker, it agrees a step with the
    # others through the cluster, and every worker saves (with `save`) after that step and exits.
    handler = tf.distribute.experimental.PreemptionCheckpointHandler(
        strategy.cluster_resolver, checkpoint, checkpoint_dir(out, 0),
        termination_config=tf.distribute.experimental.TerminationConfig(exit_fn=exit_after_preemption, save_fn=save))
    if int(done):
        print(f"resumed after step {int(done)}", flush=True)
    for _ in range(int(done)):  # skip the batches already trained on
        next(batches)
    for i in range(int(done), steps):
        if index == 1 and i + 1 == hang_at:
            print(f"worker 1 stalls before step {i + 1}", flush=True)
            time.sleep(3600)  # alive (the cluster still hears from it) but never joins the next all-reduce
        try:
            loss = handler.run(step, *next(batches))
        except tf.errors.DeadlineExceededError:
            print(f"worker {index}: an all-reduce waited more than {collective_timeout:g} s for a peer; giving up",
                  flush=True)
            os._exit(1)  # at once: an orderly exit would first wait for the stalled peer at the cluster's shutdown
        print(f"step {i + 1} loss {float(loss):.4f}", flush=True)
        done.assign(i + 1)
        if (i + 1) % save_every == 0 or i + 1 == steps:
            save()
    if index != 0:
        shutil.rmtree(os.path.dirname(checkpoint_dir(out, index)), ignore_errors=True)
    np.savez(os.path.join(out, f"worker-{index}.npz"), *model.get_weights())
    print("done", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="a folder for the weights and the chief's checkpoint")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--save-every", type=int, default=5, help="checkpoint every N steps (default %(default)s)")
    parser.add_argument("--collective-timeout", type=float, help="seconds a collective may wait (default: forever)")
    parser.add_argument("--hang-at", type=int, help="worker 1 stalls before this step (to see a hang)")
    args = parser.parse_args()
    if "TF_CONFIG" not in os.environ:
        parser.error("TF_CONFIG is not set: start one copy per worker, each with its own TF_CONFIG (chapter 6)")
    os.makedirs(args.out, exist_ok=True)
    train(args.out, args.steps, args.save_every, args.collective_timeout, args.hang_at)
