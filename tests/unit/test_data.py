import socket

import numpy as np
import pytest
import tensorflow as tf

from helpers import CourseError, data
from helpers.data import load_reuters, make_dataset, pad


@pytest.fixture(scope="module")
def stand_in():
    return load_reuters(allow_download=False)


@pytest.fixture
def tiny_stand_in(monkeypatch):
    """A small synthetic_reuters, for tests that only check which source was used."""
    tiny = (([[1, 2]], [0]), ([[1, 3]], [1]))
    monkeypatch.setattr(data, "synthetic_reuters", lambda seed=0: tiny)


def fake_download(monkeypatch, name):
    """Replace data.<name> (a network download); install(result | error) returns the list of calls it got."""
    calls = []

    def install(result=None, error=None):
        def fake():
            calls.append(1)
            if error is not None:
                raise error
            return result

        monkeypatch.setattr(data, name, fake)
        return calls

    return install


@pytest.fixture
def downloader(monkeypatch):
    return fake_download(monkeypatch, "_download_reuters")


def test_stand_in_has_reuters_shapes(stand_in):
    assert stand_in.x_train.shape == (8982, 300)
    assert stand_in.x_test.shape == (2246, 300)
    assert stand_in.y_train.shape == (8982,)
    assert stand_in.y_test.shape == (2246,)
    assert stand_in.x_train.dtype == np.int32
    assert stand_in.y_train.dtype == np.int64
    assert stand_in.vocab_size == 30982
    assert stand_in.num_classes == 46


def test_stand_in_token_and_label_ranges(stand_in):
    assert stand_in.x_train.max() == 30981
    assert max(stand_in.x_train.max(), stand_in.x_test.max()) < stand_in.vocab_size
    assert min(stand_in.x_train.min(), stand_in.x_test.min()) == 0  # padding
    for y in (stand_in.y_train, stand_in.y_test):
        assert y.min() >= 0 and y.max() < 46
    # skewed classes, as in the real data: class 0 is the most frequent
    counts = np.bincount(stand_in.y_train, minlength=46)
    assert counts.argmax() == 0
    assert counts[0] > 5 * np.median(counts)


def test_stand_in_sequences_start_with_start_token(stand_in):
    kept = [row[row != 0] for row in stand_in.x_train[:200] if (row != 0).sum() < 300]  # not truncated
    assert len(kept) > 100
    assert all(tokens[0] == 1 for tokens in kept)  # the start-of-sequence marker is kept


def test_stand_in_says_it_is_synthetic(stand_in):
    assert stand_in.source.startswith("SYNTHETIC")
    assert "download not allowed" in stand_in.source
    assert "not comparable" in stand_in.source


def test_stand_in_is_deterministic(stand_in):
    again = load_reuters(allow_download=False)
    for name in ("x_train", "y_train", "x_test", "y_test"):
        np.testing.assert_array_equal(getattr(again, name), getattr(stand_in, name))
    assert again.source == stand_in.source


def test_synthetic_seed_changes_data(stand_in):
    (x1, y1), (x1_test, _) = data.synthetic_reuters(seed=1)
    assert (len(x1), len(y1), len(x1_test)) == (8982, 8982, 2246)
    assert not np.array_equal(y1, stand_in.y_train)  # the stand-in uses seed 0


def test_no_download_when_not_allowed(downloader, tiny_stand_in):
    calls = downloader(error=AssertionError("must not download"))
    reuters = load_reuters(maxlen=3, allow_download=False)
    assert calls == []
    np.testing.assert_array_equal(reuters.x_train, [[0, 1, 2]])


def test_real_data_is_padded_and_labelled_real(downloader):
    fake = (([[1, 5, 6], [1, 2, 3, 4, 5, 6]], [3, 45]), ([[1, 9]], [0]))
    calls = downloader(result=fake)
    reuters = load_reuters(maxlen=4)
    assert calls == [1]
    assert reuters.source.startswith("real: keras.datasets.reuters")
    np.testing.assert_array_equal(reuters.x_train, [[0, 1, 5, 6], [3, 4, 5, 6]])
    np.testing.assert_array_equal(reuters.x_test, [[0, 0, 1, 9]])
    assert reuters.x_train.dtype == np.int32
    np.testing.assert_array_equal(reuters.y_train, [3, 45])
    assert reuters.y_train.dtype == np.int64
    assert (reuters.vocab_size, reuters.num_classes) == (30982, 46)


def test_failed_download_falls_back_to_stand_in(downloader, stand_in):
    calls = downloader(error=OSError("Name or service not known"))
    reuters = load_reuters(maxlen=300)
    assert calls == [1]
    assert reuters.source.startswith("SYNTHETIC")
    assert "download failed: Name or service not known" in reuters.source
    np.testing.assert_array_equal(reuters.x_train, stand_in.x_train)


def test_download_silences_output_and_restores_timeout(monkeypatch, capsys):
    seen = {}

    def fake_load_data():
        print("Downloading data from https://storage.googleapis.com/...")
        seen["timeout"] = socket.getdefaulttimeout()
        return "the data"

    monkeypatch.setattr(data.keras.datasets.reuters, "load_data", fake_load_data)
    before = socket.getdefaulttimeout()
    assert data._download_reuters() == "the data"
    assert seen["timeout"] == data.DOWNLOAD_TIMEOUT_S
    assert socket.getdefaulttimeout() == before
    assert capsys.readouterr().out == ""


def test_download_restores_timeout_on_failure(monkeypatch):
    def failing():
        raise OSError("offline")

    monkeypatch.setattr(data.keras.datasets.reuters, "load_data", failing)
    before = socket.getdefaulttimeout()
    with pytest.raises(OSError):
        data._download_reuters()
    assert socket.getdefaulttimeout() == before


@pytest.mark.parametrize("bad", [0, -1, True, 300.0, "300", None])
def test_load_reuters_rejects_bad_maxlen(bad):
    with pytest.raises(CourseError, match=rf"load_reuters\(maxlen={bad!r}\): use a whole number"):
        load_reuters(maxlen=bad, allow_download=False)


def test_load_reuters_rejects_non_bool_allow_download(downloader, tiny_stand_in):
    downloader(error=OSError("offline"))
    with pytest.raises(CourseError, match=r"allow_download"):
        load_reuters(maxlen=10, allow_download="no")


def test_pad_left_pads_and_left_truncates():
    result = pad([[1, 2, 3], [4, 5, 6, 7, 8], []], maxlen=4)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, [[0, 1, 2, 3], [5, 6, 7, 8], [0, 0, 0, 0]])


# ---------------------------------------------------------------------------- make_dataset


def small_xy(n=10):
    return np.arange(n * 3, dtype=np.float32).reshape(n, 3), np.arange(n, dtype=np.int64)


def labels_of(ds):
    return np.concatenate([y.numpy() for _, y in ds])




def test_make_dataset_batches_in_order_without_shuffle():
    x, y = small_xy(10)
    ds = make_dataset(x, y, 4, shuffle=False)
    x_spec, y_spec = ds.element_spec
    assert x_spec.shape.as_list() == [None, 3]
    assert y_spec.shape.as_list() == [None]
    assert [xb.shape[0] for xb, _ in ds] == [4, 4, 2]
    assert ds.cardinality().numpy() == 3
    np.testing.assert_array_equal(labels_of(ds), y)
    xb, yb = next(iter(ds))
    np.testing.assert_array_equal(xb.numpy(), x[:4])


def test_make_dataset_shuffles_every_epoch_reproducibly():
    x, y = small_xy(20)
    ds = make_dataset(x, y, 5, seed=3)
    first, second = labels_of(ds), labels_of(ds)
    assert sorted(first) == sorted(second) == list(y)
    assert not np.array_equal(first, y)
    assert not np.array_equal(first, second)  # cache() before shuffle(): a new order each epoch
    again = make_dataset(x, y, 5, seed=3)
    np.testing.assert_array_equal(labels_of(again), first)


def test_make_dataset_pairs_stay_together_when_shuffled():
    x, y = small_xy(12)
    for xb, yb in make_dataset(x, y, 5, seed=1):
        np.testing.assert_array_equal(xb.numpy()[:, 0], yb.numpy() * 3)


def test_make_dataset_repeat_is_infinite():
    x, y = small_xy(6)
    ds = make_dataset(x, y, 4, shuffle=False, repeat=True)
    assert ds.cardinality().numpy() == tf.data.INFINITE_CARDINALITY
    batches = [yb.numpy().tolist() for _, yb in ds.take(4)]
    assert batches == [[0, 1, 2, 3], [4, 5], [0, 1, 2, 3], [4, 5]]


@pytest.mark.parametrize("bad", [0, -2, True, 4.0, "4", None])
def test_make_dataset_rejects_bad_batch_size(bad):
    x, y = small_xy(4)
    with pytest.raises(CourseError,
                       match=rf"make_dataset\(batch_size={bad!r}\): use a whole number"):
        make_dataset(x, y, bad)


def test_make_dataset_rejects_mismatched_lengths():
    x, _ = small_xy(3)
    with pytest.raises(CourseError, match=r"x has 3 examples but y has 2; they must match"):
        make_dataset(x, np.zeros(2), 2)


def test_head_keeps_the_first_training_wires_and_the_whole_test_set():
    full = load_reuters(allow_download=False)
    part = full.head(100)
    np.testing.assert_array_equal(part.x_train, full.x_train[:100])
    np.testing.assert_array_equal(part.y_train, full.y_train[:100])
    assert part.x_test is full.x_test and part.source == full.source


@pytest.mark.parametrize("n", [0, 9999, True, 2.5])
def test_head_rejects_bad_sizes(n):
    with pytest.raises(CourseError, match=r"Reuters.head\("):
        load_reuters(allow_download=False).head(n)


# ---------------------------------------------------------------------------- CIFAR-10


@pytest.fixture
def cifar_downloader(monkeypatch):
    return fake_download(monkeypatch, "_download_cifar10")


@pytest.fixture
def small_cifar_stand_in(monkeypatch):
    real = data.synthetic_cifar10
    monkeypatch.setattr(data, "synthetic_cifar10", lambda seed=0: real(seed, n_train=60, n_test=20))


def test_cifar_stand_in_has_cifar_shapes_dtypes_and_says_synthetic():
    (x_train, y_train), (x_test, y_test) = data.synthetic_cifar10()
    assert x_train.shape == (50_000, 32, 32, 3) and x_test.shape == (10_000, 32, 32, 3)
    assert x_train.dtype == np.uint8 and y_train.dtype == np.int64
    assert y_train.shape == (50_000,) and set(np.unique(y_test)) == set(range(10))
    cifar = data.load_cifar10(allow_download=False)
    assert cifar.source.startswith("SYNTHETIC stand-in, same shapes as CIFAR-10 (download not allowed)")
    assert cifar.num_classes == 10 and cifar.class_names[0] == "airplane" and len(cifar.class_names) == 10


def test_cifar_stand_in_is_deterministic_and_learnable():
    (x1, y1), _ = data.synthetic_cifar10(seed=0, n_train=200, n_test=10)
    (x2, y2), _ = data.synthetic_cifar10(seed=0, n_train=200, n_test=10)
    np.testing.assert_array_equal(x1, x2)
    np.testing.assert_array_equal(y1, y2)
    # Each class has its own pattern: images of one class are closer to their class mean than to another's.
    means = np.stack([x1[y1 == c].mean(axis=0) for c in range(10)])
    distances = ((x1[:, None].astype(float) - means[None]) ** 2).sum(axis=(2, 3, 4))
    assert (distances.argmin(axis=1) == y1).mean() > 0.95


def test_cifar_real_data_gets_flat_int64_labels(cifar_downloader):
    x = np.zeros((4, 32, 32, 3), np.uint8)
    calls = cifar_downloader(result=((x, np.array([[1], [2], [3], [4]], np.uint8)), (x[:2], np.array([[0], [9]]))))
    cifar = data.load_cifar10()
    assert calls == [1]
    assert cifar.source.startswith("real: keras.datasets.cifar10")
    assert cifar.y_train.shape == (4,) and cifar.y_train.dtype == np.int64
    np.testing.assert_array_equal(cifar.y_test, [0, 9])


def test_cifar_failed_download_falls_back_with_the_reason(cifar_downloader, small_cifar_stand_in):
    calls = cifar_downloader(error=OSError("URL fetch failure on https://x: None -- Name or service not known"))
    cifar = data.load_cifar10()
    assert calls == [1]
    assert "download failed: Name or service not known" in cifar.source
    assert cifar.x_train.shape == (60, 32, 32, 3)


def test_cifar_download_goes_through_keras_quietly(monkeypatch, capsys):
    def fake_load_data():
        print("Downloading data from https://www.cs.toronto.edu/...")
        return "cifar"

    monkeypatch.setattr(data.keras.datasets.cifar10, "load_data", fake_load_data)
    assert data._download_cifar10() == "cifar"
    assert capsys.readouterr().out == ""


def test_load_cifar10_rejects_non_bool_allow_download(cifar_downloader):
    calls = cifar_downloader(result=None)
    with pytest.raises(CourseError, match=r"load_cifar10\(allow_download='no'\): use True or False"):
        data.load_cifar10(allow_download="no")
    assert calls == []


def test_cifar_head_names_its_class_in_errors(small_cifar_stand_in):
    cifar = data.load_cifar10(allow_download=False)
    assert len(cifar.head(8).x_train) == 8 and len(cifar.head(8).x_test) == 20
    with pytest.raises(CourseError, match=r"Cifar10.head\(61\): use a whole number from 1 to 60"):
        cifar.head(61)


def test_make_dataset_drop_remainder_gives_static_batch_shapes():
    x, y = small_xy(5)
    kept = make_dataset(x, y, 2, shuffle=False)
    dropped = make_dataset(x, y, 2, shuffle=False, drop_remainder=True)
    assert [len(b[1]) for b in kept] == [2, 2, 1]
    assert [len(b[1]) for b in dropped] == [2, 2]
    assert dropped.element_spec[0].shape[0] == 2 and kept.element_spec[0].shape[0] is None
