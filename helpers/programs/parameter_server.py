"""ParameterServerStrategy on an in-process cluster (chapter 6): python parameter_server.py [--steps 40].

Two workers and one parameter server run as gRPC servers inside this process, as in TensorFlow's tutorial; the
coordinator (the rest of this program) schedules training steps on whichever worker is free. It prints where the
variables live and the loss before and after.
"""

import argparse
import gc
import socket

import keras
import tensorflow as tf

# TensorFlow's modules live until the program ends: exempt them from garbage collection, which would otherwise
# spend about 2 s scanning them once more at exit (Python docs: gc.freeze).
gc.freeze()


def free_ports(n):
    """n ports nobody listens on right now (held open together, so they differ)."""
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("localhost", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def in_process_cluster(workers=2, ps=1):
    """A ClusterResolver for `workers` worker and `ps` parameter-server gRPC servers started in this process."""
    ports = free_ports(workers + ps)
    spec = tf.train.ClusterSpec({"worker": [f"localhost:{p}" for p in ports[:workers]],
                                 "ps": [f"localhost:{p}" for p in ports[workers:]]})
    config = tf.compat.v1.ConfigProto()
    # With fewer cores than workers + 1, the default thread pools deadlock silently (seen on 2 cores).
    config.inter_op_parallelism_threads = workers + 1
    for i in range(workers):
        tf.distribute.Server(spec, job_name="worker", task_index=i, config=config, protocol="grpc")
    for i in range(ps):
        tf.distribute.Server(spec, job_name="ps", task_index=i, protocol="grpc")
    return tf.distribute.cluster_resolver.SimpleClusterResolver(spec, rpc_layer="grpc")


PER_REPLICA_BATCH = 32


def train(steps):
    strategy = tf.distribute.ParameterServerStrategy(in_process_cluster())
    coordinator = tf.distribute.coordinator.ClusterCoordinator(strategy)
    # A step runs on one worker, with one replica per device of that worker (one CPU here; a worker with 4 GPUs: 4).
    batch = PER_REPLICA_BATCH * strategy.num_replicas_in_sync  # the examples one scheduled step trains on
    with strategy.scope():  # variables are created on the parameter server
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(0.05)

    def dataset_fn(input_context):  # each worker builds its own input pipeline, batched per replica
        x = tf.random.stateless_normal((256, 8), seed=(1, 2))
        dataset = tf.data.Dataset.from_tensor_slices((x, tf.reduce_sum(x, axis=1, keepdims=True))).repeat()
        return dataset.batch(input_context.get_per_replica_batch_size(batch))

    def per_worker_dataset_fn():  # as in TensorFlow's tutorial: the strategy hands dataset_fn its input_context
        return strategy.distribute_datasets_from_function(dataset_fn)

    batches = iter(coordinator.create_per_worker_dataset(per_worker_dataset_fn))

    @tf.function
    def step(iterator):
        def replica_step(x, y):
            with tf.GradientTape() as tape:
                per_example = tf.reduce_mean(tf.square(model(x, training=True) - y), axis=-1)
                loss = tf.nn.compute_average_loss(per_example, global_batch_size=batch)
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss

        return strategy.reduce("SUM", strategy.run(replica_step, args=next(iterator)), axis=None)

    losses = [coordinator.schedule(step, args=(batches,)) for _ in range(steps)]  # returns at once
    coordinator.join()  # wait until every scheduled step has run on some worker
    print(f"variables live on {model.trainable_variables[0].value.device}")
    print(f"{steps} steps of {batch} examples scheduled on 2 workers: loss {float(losses[0].fetch()):.3f} -> "
          f"{float(losses[-1].fetch()):.4f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40)
    train(parser.parse_args().steps)
