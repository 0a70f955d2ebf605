"""A live training view: loss and metrics redrawn after every epoch while `fit` runs."""

from __future__ import annotations

import os

import keras
import matplotlib.pyplot as plt

from helpers.errors import CourseError, flag_from_env
from helpers.plots import training_curves


def live_display_available() -> bool:
    """True in a Jupyter kernel (JupyterLab, Notebook, Colab, Kaggle, VS Code), unless COURSE_WIDGETS=0.

    Colab's and other front ends' shells subclass ipykernel's ZMQInteractiveShell under other names,
    so the check walks the class hierarchy instead of comparing the class name.
    """
    if not flag_from_env("COURSE_WIDGETS", default=True):
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return any(cls.__name__ == "ZMQInteractiveShell" for cls in type(get_ipython()).__mro__)


class LiveTrainingView(keras.callbacks.Callback):
    """Pass to `fit(callbacks=[...])`. In a notebook it redraws the curves in place after each epoch
    (one figure, updated through its display handle: no ipywidgets needed, so it works with any
    front end and widget version). Elsewhere (a terminal, COURSE_WIDGETS=0) it shows the final figure
    once at the end. Keras's own per-epoch log (`verbose=2`) stays the place for the numbers."""

    def __init__(self, metrics=("loss", "accuracy"), mode: str = "auto"):
        super().__init__()
        if mode not in ("auto", "live", "text"):
            raise CourseError(f"LiveTrainingView(mode={mode!r}): use 'auto', 'live' or 'text'.")
        self.metrics = tuple(metrics)
        self.mode = ("live" if live_display_available() else "text") if mode == "auto" else mode
        self.history: dict[str, list[float]] = {}
        self.figure = None
        self._handle = None

    def on_train_begin(self, logs=None):
        self.history = {}
        self._handle = None

    def on_epoch_end(self, epoch, logs=None):
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))
        if self.mode == "live":
            self._redraw()

    def _redraw(self):
        from IPython.display import display

        self.figure = training_curves(self.history, self.metrics)
        if self._handle is None:
            self._handle = display(self.figure, display_id=True)
        else:
            self._handle.update(self.figure)
        plt.close(self.figure)

    def on_train_end(self, logs=None):
        if self.mode == "text" and self.history:
            self.figure = training_curves(self.history, self.metrics)
            if _in_ipython():
                from IPython.display import display

                display(self.figure)
            plt.close(self.figure)

    def save(self, path: str) -> str:
        """Write the last figure as a PNG (for reports and for looking at it outside Jupyter)."""
        if self.figure is None:
            raise CourseError("LiveTrainingView.save(): nothing drawn yet; train with this callback first.")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self.figure.savefig(path, dpi=100)
        return path


def _in_ipython() -> bool:
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return get_ipython() is not None
