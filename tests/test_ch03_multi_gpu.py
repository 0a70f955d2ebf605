"""Chapter 3's experiment code: the terminal sweep's point reports its spread; section 7's in-process measurements
count the dense gradients and the embedding's rows apart, and time steady epochs."""

import numpy as np
import pytest

from helpers import data
from helpers.experiments import ch03_multi_gpu


@pytest.fixture
def small_reuters(monkeypatch):
    rng = np.random.default_rng(0)

    def load_reuters():
        x = rng.integers(1, 30982, size=(64, 300))
        y = rng.integers(0, 46, size=64)
        return data.Reuters(x_train=x, y_train=y, x_test=x, y_test=y, num_classes=46, source="test stand-in")

    monkeypatch.setattr(ch03_multi_gpu, "load_reuters", load_reuters)


def test_replica_throughput_reports_the_median_and_the_spread_of_its_timed_epochs(small_reuters):
    point = ch03_multi_gpu.replica_throughput(per_replica_batch=8, steps=3, epochs=4)
    assert point["replicas"] == 1 and point["global_batch"] == 8
    # Three timed epochs after the first (tracing) one: their median lies within their range.
    assert point["samples_per_s_min"] <= point["samples_per_s"] <= point["samples_per_s_max"]
    assert point["samples_per_s"] == pytest.approx(point["steps_per_s"] * point["global_batch"])
    assert point["first_epoch_s"] > 0


# Section 7's in-process measurements ----------------------------------------------------------------------------

def cpu0():
    import tensorflow as tf

    return [tf.config.list_logical_devices("CPU")[0].name]


def test_exchange_seconds_counts_the_dense_gradients_and_the_embedding_rows_apart():
    from helpers.chapters.ch01_single_gpu import reuters_conv1d

    model = reuters_conv1d()
    parts = ch03_multi_gpu.exchange_seconds(ch03_multi_gpu.mirrored(cpu0()), model, 32, calls=2, rounds=2)
    # C2-F1: of 332,856 parameters, the embedding's 216,874 are not exchanged as such: only the rows the batch used.
    assert parts["dense_values"] == 332_856 - 216_874 == 115_982
    assert parts["sparse_rows"] == 32 * 300 and parts["sparse_values"] == 32 * 300 * 7
    assert all(parts[key] >= 0 for key in ("dense", "sparse", "both"))


def test_samples_per_second_times_steady_epochs_of_the_model_it_built():
    rng = np.random.default_rng(0)
    x, y = rng.integers(1, 100, size=(64, 300)), rng.integers(0, 46, size=64)
    run = ch03_multi_gpu.samples_per_second(ch03_multi_gpu.mirrored(cpu0()), ch03_multi_gpu.one_weight_model, x, y,
                                            8, steps=3)
    assert run.global_batch == 8 and run.model.count_params() == 46 + 46  # the empty step: one input column
    assert run() > 0


def test_mirrored_without_devices_is_a_course_error():
    from helpers.errors import CourseError

    with pytest.raises(CourseError, match="at least one device"):
        ch03_multi_gpu.mirrored([])
    assert ch03_multi_gpu.cross_device_op(cpu0()) is None
    assert type(ch03_multi_gpu.cross_device_op(["/device:CPU:0", "/device:CPU:1"])).__name__ == "ReductionToOneDevice"
