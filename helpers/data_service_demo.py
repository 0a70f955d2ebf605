"""The tf.data service on localhost (chapter 6): `python -m helpers.data_service_demo [--elements 12]`.

A dispatcher and two workers run in this process; the input pipeline runs on the workers and the trainer
only receives batches. It reads the same dataset in both processing modes and counts what arrives.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter


def read_through_service(elements: int, workers: int = 2) -> dict:
    """{processing mode: Counter of the elements the trainer received} for range(elements)."""
    import tensorflow as tf

    service = tf.data.experimental.service
    dispatcher = service.DispatchServer()
    address = dispatcher.target.split("://")[1]  # "grpc://localhost:PORT" -> "localhost:PORT"
    # The list keeps the worker servers alive (and serving) while this function runs.
    _workers = [service.WorkerServer(service.WorkerConfig(dispatcher_address=address)) for _ in range(workers)]
    counts = {}
    for mode in ("distributed_epoch", "parallel_epochs"):
        dataset = tf.data.Dataset.range(elements).apply(service.distribute(processing_mode=mode,
                                                                           service=dispatcher.target))
        counts[mode] = Counter(int(x) for x in dataset)
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.data_service_demo", description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=12)
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    for mode, counts in read_through_service(args.elements).items():
        copies = sorted(set(counts.values()))
        print(f"{mode:17s}: {sum(counts.values())} elements received, {len(counts)} distinct, "
              f"each seen {copies} time(s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
