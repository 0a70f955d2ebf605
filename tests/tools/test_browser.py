"""tools/servers.py and tools/browser.py without a browser: TensorBoard served from a real trace and stopped
afterwards, processes stopped and none left behind, and the checks of what a JupyterLab page alone shows.
The runs in a real JupyterLab are tests/browser/ (`make test-browser`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request

import keras
import numpy as np
import psutil
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from helpers.chapters import ch08_profiling as ch8
from tools import browser, servers


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("logs") / "naive"
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4)])
    model.compile("sgd", "mse")
    data = (np.random.rand(64, 8).astype("float32"), np.random.rand(64, 4).astype("float32"))
    import tensorflow as tf

    ch8.profile_fit(model, tf.data.Dataset.from_tensor_slices(data).batch(8).repeat(), logdir, first=2, last=4)
    return logdir


def test_tensorboard_serves_the_profile_and_is_stopped_afterwards(trace):
    with servers.tensorboard(trace) as url:
        assert len(json.loads(servers.get(f"{url}/data/plugin/profile/runs"))) == 1
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{url}/data/plugin/profile/runs", timeout=2)


def test_a_free_port_binds_whether_this_python_or_another_picks_it():
    # The replica's own process has only the standard library: its TensorBoard's Python picks the port.
    for port in (servers.free_port(), servers.free_port(sys.executable)):
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_a_folder_without_a_trace_is_named(tmp_path):
    with pytest.raises(SystemExit, match="TensorBoard listing a profile run"):
        with servers.tensorboard(tmp_path, timeout_s=3):
            pass


SPAWNS = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], " \
         "start_new_session=True).wait(); time.sleep(60)"  # reaps its child, as a Jupyter server does


def test_descendants_in_sessions_of_their_own_are_stopped():
    # As a Jupyter server's kernels: outside the server's process group, so only stop_descendants reaches them.
    with servers.nothing_left_behind(grace_s=5):
        parent = subprocess.Popen([sys.executable, "-c", SPAWNS], start_new_session=True)
        servers.wait_until(lambda: psutil.Process(parent.pid).children(), "a child", 30)
        servers.stop_descendants(parent.pid)
        servers.stop(parent)
    assert parent.returncode == -15


def test_a_process_left_behind_is_killed_and_named():
    with pytest.raises(RuntimeError, match="outlived the run") as error:
        with servers.nothing_left_behind(grace_s=0.5):
            sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    assert sleeper.wait(timeout=10) == -9
    assert "time.sleep(60)" in str(error.value)


def test_processes_that_end_in_time_are_not_a_problem():
    with servers.nothing_left_behind() as run_id:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        assert os.environ[servers.MARKER] == run_id
    assert servers.MARKER not in os.environ
    assert servers.marked_processes(run_id) == []


EPOCHS = "Epoch 1/3\n1/1 - 0s - loss: 1.0\nEpoch 2/3\n1/1 - 0s - loss: 0.9\nEpoch 3/3\n1/1 - 0s - loss: 0.8\n"
FIT = "model.fit(x, y, epochs=3, verbose=2, callbacks=[LiveTrainingView()])"


def saved(*cells):
    return new_notebook(cells=[new_markdown_cell("# Title ![](a.png)"), *cells])


def fit_cell(text=EPOCHS):
    return new_code_cell(FIT, execution_count=1, outputs=[new_output("stream", name="stdout", text=text)])


def shown(drawings=0, broken=0, widgets=0, tables=0, error=False):
    """One cell as tools/browser.OBSERVE reports it."""
    return {"drawings": drawings, "broken": broken, "widgets": widgets, "widgetTables": tables, "widgetError": error}


def test_a_page_that_shows_everything_has_no_problems():
    assert browser.page_problems([shown(), shown(drawings=3)], saved(fit_cell())) == []


def test_pictures_not_displayed_are_named():
    assert browser.page_problems([shown(broken=1), shown(drawings=3, broken=2)], saved(fit_cell())) == [
        "cell 1: 1 picture(s) not displayed", "cell 2: 2 picture(s) not displayed"]


def test_a_live_view_drawn_fewer_times_than_epochs_is_a_problem():
    assert browser.page_problems([shown(), shown(drawings=1)], saved(fit_cell())) == [
        "cell 2: the live training view was drawn 1 time(s) over 3 epochs: it should be redrawn in place after "
        "every epoch"]
    assert "no 'Epoch i/n' lines" in browser.page_problems([shown(), shown(drawings=1)], saved(fit_cell("done")))[0]


def test_a_page_that_is_not_the_notebook_is_named():
    assert browser.page_problems([shown()], saved(fit_cell())) == [
        "the page shows 1 cells, the notebook has 2: not the same notebook?"]


CALCULATOR = new_code_cell("controls = calculator.show(INPUTS, predict, measure_here)", execution_count=1)


def test_the_calculator_needs_its_controls_and_both_tables():
    assert browser.page_problems([shown(), shown(widgets=12, tables=2)], saved(CALCULATOR)) == []
    for cell in (shown(), shown(widgets=12, tables=1), shown(widgets=0, tables=0)):
        assert "the calculator shows" in browser.page_problems([shown(), cell], saved(CALCULATOR))[0]


def test_a_widget_that_did_not_render_is_named():
    assert browser.page_problems([shown(), shown(widgets=12, tables=2, error=True)], saved(CALCULATOR)) == [
        "cell 2: a widget did not render (the page says 'Error displaying widget')"]
