"""One worker of a synchronous multi-worker training job (chapter 6): python multiworker.py --out DIR [--steps 20].

Start one copy per worker, each with its own TF_CONFIG (the cluster, and which worker this is). Keras 3's model.fit
does not work under MultiWorkerMirroredStrategy (keras-team/keras#20585), so this is the custom training loop that
does. It prints "step N loss L" per step and writes its final weights to DIR/worker-INDEX.npz. Only the chief
(worker 0) keeps its checkpoint, and a restarted job resumes from it.
"""

import argparse
import json
import os
import shutil

import keras
import numpy as np
import tensorflow as tf

PER_REPLICA_BATCH = 16


def checkpoint_dir(out, task_index):
    """The chief writes the real checkpoint; the others must write too (saving is a collective operation), but to a
    temporary place they delete afterwards, so two writers never share one path."""
    return os.path.join(out, "checkpoint" if task_index == 0 else f"tmp-worker-{task_index}")


def train(out, steps, save_every=5):
    strategy = tf.distribute.MultiWorkerMirroredStrategy()  # first: it must exist before any other TensorFlow op
    config = json.loads(os.environ["TF_CONFIG"])
    task, workers = config["task"], len(config["cluster"]["worker"])
    print(f"worker {task['index']} of {workers} connected", flush=True)
    keras.utils.set_random_seed(0)  # the same initial weights on every worker
    # Replicas: all devices of all workers (one CPU each here; a worker with 4 GPUs adds 4).
    global_batch = PER_REPLICA_BATCH * strategy.num_replicas_in_sync  # each replica takes its share of every batch
    rng = np.random.default_rng(0)
    x = rng.normal(size=(steps * global_batch, 8)).astype("float32")
    y = (x @ rng.normal(size=(8, 1))).astype("float32")
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(global_batch)
    options = tf.data.Options()  # in-memory data: every worker has all of it and keeps its own share
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    batches = iter(strategy.experimental_distribute_dataset(dataset.with_options(options)))
    with strategy.scope():
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(0.05)

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

    # Resumable: the step counter, the model and the optimizer are checkpointed every `save_every` steps; a restarted
    # job restores the latest and skips the batches it has already trained on.
    done = tf.Variable(0, dtype=tf.int64)
    checkpoint = tf.train.Checkpoint(model=model, optimizer=optimizer, done=done)
    manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir(out, task["index"]), max_to_keep=1)
    chief_manager = tf.train.CheckpointManager(checkpoint, checkpoint_dir(out, 0), max_to_keep=1)
    if chief_manager.latest_checkpoint:  # every worker restores the chief's checkpoint
        checkpoint.restore(chief_manager.latest_checkpoint)
        print(f"resumed after step {int(done)}", flush=True)
    for _ in range(int(done)):
        next(batches)
    for i in range(int(done), steps):
        print(f"step {i + 1} loss {float(step(*next(batches))):.4f}", flush=True)
        done.assign(i + 1)
        if (i + 1) % save_every == 0 or i + 1 == steps:
            manager.save()  # a collective: every worker saves, only the chief's copy is kept
            if task["index"] != 0:
                shutil.rmtree(checkpoint_dir(out, task["index"]), ignore_errors=True)
    np.savez(os.path.join(out, f"worker-{task['index']}.npz"), *model.get_weights())
    print("done", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="a folder for the weights and the chief's checkpoint")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--save-every", type=int, default=5, help="checkpoint every N steps (default %(default)s)")
    args = parser.parse_args()
    if "TF_CONFIG" not in os.environ:
        parser.error("TF_CONFIG is not set: start the workers with helpers.cluster.run_local_workers()")
    os.makedirs(args.out, exist_ok=True)
    train(args.out, args.steps, args.save_every)
