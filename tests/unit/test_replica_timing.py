"""helpers/replica_timing.py: chapter 3's section 7 times steady epochs under a strategy, and the gradient exchange
with the dense gradients and the embedding's rows counted apart."""

import numpy as np
import tensorflow as tf

from helpers.chapters.ch01_single_gpu import reuters_conv1d
from helpers.chapters.ch03_multi_gpu import one_weight_model
from helpers.replica_timing import exchange_seconds, samples_per_second


def one_cpu_strategy():
    return tf.distribute.MirroredStrategy([tf.config.list_logical_devices("CPU")[0].name])


def test_exchange_seconds_counts_the_dense_gradients_and_the_embedding_rows_apart():
    parts = exchange_seconds(one_cpu_strategy(), reuters_conv1d(), 32, calls=2, rounds=2)
    # C2-F1: of 332,856 parameters, the embedding's 216,874 are not exchanged as such: only the rows the batch used.
    assert parts["dense_values"] == 332_856 - 216_874 == 115_982
    assert parts["sparse_rows"] == 32 * 300 and parts["sparse_values"] == 32 * 300 * 7
    assert all(parts[key] >= 0 for key in ("dense", "sparse", "both"))


def test_exchange_seconds_of_a_model_without_an_embedding_has_no_rows_to_gather():
    parts = exchange_seconds(one_cpu_strategy(), one_weight_model(), 8, calls=1, rounds=1)
    assert parts["dense_values"] == 46 + 46 and parts["sparse_values"] == 0 and parts["sparse"] == 0.0


def test_samples_per_second_times_steady_epochs_of_the_model_it_built():
    rng = np.random.default_rng(0)
    x, y = rng.integers(1, 100, size=(64, 300)), rng.integers(0, 46, size=64)
    run = samples_per_second(one_cpu_strategy(), one_weight_model, x, y, 8, steps=3)
    assert run.global_batch == 8 and run.model.count_params() == 46 + 46  # built once, kept
    assert run() > 0 and run() > 0  # each call one more steady epoch
