"""Data loaders with offline fallbacks, and the tf.data input pipeline in the right order. TensorFlow is imported only
by make_dataset: the loaders serve chapters on the JAX backend too, on runtimes without TensorFlow (Colab's TPU)."""

from __future__ import annotations

import contextlib
import io
import socket
from dataclasses import dataclass, replace

import keras
import numpy as np

from helpers.errors import CourseError, whole_number

# The shapes of keras.datasets.reuters.load_data() with its defaults (test_split=0.2).
REUTERS_TRAIN, REUTERS_TEST = 8982, 2246
REUTERS_VOCAB, REUTERS_CLASSES = 30982, 46
DOWNLOAD_TIMEOUT_S = 15
TOPICAL_SHARE, LABEL_NOISE = 0.2, 0.2  # tuned so the stand-in learns, then overfits, like the real data
# The shapes of keras.datasets.cifar10.load_data(): 32x32 RGB images, uint8.
CIFAR10_TRAIN, CIFAR10_TEST, CIFAR10_SHAPE = 50_000, 10_000, (32, 32, 3)
CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


@dataclass
class Arrays:
    """A dataset held in memory as NumPy arrays, with a plain statement of where it came from."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    num_classes: int
    source: str  # says plainly whether this is the real data or the synthetic stand-in

    def head(self, n_train: int):
        """The first `n_train` training examples (fast mode) with the full test set, same source label."""
        whole_number(f"{type(self).__name__}.head(", n_train, 1, len(self.x_train))
        return replace(self, x_train=self.x_train[:n_train], y_train=self.y_train[:n_train])


@dataclass
class Reuters(Arrays):
    vocab_size: int = REUTERS_VOCAB


@dataclass
class Cifar10(Arrays):
    class_names: tuple[str, ...] = CIFAR10_CLASSES


def _download(load_data):
    """Call a keras.datasets loader (cached in ~/.keras/datasets) with a network timeout, quietly."""
    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(DOWNLOAD_TIMEOUT_S)
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # its "Downloading ..." line
            return load_data()
    finally:
        socket.setdefaulttimeout(old)


def _real_or_stand_in(call: str, allow_download: bool, download, real: str, stand_in, like: str):
    """(train, test, source): download() when allowed and it works, else stand_in(), with a source line
    that says plainly which one it is and, for the stand-in, why."""
    if not isinstance(allow_download, bool):
        raise CourseError(f"{call}(allow_download={allow_download!r}): use True or False.")
    if allow_download:
        try:
            return (*download(), f"real: {real}")
        except Exception as err:  # offline, blocked or a broken cache: the stand-in keeps us going
            reason = _failure_reason(err)
    else:
        reason = "download not allowed"
    return (*stand_in(), f"SYNTHETIC stand-in, same shapes as {like} ({reason}); accuracies are not comparable")


def _download_reuters():
    return _download(keras.datasets.reuters.load_data)


def _failure_reason(err: Exception) -> str:
    # Keras' message is "URL fetch failure on <url>: None -- <cause>"; the cause is what matters.
    return f"download failed: {str(err).split(' -- ')[-1].splitlines()[0][:90] or type(err).__name__}"


def synthetic_reuters(seed: int = 0):
    """A deterministic stand-in with the real data's shapes, vocabulary and skewed classes.

    Each class has its own 'topic words' mixed into Zipf-distributed common words, so a model can
    learn it (and overfit it) much as it does the real newswires. It is NOT real news.
    """
    rng = np.random.default_rng(seed)
    class_weights = 1.0 / np.arange(1, REUTERS_CLASSES + 1) ** 1.1
    class_weights /= class_weights.sum()
    topics = rng.integers(3, REUTERS_VOCAB, size=(REUTERS_CLASSES, 40))

    def make(n):
        labels = rng.choice(REUTERS_CLASSES, size=n, p=class_weights)
        lengths = np.clip(rng.lognormal(4.6, 0.7, size=n).astype(int), 10, 2000)
        sequences = []
        for label, length in zip(labels, lengths):
            common = np.minimum(rng.zipf(1.3, size=length) + 2, REUTERS_VOCAB - 1)
            topical = rng.random(length) < TOPICAL_SHARE
            common[topical] = rng.choice(topics[label], size=int(topical.sum()))
            sequences.append([1, *common.tolist()])  # 1 = start-of-sequence, as in Keras
        noisy = rng.random(n) < LABEL_NOISE  # ambiguous wires: why validation loss turns up
        labels[noisy] = rng.choice(REUTERS_CLASSES, size=int(noisy.sum()), p=class_weights)
        return sequences, labels.astype(np.int64)

    x_train, y_train = make(REUTERS_TRAIN)
    x_test, y_test = make(REUTERS_TEST)
    x_train[0][-1] = REUTERS_VOCAB - 1  # the largest word index appears, as in the real data
    return (x_train, y_train), (x_test, y_test)


def load_reuters(maxlen: int = 300, allow_download: bool = True) -> Reuters:
    """Reuters newswires padded to `maxlen`: the real data when it can be had, else the stand-in."""
    whole_number("load_reuters(maxlen=", maxlen, hint=" tokens, e.g. 300")
    (x_train, y_train), (x_test, y_test), source = _real_or_stand_in(
        "load_reuters", allow_download, _download_reuters, "keras.datasets.reuters (Reuters newswires, 46 topics)",
        synthetic_reuters, "Reuters")
    return Reuters(
        x_train=pad(x_train, maxlen), y_train=np.asarray(y_train, dtype=np.int64),
        x_test=pad(x_test, maxlen), y_test=np.asarray(y_test, dtype=np.int64),
        vocab_size=REUTERS_VOCAB, num_classes=REUTERS_CLASSES, source=source,
    )


def pad(sequences, maxlen: int = 300) -> np.ndarray:
    """Left-pad (and left-truncate) to `maxlen` int32 tokens, as the seeds' pad_sequences did."""
    whole_number("pad(maxlen=", maxlen, hint=" tokens, e.g. 300")
    return keras.utils.pad_sequences(sequences, maxlen=maxlen, dtype="int32")


def make_dataset(x, y, batch_size: int, *, shuffle: bool = True, seed: int = 0, repeat: bool = False,
                 drop_remainder: bool = False):
    """from_tensor_slices -> cache -> shuffle -> batch -> (repeat) -> prefetch.

    cache() comes first so each epoch reshuffles the cached examples; the seeds' cache() after
    prefetch() froze the first epoch's order forever. drop_remainder=True gives every batch the same
    static shape, which TPUs (XLA) need.
    """
    whole_number("make_dataset(batch_size=", batch_size)
    if len(x) != len(y):
        raise CourseError(f"make_dataset(): x has {len(x)} examples but y has {len(y)}; they must match.")
    import tensorflow as tf

    ds = tf.data.Dataset.from_tensor_slices((x, y)).cache()
    if shuffle:
        ds = ds.shuffle(buffer_size=len(x), seed=seed, reshuffle_each_iteration=True)
    ds = ds.batch(batch_size, drop_remainder=drop_remainder)
    if repeat:
        ds = ds.repeat()
    return ds.prefetch(tf.data.AUTOTUNE)


def _download_cifar10():
    return _download(keras.datasets.cifar10.load_data)


def synthetic_cifar10(seed: int = 0, n_train: int = CIFAR10_TRAIN, n_test: int = CIFAR10_TEST):
    """A deterministic stand-in with CIFAR-10's shapes and dtypes: each class is a noisy copy of its
    own random colour pattern, so a model can learn it. These are NOT photographs."""
    rng = np.random.default_rng(seed)
    templates = rng.integers(40, 216, size=(10, 8, 8, 3)).repeat(4, axis=1).repeat(4, axis=2).astype(np.int16)

    def make(n):
        labels = rng.integers(0, 10, size=n)
        images = np.empty((n, *CIFAR10_SHAPE), dtype=np.uint8)
        for start in range(0, n, 5000):  # in chunks: the noise for all 50,000 images at once is 300 MB
            part = labels[start:start + 5000]
            noise = rng.integers(-40, 41, size=(len(part), *CIFAR10_SHAPE), dtype=np.int16)
            images[start:start + 5000] = np.clip(templates[part] + noise, 0, 255)
        return images, labels.astype(np.int64)

    return make(n_train), make(n_test)


def load_cifar10(allow_download: bool = True) -> Cifar10:
    """CIFAR-10 in memory (labels as a flat int64 vector): the real data when it can be had, else the stand-in."""
    (x_train, y_train), (x_test, y_test), source = _real_or_stand_in(
        "load_cifar10", allow_download, _download_cifar10,
        "keras.datasets.cifar10 (60,000 32x32 photographs, 10 classes)", synthetic_cifar10, "CIFAR-10")
    return Cifar10(
        x_train=np.asarray(x_train, dtype=np.uint8), y_train=np.asarray(y_train, dtype=np.int64).reshape(-1),
        x_test=np.asarray(x_test, dtype=np.uint8), y_test=np.asarray(y_test, dtype=np.int64).reshape(-1),
        num_classes=10, source=source,
    )
