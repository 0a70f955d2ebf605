"""Input pipelines over image files: the naive Python generator and tf.data done right (chapter 5).

The notebook builds these step by step and prints their source; `python -m helpers.bench pipeline` times them.
"""

from __future__ import annotations

import time

import numpy as np
import tensorflow as tf

from helpers.images import IMAGE_SIZE

AUTOTUNE = tf.data.AUTOTUNE
IO_THREADS = 32  # for blocking reads: many threads wait on storage at once while few cores decode


def generator_dataset(paths, labels, size: int = IMAGE_SIZE, latency_s: float = 0.0) -> tf.data.Dataset:
    """The naive baseline: a Python generator opens and decodes each file with PIL, one at a time. It runs
    under Python's global interpreter lock (GIL), so from_generator cannot run it in parallel."""
    from PIL import Image

    def generate():
        for path, label in zip(paths, labels):
            if latency_s:
                time.sleep(latency_s)  # simulated storage latency (network disk, cloud bucket)
            with Image.open(path) as image:
                pixels = np.asarray(image.convert("RGB").resize((size, size)), dtype=np.float32) / 255.0
            yield pixels, label

    spec = (tf.TensorSpec((size, size, 3), tf.float32), tf.TensorSpec((), tf.int64))
    return tf.data.Dataset.from_generator(generate, output_signature=spec)


def label_from_path(path, class_names):
    """The label is the index of the file's folder name in class_names: no hand-made one-hot table."""
    folder = tf.strings.split(path, "/")[-2]
    return tf.argmax(tf.cast(folder == tf.constant(class_names), tf.int64))


def read_image(path, size: int = IMAGE_SIZE, latency_s: float = 0.0):
    """Read, decode and resize one image file inside the tf.data graph (no Python, no GIL)."""
    if latency_s:  # simulated storage latency; sleep releases the GIL, so parallel calls overlap
        tf.numpy_function(lambda: time.sleep(latency_s), [], [], stateful=True)
    image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    return tf.image.resize(image, (size, size)) / 255.0


def file_dataset(paths, class_names, *, size: int = IMAGE_SIZE, latency_s: float = 0.0, parallel: bool = True,
                 io_threads: int | None = None, deterministic: bool = True, cache: bool = False,
                 seed: int = 0) -> tf.data.Dataset:
    """Image files -> shuffled, decoded (image, label) pairs.

    Without cache, the *paths* are shuffled before decoding (cheap strings, not images). With cache, the files
    are decoded once in order, cached, and the cached images shuffled every epoch: whatever comes before
    cache() is frozen, so the shuffle goes after it. io_threads sets a private thread pool for blocking reads
    (None: tf.data's default, one thread per core). deterministic=False lets a parallel map hand over whichever
    element is ready first (the same elements each epoch, in a different order), so one slow file does not hold
    up the rest.
    """
    ds = tf.data.Dataset.from_tensor_slices(list(paths))
    if not cache:
        ds = ds.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    calls = (io_threads or AUTOTUNE) if parallel else None
    ds = ds.map(lambda p: (read_image(p, size, latency_s), label_from_path(p, class_names)), num_parallel_calls=calls)
    if cache:
        ds = ds.cache().shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    options = tf.data.Options()
    options.deterministic = deterministic
    if io_threads:
        options.threading.private_threadpool_size = io_threads
    return ds.with_options(options)


def pipeline_rates(paths, labels, class_names, *, latency_s: float = 0.0, batch: int = 64,
                   batches: int = 30) -> dict:
    """Images/s delivered by each way of reading the files, with no model attached (see examples_per_second).
    The cached variant is timed after one full epoch has filled its cache."""
    from helpers.timing import examples_per_second

    def batched(ds):
        return ds.repeat().batch(batch).prefetch(AUTOTUNE)

    variants = {
        "Python generator": batched(generator_dataset(paths, labels, latency_s=latency_s)),
        "tf.data, parallel map": batched(file_dataset(paths, class_names, latency_s=latency_s)),
        f"tf.data, {IO_THREADS} threads, any order": batched(
            file_dataset(paths, class_names, latency_s=latency_s, io_threads=IO_THREADS, deterministic=False)),
        "tf.data, cached": batched(
            file_dataset(paths, class_names, latency_s=latency_s, io_threads=IO_THREADS, cache=True)),
    }
    epoch = -(-len(paths) // batch)
    return {name: examples_per_second(ds, batches=max(4, batches // 2) if "generator" in name and latency_s
                                      else batches, warmup=epoch + 1 if "cached" in name else 2)
            for name, ds in variants.items()}
