"""tools/browser.py: the checks of a notebook run in JupyterLab (on what the page shows), processes left behind,
TensorBoard served from a real trace and stopped afterwards.
The runs in a real JupyterLab are tests/browser/ (`make test-browser`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request

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


def observed(kind="code", prompt="[1]:", texts=(), images=(), drawings=0, markdown_images=(), stderr=()):
    """One cell as tools/browser.OBSERVE reports it."""
    outputs = [{"mime": "application/vnd.jupyter.stdout", "text": text, "images": []} for text in texts]
    outputs += [{"mime": browser.STDERR, "text": text, "images": []} for text in stderr]
    outputs += [{"mime": "image/png", "text": "", "images": [shown]} for shown in images]
    return {"kind": kind, "prompt": prompt, "outputs": outputs, "drawings": drawings,
            "markdown_images": list(markdown_images)}


def stored(kind, source, stderr=False):
    return browser.StoredCell(kind, source, stderr)


TRACEBACK = """---------------------------------------------------------------------------
ZeroDivisionError                         Traceback (most recent call last)
Cell In[2], line 1
----> 1 1 / 0

ZeroDivisionError: division by zero"""
EPOCHS = "Epoch 1/3\n1/1 - 0s - loss: 1.0\nEpoch 2/3\n1/1 - 0s - loss: 0.9\nEpoch 3/3\n1/1 - 0s - loss: 0.8"
FIT = "model.fit(x, y, epochs=3, verbose=2, callbacks=[LiveTrainingView()])"


def test_a_notebook_that_shows_everything_has_no_problems():
    cells = [observed("markdown", prompt="", markdown_images=[True]), observed(texts=["hello"]),
             observed(prompt="[2]:", images=[True]), observed(prompt="[3]:", texts=[EPOCHS], images=[True], drawings=3),
             observed(prompt="[4]:", texts=["[ch1.embedding_params] Not answered yet: replace the ..."])]
    sources = [stored("markdown", "# Title ![](a.png)"), stored("code", "print('hello')"),
               stored("code", "plt.plot([1]); plt.show()"), stored("code", FIT),
               stored("code", "helpers.exercises.check('ch1.embedding_params', None)")]
    assert browser.lab_problems(cells, sources) == []


def test_a_raising_cell_and_the_cells_it_stopped_are_named():
    cells = [observed(), observed(prompt="[2]:", stderr=[TRACEBACK]), observed(prompt=""), observed(prompt="[ ]:")]
    sources = [stored("code", "x = 1"), stored("code", "1 / 0"), stored("code", "  \n"), stored("code", "print(x)")]
    assert browser.lab_problems(cells, sources) == [
        "cell 2: raised ZeroDivisionError: division by zero",
        "cell 4: did not run (its prompt shows [ ]:): the run stopped before it",
    ]


def test_a_live_view_drawn_fewer_times_than_epochs_is_a_problem():
    sources = [stored("code", FIT)]
    assert browser.lab_problems([observed(texts=[EPOCHS], drawings=3)], sources) == []
    assert browser.lab_problems([observed(texts=[EPOCHS], drawings=1)], sources) == [
        "cell 1: the live training view was drawn 1 time(s) over 3 epochs: it should be redrawn in place after "
        "every epoch"]
    assert "no 'Epoch i/n' lines" in browser.lab_problems([observed(texts=["done"], drawings=1)], sources)[0]


def test_pictures_not_shown_and_verdicts_missing_are_problems():
    cells = [observed(images=[False]), observed(texts=["<Figure size 640x480 with 1 Axes>"]),
             observed("markdown", prompt="", markdown_images=[True, False]), observed(texts=["42"])]
    sources = [stored("code", "plot()"), stored("code", "plot()"), stored("markdown", "![](x.png) ![](y.png)"),
               stored("code", "helpers.exercises.check('ch0.input_share', answer)")]
    assert browser.lab_problems(cells, sources) == [
        "cell 1: 1 image(s) not displayed",
        "cell 2: a figure shown as text (<Figure size ...>) instead of a picture",
        "cell 3: 1 image(s) not displayed",
        "cell 4: an exercise check shows no verdict",
    ]


def test_log_lines_on_stderr_are_a_problem():
    cells = [observed(stderr=["WARNING: All log messages before absl::InitializeLog() is called ...\nI0000 ..."])]
    assert browser.lab_problems(cells, [stored("code", "import tensorflow")]) == [
        "cell 1: shows log lines on a red background (stderr): WARNING: All log messages before absl::InitializeLog() "
        "is called ..."]


def test_stderr_the_stored_notebook_shows_on_purpose_is_not_a_problem():
    cells = [observed(stderr=["E0000 jpeg_mem.cc:331] Premature end of JPEG data."])]
    assert browser.lab_problems(cells, [stored("code", "decode(files)", stderr=True)]) == []


def test_a_page_that_is_not_the_notebook_is_named():
    assert browser.lab_problems([observed()], [stored("code", "1"), stored("code", "2")]) == [
        "the page shows 1 cells, the notebook has 2: not the same notebook?"]


def test_a_process_left_behind_is_killed_and_named():
    with pytest.raises(RuntimeError, match="outlived the browser run") as error:
        with browser.nothing_left_behind(grace_s=0.5):
            sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert sleeper.wait(timeout=10) == -9
    assert "time.sleep(60)" in str(error.value)


def test_processes_that_end_in_time_are_not_a_problem():
    with browser.nothing_left_behind() as run_id:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        assert os.environ[browser.MARKER] == run_id
    assert browser.marked_processes(run_id) == []
