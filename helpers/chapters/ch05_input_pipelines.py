"""Chapter 5's pipelines over image files: the naive Python generator and tf.data done right, and their comparison
(`python -m helpers.bench pipeline`)."""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
import tensorflow as tf

import helpers.errors  # the notebook-cell blocks below call helpers.errors.whole_number, as the notebook does
from helpers.images import IMAGE_SIZE, default_root, list_image_folder, make_image_folder
from helpers.plots import bars
from helpers.results import Result

LATENCY_S = 0.002  # simulated per-file storage latency: a network disk or a cloud bucket


def usable_cores() -> int:
    """The CPU cores this process may run on (what tf.data sizes its default thread pool by), not the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


# notebook cell: generator_dataset
def generator_dataset(paths, labels, size=IMAGE_SIZE, latency_s=0.0):
    """The naive baseline: a Python generator opens and decodes each file with PIL, one at a time. It is one
    sequential loop (from_generator asks it for one element after another), so more cores do not speed it up."""
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
    """Read, decode and resize one image file inside the tf.data graph (no Python, no GIL, unless latency_s adds
    a simulated wait)."""
    if latency_s:  # simulated storage latency. The sleep releases the GIL, but numpy_function takes it to enter and
        # leave Python: parallel calls overlap their waits, and queue for the GIL one at a time around them.
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


# notebook cell: repeated_runs
def images_per_second(dataset, *, batches: int, warmup: int = 2, runs: int = 5) -> list[float]:
    """Images/s of `runs` consecutive stretches of batches // runs batches each, from one iterator after `warmup`
    untimed batches (start-up, the first pass of a cache): repeated measurements, so a reading can show its spread."""
    helpers.errors.whole_number("images_per_second(runs=", runs, 1)
    helpers.errors.whole_number("images_per_second(warmup=", warmup, 0)
    helpers.errors.whole_number("images_per_second(batches=", batches, runs, hint=" (at least one batch per run)")
    iterator = iter(dataset)
    rates = []
    try:
        for _ in range(warmup):
            next(iterator)
        for _ in range(runs):
            images, start = 0, time.perf_counter()
            for _ in range(batches // runs):
                images += int(tf.shape(tf.nest.flatten(next(iterator))[0])[0])
            rates.append(images / (time.perf_counter() - start))
    except StopIteration:
        raise helpers.CourseError(f"images_per_second(): the dataset ran out before {warmup} + {batches} batches; "
                                  "add .repeat() or ask for fewer batches.") from None
    return rates


def spread(values, unit: str = "images/s") -> str:
    """'4,350 images/s (runs 3,900-4,600)': the median and the range of repeated measurements."""
    form = "{:,.0f}" if max(values) >= 100 else "{:.2f}"
    return (f"{form.format(statistics.median(values))} {unit} "
            f"(runs {form.format(min(values))}-{form.format(max(values))})")


def versus(new, base) -> tuple[float, str]:
    """new's median over base's, and whether the two sets of repeated measurements are apart: "higher" or "lower"
    when every run of one is above every run of the other (outside the noise), else "within noise"."""
    ratio = statistics.median(new) / statistics.median(base)
    if min(new) > max(base):
        return ratio, "higher, outside the noise"
    if max(new) < min(base):
        return ratio, "lower, outside the noise"
    return ratio, "within noise"
# end of notebook cell


# notebook cell: pipeline_rates
IO_THREADS = 32  # for blocking reads: many threads wait on storage at once while few cores decode


def pipeline_rates(paths, labels, class_names, *, latency_s=0.0, batch=64, batches=30):
    """Images/s delivered by each way of reading the files, with no model attached: five repeated runs each
    (images_per_second), so every reading shows its spread. The cached variant is timed after one full epoch has
    filled its cache."""
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
    slow_generator = max(5, batches // 2)  # with latency the generator crawls: fewer batches give the same rate
    return {name: images_per_second(
                ds, batches=slow_generator if name == "Python generator" and latency_s else batches,
                warmup=epoch + 1 if "cached" in name else 2)
            for name, ds in variants.items()}


def wait_only_rates(threads, latency_s, batch=64, batches=20):
    """Images/s of the simulated storage wait alone (numpy_function + sleep: no file, no decoding) in `threads`
    parallel calls. With nothing else in the way that would be threads / latency_s; the GIL, which numpy_function
    takes to enter and leave Python around each sleep, and the cores the threads share, keep it lower."""
    def wait(x):
        tf.numpy_function(lambda: time.sleep(latency_s), [], [], stateful=True)
        return x

    options = tf.data.Options()
    options.threading.private_threadpool_size = threads
    options.deterministic = False
    ds = tf.data.Dataset.range(1).repeat().map(wait, num_parallel_calls=threads).with_options(options)
    return images_per_second(ds.batch(batch).prefetch(tf.data.AUTOTUNE), batches=batches)
# end of notebook cell


def pipeline_comparison(fast: bool, root=None) -> dict:
    """{latency in s: {variant: images/s}} over the course's image folder (generated when missing)."""
    root = root or default_root()
    if not root.is_dir():
        make_image_folder(root)
    paths, labels, class_names = list_image_folder(root)
    return {latency: pipeline_rates(paths, labels, class_names, latency_s=latency, batches=20 if fast else 60)
            for latency in (0.0, LATENCY_S)}


def _median(rate) -> float:
    """A rate, or the median of repeated rates."""
    return statistics.median(rate) if isinstance(rate, (list, tuple)) else float(rate)


CACHED = "tf.data, cached"


def speedups(rates: dict, label: str) -> dict:
    """Over the Python generator's images/s (medians of repeated runs): the fastest tf.data variant that reads and
    decodes every file each epoch (uncached_...), and the cached one, which after its first epoch reads nothing."""
    generator = _median(rates["Python generator"])
    uncached = [_median(v) for k, v in rates.items() if k not in ("Python generator", CACHED)]
    found = {f"uncached_speedup_{label}": max(uncached) / generator} if uncached else {}
    if CACHED in rates:
        found[f"cached_speedup_{label}"] = _median(rates[CACHED]) / generator
    return {key: round(value, 2) for key, value in found.items()}


def pipeline_result(comparison: dict) -> Result:
    """The table, bar chart (whiskers: the range of repeated runs) and summary ratios of a
    {latency: {variant: images/s, or a list of repeated images/s}} comparison."""
    rows = [[f"{latency * 1000:g} ms", name, round(_median(rate)), round(_median(rate) / _median(
             rates["Python generator"]), 1)]
            for latency, rates in comparison.items() for name, rate in rates.items()]
    runs = [list(r) if isinstance(r, (list, tuple)) else [r] for rates in comparison.values() for r in rates.values()]
    fig = bars([f"{r[1].replace(', ', chr(10))}{chr(10)}{r[0]}" for r in rows],
               [_median(r) for r in runs], errors=([min(r) for r in runs], [max(r) for r in runs]),
               ylabel="images/s (log scale)", log=True,
               title="Reading and decoding image files, no model attached (whiskers: range of runs)")
    extra = {**speedups(comparison[0.0], "no_latency"), **speedups(comparison[LATENCY_S], "with_latency")}
    return Result("pipeline", ["latency", "variant", "images_per_s", "vs_generator"], rows, fig, extra)


def pipeline(fast: bool) -> Result:
    """Images/s of a Python generator vs tf.data variants, with and without 2 ms simulated latency per file."""
    return pipeline_result(pipeline_comparison(fast))
