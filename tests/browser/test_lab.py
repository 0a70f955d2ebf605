"""`make test-browser`: the notebooks run in JupyterLab in Chromium, checked for what a learner sees there.

Each notebook is opened in JupyterLab and run with Run > Run All Cells (fast mode, 2 logical devices, the live view
on); the copy JupyterLab saves is checked by tools/output_checks.py (no error, no stray stderr, every cell run, every
exercise's verdict), the page for every picture displayed and the live training view redrawn after every epoch.
One full-page screenshot each lands in build/screenshots/. NB="..." (paths, space-separated) picks the notebooks;
the default is all of them. TensorBoard's Profile tab is checked on chapter 8's profile: from this run when chapter 8
is among the notebooks, else from its last run in this clone. Linux with Debian's chromium.
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from PIL import Image

from tools import browser

ROOT = browser.ROOT
SELECTED = [Path(p).resolve() for p in os.environ.get("NB", "").split()] or sorted((ROOT / "notebooks").glob("*.ipynb"))
PROFILING = ROOT / "notebooks" / "08_profiling.ipynb"


@pytest.fixture(scope="module")
def lab():
    with browser.lab_session() as session:
        yield session


def case_notebook(name: str, *cells: str) -> Path:
    """A small notebook under the server's root (build/browser_cases/), importing the course's helpers."""
    nb = nbformat.v4.new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                           "language": "python"}})
    nb.cells = [nbformat.v4.new_code_cell(f"import sys\nsys.path.insert(0, {str(ROOT)!r})\nimport helpers"),
                *map(nbformat.v4.new_code_cell, cells)]
    path = ROOT / "build" / "browser_cases" / f"{name}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


FIT = """import keras, numpy as np
from helpers.live_view import LiveTrainingView
model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
model.compile("sgd", "mse")
model.fit(np.ones((8, 2)), np.ones((8, 1)), epochs=3, verbose=2, callbacks=[LiveTrainingView({args})])"""


def test_what_jupyterlab_saved_shows_stderr_an_error_and_the_cells_it_stopped(lab, tmp_path):
    path = case_notebook("raises", "print('before')", "import sys\nprint('a log line', file=sys.stderr)", "1 / 0",
                         "print('after')")
    stored = path.read_text()
    assert browser.check_in_lab(path, lab, tmp_path) == [
        "cell 3: shows log lines on stderr (red in JupyterLab): a log line",
        "cell 4: raised ZeroDivisionError: division by zero",
        "cell 5: did not run: the run stopped before it",
    ]
    assert (tmp_path / "raises.png").is_file()
    assert path.read_text() == stored  # JupyterLab saved a copy (build/browser/), never the notebook it ran


def test_a_live_view_that_is_not_redrawn_fails_the_check(lab, tmp_path):
    # mode="text" draws the curves once, after training: what a learner sees when the live view does not render.
    path = case_notebook("live_view", FIT.format(args="metrics=('loss',)"),
                         FIT.format(args="metrics=('loss',), mode='text'"))
    assert browser.check_in_lab(path, lab, tmp_path) == [
        "cell 3: the live training view was drawn 1 time(s) over 3 epochs: it should be redrawn in place after "
        "every epoch",
    ]


@pytest.mark.parametrize("notebook", SELECTED, ids=lambda path: path.stem)
def test_the_notebook_runs_in_jupyterlab_as_a_learner_sees_it(lab, notebook):
    problems = browser.check_in_lab(notebook, lab)
    assert not problems, f"{notebook.name} in JupyterLab:\n" + "\n".join(problems)
    assert (browser.SCREENSHOTS / f"{notebook.stem}.png").is_file()


def test_tensorboard_shows_chapter_8s_profile(lab):
    # The trace of chapter 8 run in this browser run, else of its last run in this clone (CI's nbval run writes it).
    naive = ROOT / "notebooks" / "ch8_logs" / "naive"
    if PROFILING not in SELECTED and not naive.is_dir():
        pytest.skip("no trace of chapter 8 in notebooks/ch8_logs: run the chapter (or select it with NB=...)")
    trace_viewer = browser.check_profile(naive, lab[0])
    assert Image.open(trace_viewer).size == (browser.TRACE_VIEWPORT["width"], browser.TRACE_VIEWPORT["height"])
