"""Chapter 8's exercises (profiling): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import contextlib

from helpers.exercises.registry import exercise

SAMPLE = 64  # files whose pixels and labels the check compares with what the learner's pipeline delivers
BATCH = SAMPLE // 2  # the batch the check asks for: the sample is two batches, one epoch of its files
STEPS = 8  # training batches of the check's profile (profile_fit's last): it profiles the 3rd to the 8th


@contextlib.contextmanager
def _storage_waits(latency_s):
    """Counts the simulated storage waits made while it is open: calls of time.sleep for latency_s or longer from
    tf.data's threads, where a pipeline reads its files (chapter 6's read_image and generator_dataset both wait with
    time.sleep(latency_s) there). The check opens it only after my_pipeline has returned its dataset, so waits paid
    while building the pipeline (a loop of sleeps, then reads without latency) are not counted: each counted wait
    happens while the batches are drawn, beside the reads."""
    import threading
    import time

    real, waits = time.sleep, []

    def sleep(seconds):
        if seconds >= latency_s and threading.current_thread() is not threading.main_thread():
            waits.append(seconds)  # list.append is atomic: tf.data's threads may wait at the same time
        real(seconds)

    time.sleep = sleep
    try:
        yield waits
    finally:
        time.sleep = real


@exercise("ch8.not_input_bound")
def _not_input_bound(answer):
    # Measured: the check profiles the learner's pipeline itself (chapter 8's profile_fit, into a folder of its own)
    # and reads the step breakdown from that profile; numbers written by hand cannot pass. It first checks that the
    # pipeline delivers the image files' own pixels and labels, so that a pipeline of made-up tensors cannot either,
    # and that it delivers them as the exercise's storage would: each of the sample's files once (not one batch cached
    # and repeated), each read paying the simulated latency (counted: time.sleep of LATENCY_S or more). While it
    # profiles, the pipeline must also wait once per file it reads, for the files behind the profiled batches or for
    # every file: a cache filled before the profiled steps (chapter 6's cache(), whose shuffle buffer reads every file
    # before the first batch) is the real thing; a cache of a few batches, or reads without the latency, are not.
    # A busy machine slows the model more than the simulated storage (a sleep), which can hide the starting code's
    # input wait behind tf.data's injected prefetch: so a pipeline that meets the 20% goal is compared with the
    # starting code, profiled just after it, and its wait must also be a third of the starting code's or less.
    import tempfile

    import keras
    import numpy as np
    import tensorflow as tf

    import helpers.images as images
    from helpers.chapters.ch06_input_pipelines import LATENCY_S, file_dataset, read_image
    from helpers.chapters.ch08_profiling import profile_fit, small_convnet, step_breakdown

    if not callable(answer):
        return ("pass the function my_pipeline itself (not a step breakdown, not a dataset): the check profiles it "
                "and reads the breakdown from that profile.")
    root = images.default_root()
    if not root.is_dir():
        images.make_image_folder(root)
    paths, labels, class_names = images.list_image_folder(root)
    latency = f"{LATENCY_S * 1000:g} ms"

    def thumbnail(image):  # 4x4 block means: tells the files apart, not the resizing method
        return np.asarray(tf.image.resize(image, (4, 4), method="area"))

    sample = list(range(0, len(paths), max(1, len(paths) // SAMPLE)))[:SAMPLE]  # files of every class
    expected = [(thumbnail(read_image(paths[i])), int(labels[i])) for i in sample]
    files, batch = [], min(BATCH, len(sample) // 2)  # the sample file each delivered image is; the batch asked for
    delivered = answer([paths[i] for i in sample], [labels[i] for i in sample], class_names, batch=batch)
    if not isinstance(delivered, tf.data.Dataset):
        return f"my_pipeline must return a tf.data.Dataset (it returned a {type(delivered).__name__})."
    with _storage_waits(LATENCY_S) as waits:  # opened after my_pipeline returned: only waits while reading count
        for images_batch, labels_batch in delivered.take(2):
            size = len(labels_batch) if np.ndim(labels_batch) else 0
            if size != batch:
                # A smaller batch hides a sequential read behind the step: compare like with like.
                got = f"a batch of {size}" if size else "unbatched images"
                return (f"my_pipeline delivered {got} when the check asked for batch={batch}: batch with the "
                        "`batch` argument my_pipeline gets "
                        "(ds.batch(batch)); overlap the reads instead of making the batches smaller.")
            for image, label in zip(np.asarray(images_batch), np.asarray(labels_batch)):
                small = thumbnail(image)
                gaps = [np.abs(small - file).max() if int(label) == want else np.inf for file, want in expected]
                if min(gaps) >= 0.05:
                    return ("my_pipeline delivered an image that matches no file of its label: it must read the "
                            "files it is given and pair each image with its label, as the starting code does.")
                files.append(int(np.argmin(gaps)))
        sample_waits = len(waits)
    if len(set(files)) < len(files):
        return (f"my_pipeline's first two batches ({len(files)} images from the {len(sample)} files it was given, "
                f"one epoch) held only {len(set(files))} different files: deliver every file once per epoch, with "
                "no take() of a few batches cached and repeated (cache the whole dataset or nothing) and no shuffle "
                "after repeat().")
    if sample_waits < len(files):
        return (f"my_pipeline delivered {len(files)} images but waited for the simulated storage only {sample_waits} "
                f"times while they were read (waits made while building the pipeline do not count): read every file "
                f"with the starting code's {latency} latency (latency_s=LATENCY_S), and make "
                "the waits overlap rather than skip them.")

    def starting_code(paths, labels, class_names, batch=32):  # the notebook's my_pipeline before any change
        return file_dataset(paths, class_names, latency_s=LATENCY_S, parallel=False).batch(batch).repeat()

    def profiled(pipeline, logdir):  # (the step breakdown, the storage waits made while fit drew the batches)
        keras.utils.set_random_seed(0)
        dataset = pipeline(paths, labels, class_names, batch=BATCH)
        with _storage_waits(LATENCY_S) as waits:
            profile_fit(small_convnet(len(class_names)), dataset, logdir, last=STEPS)
        return step_breakdown(logdir), len(waits)

    with tempfile.TemporaryDirectory() as logdir:
        mine, profile_waits = profiled(answer, f"{logdir}/mine")
        if not mine["steps"]:
            return "the check's profile of my_pipeline has no marked steps: " + mine["xprof says"]
        trained = STEPS * BATCH  # images the profiled fit trained on
        needed = min(trained, len(paths))  # a file read for each, or every file read once (into a cache)
        if profile_waits < needed:
            return (f"while the check profiled it, my_pipeline trained on {trained} images from {len(paths)} files "
                    f"but waited for the simulated storage only {profile_waits} times (at least {needed}: one wait "
                    "per file read, or every file read once into a cache): read the files with their "
                    f"{latency} latency, rather than repeating a few cached batches.")
        waiting = 100 * mine["input"] / mine["step ms"]
        # Only a pipeline that meets the first goal is compared with the starting code (a second profile, then).
        start = profiled(starting_code, f"{logdir}/start")[0] if waiting <= 20 else None
    if start is not None and mine["input"] <= start["input"] / 3:
        return None
    measured = f"my_pipeline's step waits {mine['input']:.1f} ms for data ({waiting:.0f}% of the step)"
    if start is not None:
        measured += f", the starting code's {start['input']:.1f} ms (profiled just after, on the same machine)"
    return (f"in the check's profiles, {measured}; the goal is 20% or less of the step, and a third or less of the "
            "starting code's wait. Read several files at once (file_dataset's parallel and io_threads), let them "
            "arrive in any order, and prefetch.")
