"""tools/browser.py: TensorBoard served from a real trace and stopped afterwards; the screenshots where a browser is
installed."""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import keras
import numpy as np
import pytest

from helpers.chapters import ch07_profiling as ch7
from tools import browser


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("logs") / "naive"
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
    model.compile("sgd", "mse")
    data = (np.random.rand(64, 8).astype("float32"), np.random.rand(64, 4).astype("float32"))
    import tensorflow as tf

    ch7.profile_fit(model, tf.data.Dataset.from_tensor_slices(data).batch(8).repeat(), logdir, first=2, last=4)
    return logdir


def test_tensorboard_serves_the_profile_and_is_stopped_afterwards(trace):
    with browser.tensorboard(trace) as url:
        assert len(json.loads(browser.get(f"{url}/data/plugin/profile/runs"))) == 1
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/data/plugin/profile/runs", timeout=2)


def test_a_folder_without_a_trace_is_named(tmp_path):
    with pytest.raises(SystemExit, match="listed no profile run"), browser.tensorboard(tmp_path, timeout_s=3):
        pass


@pytest.mark.skipif(not Path(browser.CHROMIUM).is_file() or shutil.which("chromium") is None,
                    reason="needs Debian's chromium (apt-get install chromium)")
def test_the_profile_screenshots_are_taken(trace, tmp_path):
    pytest.importorskip("playwright", reason="needs the browser extra (pip install -e '.[browser]')")
    overview, trace_viewer = browser.profile_screenshots(trace, tmp_path)
    from PIL import Image

    assert Image.open(overview).size == (browser.VIEWPORT["width"], browser.VIEWPORT["height"])
    assert Image.open(trace_viewer).size == (browser.TRACE_VIEWPORT["width"], browser.TRACE_VIEWPORT["height"])
