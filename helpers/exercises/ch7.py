"""Chapter 7's exercises (profiling): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import exercise

SAMPLE = 64  # files whose pixels and labels the check compares with what the learner's pipeline delivers


@exercise("ch7.not_input_bound")
def _not_input_bound(answer):
    # Measured: the check profiles the learner's pipeline itself (chapter 7's profile_fit, into a folder of its own)
    # and reads the step breakdown from that profile; numbers written by hand cannot pass. It first checks that the
    # pipeline delivers the image files' own pixels and labels, so that a pipeline of made-up tensors cannot either.
    # A busy machine slows the model more than the simulated storage (a sleep), which can hide the starting code's
    # input wait behind tf.data's injected prefetch: so a pipeline that meets the 20% goal is compared with the
    # starting code, profiled just after it, and its wait must also be a third of the starting code's or less.
    import tempfile

    import keras
    import numpy as np
    import tensorflow as tf

    import helpers.images as images
    from helpers.chapters.ch05_input_pipelines import LATENCY_S, file_dataset, read_image
    from helpers.chapters.ch07_profiling import profile_fit, small_convnet, step_breakdown

    if not callable(answer):
        return ("pass the function my_pipeline itself (not a step breakdown, not a dataset): the check profiles it "
                "and reads the breakdown from that profile.")
    root = images.default_root()
    if not root.is_dir():
        images.make_image_folder(root)
    paths, labels, class_names = images.list_image_folder(root)

    def thumbnail(image):  # 4x4 block means: tells the files apart, not the resizing method
        return np.asarray(tf.image.resize(image, (4, 4), method="area"))

    sample = list(range(0, len(paths), max(1, len(paths) // SAMPLE)))[:SAMPLE]  # files of every class
    expected = [(thumbnail(read_image(paths[i])), int(labels[i])) for i in sample]
    delivered = answer([paths[i] for i in sample], [labels[i] for i in sample], class_names, batch=len(sample) // 2)
    for images_batch, labels_batch in delivered.take(2):
        for image, label in zip(np.asarray(images_batch), np.asarray(labels_batch)):
            small = thumbnail(image)
            if not any(int(label) == want and np.abs(small - file).max() < 0.05 for file, want in expected):
                return ("my_pipeline delivered an image that matches no file of its label: it must read the files "
                        "it is given and pair each image with its label, as the starting code does.")

    def starting_code(paths, labels, class_names, batch=32):  # the notebook's my_pipeline before any change
        return file_dataset(paths, class_names, latency_s=LATENCY_S, parallel=False).batch(batch).repeat()

    def profiled(pipeline, logdir):
        keras.utils.set_random_seed(0)
        profile_fit(small_convnet(len(class_names)), pipeline(paths, labels, class_names), logdir)
        return step_breakdown(logdir)

    with tempfile.TemporaryDirectory() as logdir:
        mine = profiled(answer, f"{logdir}/mine")
        if not mine["steps"]:
            return "the check's profile of my_pipeline has no marked steps: " + mine["xprof says"]
        waiting = 100 * mine["input"] / mine["step ms"]
        # Only a pipeline that meets the first goal is compared with the starting code (a second profile, then).
        start = profiled(starting_code, f"{logdir}/start") if waiting <= 20 else None
    if start is not None and mine["input"] <= start["input"] / 3:
        return None
    measured = f"my_pipeline's step waits {mine['input']:.1f} ms for data ({waiting:.0f}% of the step)"
    if start is not None:
        measured += f", the starting code's {start['input']:.1f} ms (profiled just after, on the same machine)"
    return (f"in the check's profiles, {measured}; the goal is 20% or less of the step, and a third or less of the "
            "starting code's wait. Read several files at once (file_dataset's parallel and io_threads), let them "
            "arrive in any order, and prefetch.")
