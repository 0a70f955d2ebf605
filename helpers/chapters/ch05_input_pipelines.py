"""Chapter 5's pipelines over image files: the naive Python generator and tf.data done right, and their comparison
(`python -m helpers.bench pipeline`)."""

from __future__ import annotations

import time

import numpy as np
import tensorflow as tf

import helpers
from helpers.images import IMAGE_SIZE
from helpers.tables import Result

LATENCY_S = 0.002  # simulated per-file storage latency: a network disk or a cloud bucket


# notebook cell: generator_dataset
def generator_dataset(paths, labels, size=IMAGE_SIZE, latency_s=0.0):
    """The naive baseline: a Python generator opens and decodes each file with PIL, one at a time. It runs under
    Python's global interpreter lock (GIL), so from_generator cannot run it in parallel."""
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
# end of notebook cell


# notebook cell: file_dataset
def label_from_path(path, class_names):
    """The label is the index of the file's folder name in class_names: no hand-made one-hot table."""
    folder = tf.strings.split(path, "/")[-2]
    return tf.argmax(tf.cast(folder == tf.constant(class_names), tf.int64))


def read_image(path, size=IMAGE_SIZE, latency_s=0.0):
    """Read, decode and resize one image file inside the tf.data graph (no Python, no GIL)."""
    if latency_s:  # simulated storage latency; sleep releases the GIL, so parallel calls overlap
        tf.numpy_function(lambda: time.sleep(latency_s), [], [], stateful=True)
    image = tf.io.decode_jpeg(tf.io.read_file(path), channels=3)
    return tf.image.resize(image, (size, size)) / 255.0


def file_dataset(paths, class_names, *, size=IMAGE_SIZE, latency_s=0.0, parallel=True, io_threads=None,
                 deterministic=True, cache=False, seed=0):
    """Image files -> shuffled, decoded (image, label) pairs.

    Without cache, the *paths* are shuffled before decoding (cheap strings, not images). With cache, the files are
    decoded once in order, cached, and the cached images shuffled every epoch: whatever comes before cache() is
    frozen, so the shuffle goes after it. io_threads sets a private thread pool for blocking reads (None: tf.data's
    default, one thread per core). deterministic=False lets a parallel map hand over whichever element is ready
    first (the same elements each epoch, in a different order), so one slow file does not hold up the rest.
    """
    ds = tf.data.Dataset.from_tensor_slices(list(paths))
    if not cache:
        ds = ds.shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    calls = (io_threads or tf.data.AUTOTUNE) if parallel else None
    ds = ds.map(lambda p: (read_image(p, size, latency_s), label_from_path(p, class_names)), num_parallel_calls=calls)
    if cache:
        ds = ds.cache().shuffle(len(paths), seed=seed, reshuffle_each_iteration=True)
    options = tf.data.Options()
    options.deterministic = deterministic
    if io_threads:
        options.threading.private_threadpool_size = io_threads
    return ds.with_options(options)
# end of notebook cell


# notebook cell: pipeline_rates
IO_THREADS = 32  # for blocking reads: many threads wait on storage at once while few cores decode


def pipeline_rates(paths, labels, class_names, *, latency_s=0.0, batch=64, batches=30):
    """Images/s delivered by each way of reading the files, with no model attached, as measured by
    helpers.timing.examples_per_second. The cached variant is timed after one full epoch has filled its cache."""
    def batched(ds):
        return ds.repeat().batch(batch).prefetch(tf.data.AUTOTUNE)

    variants = {
        "Python generator": batched(generator_dataset(paths, labels, latency_s=latency_s)),
        "tf.data, parallel map": batched(file_dataset(paths, class_names, latency_s=latency_s)),
        f"tf.data, {IO_THREADS} threads, any order": batched(
            file_dataset(paths, class_names, latency_s=latency_s, io_threads=IO_THREADS, deterministic=False)),
        "tf.data, cached": batched(
            file_dataset(paths, class_names, latency_s=latency_s, io_threads=IO_THREADS, cache=True)),
    }
    epoch = -(-len(paths) // batch)
    slow_generator = max(4, batches // 2)  # with latency the generator crawls: fewer batches give the same rate
    return {name: helpers.timing.examples_per_second(
                ds, batches=slow_generator if name == "Python generator" and latency_s else batches,
                warmup=epoch + 1 if "cached" in name else 2)
            for name, ds in variants.items()}
# end of notebook cell


def pipeline_comparison(fast: bool, root=None) -> dict:
    """{latency in s: {variant: images/s}} over the course's image folder (generated when missing)."""
    root = root or helpers.images.default_root()
    if not root.is_dir():
        helpers.images.make_image_folder(root)
    paths, labels, class_names = helpers.images.list_image_folder(root)
    return {latency: pipeline_rates(paths, labels, class_names, latency_s=latency, batches=20 if fast else 60)
            for latency in (0.0, LATENCY_S)}


def best_speedup(rates: dict) -> float:
    """The fastest tf.data variant's images/s over the Python generator's."""
    return max(v for k, v in rates.items() if k != "Python generator") / rates["Python generator"]


def pipeline_result(comparison: dict) -> Result:
    """The table, bar chart and summary ratios of a {latency: {variant: images/s}} comparison."""
    rows = [[f"{latency * 1000:g} ms", name, round(rate), round(rate / rates["Python generator"], 1)]
            for latency, rates in comparison.items() for name, rate in rates.items()]
    fig = helpers.plots.bars([f"{r[1].replace(', ', chr(10))}{chr(10)}{r[0]}" for r in rows], [r[2] for r in rows],
                             ylabel="images/s (log scale)", log=True,
                             title="Reading and decoding image files, no model attached")
    extra = {"speedup_no_latency": round(best_speedup(comparison[0.0]), 2),
             "speedup_with_latency": round(best_speedup(comparison[LATENCY_S]), 2)}
    return Result("pipeline", ["latency", "variant", "images_per_s", "vs_generator"], rows, fig, extra)


def pipeline(fast: bool) -> Result:
    """Images/s of a Python generator vs tf.data variants, with and without 2 ms simulated latency per file."""
    return pipeline_result(pipeline_comparison(fast))
