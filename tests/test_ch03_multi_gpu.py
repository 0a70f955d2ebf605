"""Chapter 3's experiment code: the scaling point reports its spread, so the notebook can say whether a difference
is outside it."""

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
