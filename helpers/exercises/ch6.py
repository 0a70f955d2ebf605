"""Chapter 6's exercises (input pipelines): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises.registry import _close, exercise


@exercise("ch6.shuffle_buffer_mb")
def _shuffle_buffer_mb(answer):
    # 3000 images x 224 x 224 x 3 float32 values x 4 bytes.
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 1e6):
        return None
    if _close(answer, 3000 * 224 * 224 * 3 / 1e6):
        return "the images were divided by 255: they are float32, 4 bytes per value."
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 2**20):
        return "use 1 MB = 10^6 bytes here (you divided by 2^20)."
    return "bytes = images x height x width x channels x bytes per value; then divide by 10^6."


FASTER_GOAL = 2.0  # the learner's epochs per second over the starting code's
FASTER_FILES_PER_CLASS = 80  # 480 files: an epoch of the starting code takes a fraction of a second, long enough
# that a cached epoch's fixed cost (a new iterator, a shuffle-free pass) leaves the solution well past the goal
BATCH = 64
TIMED_EPOCHS = 2  # per timed run


def _starting_pipeline(paths, class_names):
    """The exercise's starting code (slow_pipeline), the checker's own copy: what the learner's is timed against."""
    import tensorflow as tf

    from helpers.chapters.ch06_input_pipelines import label_from_path, read_image

    ds = tf.data.Dataset.from_tensor_slices(list(paths))
    ds = ds.map(lambda p: (read_image(p), label_from_path(p, class_names)))
    return ds.batch(BATCH)


def _one_epoch(dataset, most):
    """The images and labels of one pass over `dataset` (NumPy arrays, batch by batch) and the batch sizes; it stops
    once more than `most` images came out (an endless or repeated dataset)."""
    images, labels, sizes = [], [], []
    for x, y in dataset:
        images.append(x.numpy())
        labels.append(y.numpy())
        sizes.append(len(labels[-1]))
        if sum(sizes) > most:
            break
    return images, labels, sizes


def _signatures(images):
    """Each image averaged over 8x8 blocks: enough to tell the generated images apart, cheap to compare."""
    import numpy as np

    n, h, w, c = images.shape
    return images.reshape(n, 8, h // 8, 8, w // 8, c).mean(axis=(2, 4)).reshape(n, -1).astype(np.float64)


def _epoch_problem(dataset, reference, labels):
    """A hint when one epoch of the learner's dataset is not every file decoded exactly once, in batches of 64,
    with the images read_image gives and the folder labels; None when it is."""
    import numpy as np
    import tensorflow as tf

    from helpers.images import IMAGE_SIZE

    n = len(labels)
    if not isinstance(dataset, tf.data.Dataset):
        return ("faster_pipeline must return a tf.data.Dataset, as slow_pipeline does (it returned a "
                f"{type(dataset).__name__}).")
    spec = dataset.element_spec
    shape = (None, IMAGE_SIZE, IMAGE_SIZE, 3)
    if not (isinstance(spec, tuple) and len(spec) == 2 and all(isinstance(s, tf.TensorSpec) for s in spec)
            and spec[0].dtype == tf.float32 and spec[0].shape.is_compatible_with(shape)
            and spec[1].dtype.is_integer and spec[1].shape.is_compatible_with((None,))):
        return ("faster_pipeline must yield (images, labels) batches as slow_pipeline does: float32 images of shape "
                f"(batch, {IMAGE_SIZE}, {IMAGE_SIZE}, 3) decoded with read_image, and integer labels; its elements "
                f"are {spec}.")
    images, got_labels, sizes = _one_epoch(dataset, n)
    if sum(sizes) > n:
        return (f"faster_pipeline must deliver every file exactly once per epoch, as slow_pipeline does ({sum(sizes)}+ "
                f"images came out for {n} files: an epoch must end, so no repeat()).")
    if sum(sizes) != n:
        return (f"faster_pipeline must deliver every file exactly once per epoch, as slow_pipeline does "
                f"({sum(sizes)} images came out for {n} files).")
    if sizes != [BATCH] * (n // BATCH) + [n % BATCH] * (n % BATCH > 0):
        return (f"keep batches of {BATCH} as slow_pipeline does (batch({BATCH}) once, after the map); the batch sizes "
                f"were {sizes}.")
    images, got_labels = np.concatenate(images), np.concatenate(got_labels)
    nearest, unlike = _matches(images, reference)
    if unlike.any():
        return (f"{unlike.sum()} of the {n} images do not match a decoded file: every image must be read from its file "
                "and decoded with read_image(p), as slow_pipeline does (no stand-in or precomputed tensors).")
    if len(set(nearest.tolist())) != n:
        return (f"faster_pipeline must deliver every file exactly once per epoch: {n - len(set(nearest.tolist()))} "
                "files came out more than once and as many not at all.")
    wrong = int((got_labels != labels[nearest]).sum())
    if wrong:
        return (f"{wrong} labels do not match their images' folders: pair each image with label_from_path(p, "
                "class_names), as slow_pipeline does.")
    return None


def _matches(images, reference):
    """For each image, the index of the decoded file it is nearest to, and whether it differs from that file."""
    import numpy as np

    mine, theirs = _signatures(images), _signatures(reference)
    distance = (mine ** 2).sum(1)[:, None] + (theirs ** 2).sum(1)[None, :] - 2 * mine @ theirs.T
    nearest = distance.argmin(axis=1)
    return nearest, np.abs(images - reference[nearest]).mean(axis=(1, 2, 3)) > 0.02


def _sample_problem(samples, reference, labels):
    """A hint when a batch sampled from a timed epoch holds images that are not decoded files, or wrong labels."""
    import numpy as np

    for epoch, (x, y) in enumerate(samples):
        nearest, unlike = _matches(np.asarray(x), reference)
        if unlike.any() or (np.asarray(y) != labels[nearest]).any():
            return (f"a batch sampled from timed epoch {epoch + 1} holds {int(unlike.sum())} images that do not match "
                    "a decoded file, or labels that do not match their folders: every epoch, not only the first and "
                    "the last, must hold the files decoded with read_image(p) and labelled with label_from_path.")
    return None


@exercise("ch6.faster_pipeline")
def _faster_pipeline(answer):
    # Measured: the learner's pipeline and the starting code (the checker's own copy, whatever the learner did to
    # slow_pipeline) over a small generated image folder. After each one's first epoch (which fills a cache), whole
    # epochs are timed in alternating order (timed_speedup); the learner's must reach the goal and lie outside the
    # starting code's own spread (its A/A noise). Before that, one epoch must be every file decoded exactly once; one
    # batch of every timed epoch is kept (a reference, not a copy) and checked against the files after the timing.
    import tempfile
    from pathlib import Path

    import numpy as np

    from helpers.exercises.registry import timed_speedup
    from helpers.images import list_image_folder, make_image_folder

    faster = answer[-1] if isinstance(answer, tuple) else answer  # (slow_pipeline, faster_pipeline) is accepted too
    if not callable(faster):
        return "pass the function itself: check(\"ch6.faster_pipeline\", faster_pipeline), without parentheses."
    with tempfile.TemporaryDirectory() as folder:
        root = make_image_folder(Path(folder) / "shapes", per_class=FASTER_FILES_PER_CLASS)
        paths, labels, names = list_image_folder(root)
        baseline = _starting_pipeline(paths, names)
        reference = np.concatenate([x.numpy() for x, _ in baseline])  # also the starting code's first epoch
        dataset = faster(list(paths), list(names))
        problem = _epoch_problem(dataset, reference, labels)  # also the learner's first epoch
        if problem:
            return problem

        def epochs(ds, sizes, samples):  # each timed run: a few whole epochs, so that one hiccup does not decide it
            def run():
                for _ in range(TIMED_EPOCHS):
                    pick, size = len(sizes) % -(-len(labels) // BATCH), 0  # a different batch of each epoch
                    for i, (x, y) in enumerate(ds):
                        size += int(x.shape[0])
                        if i == pick:
                            samples.append((x, y))  # kept, not copied: checked after the timing
                    sizes.append(size)
            return run

        mine, sampled = [], []  # every timed epoch, not only the first, must hold every file, decoded
        speedup = timed_speedup(epochs(baseline, [], []), epochs(dataset, mine, sampled), repeats=5)
        short = [size for size in mine if size != len(labels)]
        if short:
            return (f"faster_pipeline must deliver every file exactly once in every epoch: {len(short)} of the "
                    f"{len(mine)} timed epochs held {short[0]} images for {len(labels)} files.")
        problem = _sample_problem(sampled, reference, labels)
        if problem:
            return problem
        problem = _epoch_problem(dataset, reference, labels)  # and the same images after the timed epochs
        if problem:
            return problem
    if speedup.reaches(FASTER_GOAL):
        return None
    return (f"an epoch of faster_pipeline ran {speedup}; the goal is {FASTER_GOAL:g}x, outside "
            "the noise. Keep the decoded images with cache() (tf.data already runs this map in parallel), and "
            "prepare batches ahead with prefetch().")
