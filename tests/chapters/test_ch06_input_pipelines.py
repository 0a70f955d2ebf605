import pathlib

import numpy as np
import pytest
import tensorflow as tf

import helpers
from helpers import images
from helpers.bench import ch06_input_pipelines as bench
from helpers.chapters import ch06_input_pipelines as pipelines


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = images.make_image_folder(tmp_path_factory.mktemp("p") / "shapes", per_class=4)
    return images.list_image_folder(root)


def test_label_from_path_matches_the_folder_index(folder):
    paths, labels, names = folder
    got = [int(pipelines.label_from_path(tf.constant(p), names)) for p in paths]
    assert got == labels.tolist()


def test_generator_and_tf_data_decode_the_same_images(folder):
    paths, labels, names = folder
    from_gen = list(pipelines.generator_dataset(paths[:3], labels[:3]).as_numpy_iterator())
    from_tf = [pipelines.read_image(tf.constant(p)).numpy() for p in paths[:3]]
    for (image, label), other, expected in zip(from_gen, from_tf, labels[:3]):
        assert image.shape == (64, 64, 3) and image.dtype == np.float32 and label == expected
        assert 0.0 <= image.min() and image.max() <= 1.0
        assert np.abs(image - other).mean() < 0.02  # PIL and TensorFlow's JPEG decoders differ slightly


@pytest.mark.parametrize("kwargs", [{}, {"cache": True}, {"io_threads": 4, "deterministic": False},
                                    {"parallel": False, "latency_s": 0.001}])
def test_file_dataset_yields_every_file_once_per_epoch_shuffled(folder, kwargs):
    paths, labels, names = folder
    ds = pipelines.file_dataset(paths, names, **kwargs)
    epochs = [[int(y) for _, y in ds] for _ in range(2)]
    for epoch in epochs:
        assert sorted(epoch) == sorted(labels.tolist())
    assert epochs[0] != labels.tolist() or epochs[1] != labels.tolist()  # shuffled, not in file order


def test_file_dataset_options(folder):
    paths, _, names = folder
    options = pipelines.file_dataset(paths, names, io_threads=8, deterministic=False).options()
    assert options.threading.private_threadpool_size == 8 and options.deterministic is False
    assert pipelines.file_dataset(paths, names).options().threading.private_threadpool_size in (None, 0)


def copy_folder(folder, tmp_path):
    """A private copy of the image folder, so a test may delete its files."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(pathlib.Path(folder[0][0]).parents[1], root)
    return images.list_image_folder(root)


def test_cached_pipeline_decodes_once_and_still_reshuffles_every_epoch(folder, tmp_path):
    paths, labels, names = copy_folder(folder, tmp_path)
    ds = pipelines.file_dataset(paths, names, cache=True)
    first = [int(y) for _, y in ds]  # fills the cache
    for path in paths:
        pathlib.Path(path).unlink()
    second = [int(y) for _, y in ds]  # from memory: the files are gone
    assert sorted(first) == sorted(second) == sorted(labels.tolist())
    assert first != second  # the shuffle comes after cache(): a new order each epoch


def test_uncached_pipeline_reads_the_files_every_epoch(folder, tmp_path):
    paths, labels, names = copy_folder(folder, tmp_path)
    ds = pipelines.file_dataset(paths, names)
    assert len([y for _, y in ds]) == len(paths)
    pathlib.Path(paths[0]).unlink()
    with pytest.raises(tf.errors.NotFoundError):
        for _ in ds:
            pass


def test_pipeline_rates_times_every_variant_in_rounds_against_the_generator(folder, monkeypatch):
    paths, labels, names = folder
    made = []

    def fake_reader(ds, *, batches, warmup=2, fill=0):
        made.append((batches, warmup, fill))
        rate = 100.0 * len(made)
        return lambda: rate

    monkeypatch.setattr(pipelines, "rate_reader", fake_reader)
    rates = pipelines.pipeline_rates(paths, labels, names, latency_s=0.002, batch=8, batches=20)
    assert list(rates) == ["Python generator", "tf.data, parallel map", "tf.data, 32 threads, any order",
                           "tf.data, cached"]
    assert rates["Python generator"] == [100.0] * 10  # the baseline runs twice per round (A/A)
    assert rates["tf.data, cached"] == [400.0] * 5
    # 20 batches over 5 rounds; the slow generator a third, with no warm-up; the cache fills on its first call
    # (3 batches of 8, and one)
    assert made == [(1, 0, 0), (4, 2, 0), (4, 2, 0), (4, 2, 4)]


def test_rate_reader_starts_a_new_iterator_per_call_and_fills_only_once():
    started = []

    def gen():
        started.append(1)
        yield from range(1000)

    ds = tf.data.Dataset.from_generator(gen, output_signature=tf.TensorSpec((), tf.int64)).batch(4)
    read = pipelines.rate_reader(ds, batches=3, warmup=1, fill=5)
    assert read() > 0 and read() > 0 and len(started) == 2
    with pytest.raises(helpers.CourseError, match=r"ran out before the 9 batches a reading takes; add \.repeat\(\)"):
        pipelines.rate_reader(tf.data.Dataset.range(20).batch(4), batches=3, warmup=1, fill=5)()


def test_wait_only_rates_gives_one_rate_per_run():
    rates = pipelines.wait_only_rates(threads=4, latency_s=0.001, batch=4, batches=10, runs=5)
    assert len(rates) == 5 and all(rate > 0 for rate in rates)


def test_no_verdict_rule_of_its_own():  # one home for a reading: helpers.readings (L-18)
    assert not hasattr(pipelines, "versus")


def test_pipeline_result_takes_repeated_rates_and_draws_their_range():
    comparison = {0.0: {"Python generator": [900.0, 1000.0, 1100.0], "tf.data, cached": [9000.0, 10000.0, 12000.0]},
                  0.002: {"Python generator": [300.0], "tf.data, cached": 21000.0}}
    result = pipelines.pipeline_result(comparison)
    assert result.rows[1] == ["0 ms", "tf.data, cached", 10000, 10.0]
    assert result.rows[3] == ["2 ms", "tf.data, cached", 21000, 70.0]
    import matplotlib.container

    containers = result.figure.axes[0].containers
    assert any(isinstance(c, matplotlib.container.ErrorbarContainer) for c in containers)  # whiskers: min to max


def test_the_benchmark_adds_the_speedups_over_the_generator():
    rates = {"Python generator": [900.0, 1000.0, 1100.0], "tf.data, parallel map": 3500.0,
             "tf.data, cached": [9000.0, 10000.0, 12000.0]}
    assert bench.speedups(rates, "no_latency") == {"uncached_speedup_no_latency": 3.5,
                                                   "cached_speedup_no_latency": 10.0}
