"""Chapter 1 (a single GPU): the exported cells the benchmarks run, `matmul_on`, `first_epoch_on` and `one_epoch`,
on this machine's CPU."""

import numpy as np
import pytest

from helpers.chapters.ch01_single_gpu import first_epoch_on, matmul_on, measure, one_epoch
from helpers.data import make_dataset


def test_matmul_on_times_the_cold_call_and_returns_the_same_product_to_time():
    run, cold, total = matmul_on("/CPU:0", 200, 100, 300)
    assert cold > 0
    # entries uniform in [0, 3): each of the 200 x 300 products averages 100 * 1.5 * 1.5
    assert float(total) == pytest.approx(200 * 300 * 100 * 2.25, rel=0.01)
    assert run() == pytest.approx(total, rel=1e-6)  # the same inputs every call
    assert measure(run, warmup=0, repeats=2).median > 0


def test_first_epoch_on_trains_a_fresh_model_and_one_epoch_trains_it_further():
    rng = np.random.default_rng(0)
    x, y = rng.integers(1, 30982, (64, 300), dtype=np.int32), rng.integers(0, 46, 64)
    dataset = make_dataset(x, y, 16, repeat=True)
    model, seconds = first_epoch_on("/CPU:0", dataset, steps=2)
    assert seconds > 0
    assert model.name == "reuters_conv1d_softmax" and model.optimizer.iterations.numpy() == 2
    run = one_epoch("/CPU:0", model, dataset, steps=2)
    assert run() is None
    assert model.optimizer.iterations.numpy() == 4
