"""Chapter 6's exercises (beyond one machine): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import exercise


@exercise("ch6.global_batch")
def _ch6_global_batch(answer):
    if answer == 3 * 2 * 32:
        return None
    if answer == 3 * 32:
        return "each worker has 2 GPUs, and each GPU is a replica: count replicas, not machines."
    if answer == 2 * 32:
        return "that is one machine's share: all three machines take part in every step."
    return "global batch = examples per replica x replicas (machines x GPUs per machine)."


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
