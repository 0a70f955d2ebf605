"""A live training view: loss and metrics redrawn after every epoch while `fit` runs."""

from __future__ import annotations

import os

import keras
import matplotlib.pyplot as plt

from helpers.course import CourseError, flag_from_env
from helpers.plots import training_curves


def widgets_available() -> bool:
    """True in a Jupyter kernel with ipywidgets, unless COURSE_WIDGETS=0 (tests, `make run`)."""
    if not flag_from_env("COURSE_WIDGETS", default=True):
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class LiveTrainingView(keras.callbacks.Callback):
    """Pass to `fit(callbacks=[...])`. Redraws the curves each epoch in a widget; where widgets
    cannot render (nbval, a terminal, COURSE_WIDGETS=0) it prints one line per epoch instead and
    shows the final figure once at the end."""

    def __init__(self, metrics=("loss", "accuracy"), mode: str = "auto"):
        super().__init__()
        if mode not in ("auto", "widget", "text"):
            raise CourseError(f"LiveTrainingView(mode={mode!r}): use 'auto', 'widget' or 'text'.")
        self.metrics = tuple(metrics)
        self.mode = ("widget" if widgets_available() else "text") if mode == "auto" else mode
        self.history: dict[str, list[float]] = {}
        self.figure = None
        self._output = None

    def on_train_begin(self, logs=None):
        self.history = {}
        if self.mode == "widget":
            import ipywidgets
            from IPython.display import display

            self._output = ipywidgets.Output()
            display(self._output)

    def on_epoch_end(self, epoch, logs=None):
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))
        if self.mode == "widget":
            self._redraw()
        else:
            shown = ", ".join(f"{k} {v[-1]:.4f}" for k, v in self.history.items()
                              if k.removeprefix("val_") in self.metrics)
            print(f"epoch {epoch + 1}: {shown}")

    def _redraw(self):
        from IPython.display import display

        self._output.clear_output(wait=True)
        with self._output:
            self.figure = training_curves(self.history, self.metrics)
            display(self.figure)
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
