import sys

import IPython
import IPython.display
import ipywidgets
import keras
import numpy as np
import pytest
from matplotlib.figure import Figure

from helpers import CourseError, widgets
from helpers.widgets import LiveTrainingView, widgets_available

LOGS = [
    {"loss": 1.25, "accuracy": 0.5, "val_loss": 1.5, "val_accuracy": 0.4, "learning_rate": 0.001},
    {"loss": 0.75, "accuracy": 0.625, "val_loss": 1.0, "val_accuracy": 0.5, "learning_rate": 0.001},
]


class ZMQInteractiveShell:
    """Named like the Jupyter kernel's shell, which is all widgets_available() looks at."""


class TerminalInteractiveShell:
    pass


@pytest.fixture
def displayed(monkeypatch):
    """Record what would be shown with IPython.display.display."""
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    return shown


class FakeOutput:
    def __init__(self):
        self.clears = []
        self.entered = 0

    def clear_output(self, wait=False):
        self.clears.append(wait)

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, *exc):
        return False


def simulate(view, logs=LOGS):
    view.on_train_begin()
    for epoch, epoch_logs in enumerate(logs):
        view.on_epoch_end(epoch, dict(epoch_logs))
    view.on_train_end()


# ---------------------------------------------------------------------------- widgets_available


def test_widgets_off_by_environment(monkeypatch):
    monkeypatch.setenv("COURSE_WIDGETS", "0")
    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    assert widgets_available() is False


def test_widgets_unavailable_outside_ipython(monkeypatch):
    monkeypatch.delenv("COURSE_WIDGETS")
    assert IPython.get_ipython() is None
    assert widgets_available() is False


@pytest.mark.parametrize("shell, expected", [(ZMQInteractiveShell, True),
                                             (TerminalInteractiveShell, False)])
def test_widgets_only_in_a_jupyter_kernel(monkeypatch, shell, expected):
    monkeypatch.setenv("COURSE_WIDGETS", "1")
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell())
    assert widgets_available() is expected


def test_widgets_unavailable_without_ipywidgets(monkeypatch):
    monkeypatch.setenv("COURSE_WIDGETS", "1")
    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    assert widgets_available() is False


def test_widgets_flag_typo_is_an_error(monkeypatch):
    monkeypatch.setenv("COURSE_WIDGETS", "nope")
    with pytest.raises(CourseError, match=r"COURSE_WIDGETS='nope' is not a yes/no value"):
        widgets_available()


def test_in_ipython(monkeypatch):
    assert widgets._in_ipython() is False
    monkeypatch.setattr(IPython, "get_ipython", lambda: TerminalInteractiveShell())
    assert widgets._in_ipython() is True
    monkeypatch.setitem(sys.modules, "IPython", None)
    assert widgets._in_ipython() is False


# ---------------------------------------------------------------------------- LiveTrainingView


@pytest.mark.parametrize("mode", ["fancy", "", None, "TEXT"])
def test_view_rejects_unknown_mode(mode):
    with pytest.raises(CourseError, match=rf"LiveTrainingView\(mode={mode!r}\): use 'auto', "
                                          r"'widget' or 'text'"):
        LiveTrainingView(mode=mode)


def test_auto_mode_follows_widgets_available(monkeypatch):
    assert LiveTrainingView().mode == "text"  # COURSE_WIDGETS=0 in tests
    monkeypatch.setattr(widgets, "widgets_available", lambda: True)
    assert LiveTrainingView().mode == "widget"
    assert LiveTrainingView(mode="text").mode == "text"


def test_text_mode_prints_one_line_per_epoch_and_builds_a_figure(capsys, displayed):
    view = LiveTrainingView(mode="text")
    simulate(view)
    assert capsys.readouterr().out.splitlines() == [
        "epoch 1: loss 1.2500, accuracy 0.5000, val_loss 1.5000, val_accuracy 0.4000",
        "epoch 2: loss 0.7500, accuracy 0.6250, val_loss 1.0000, val_accuracy 0.5000",
    ]
    assert view.history["loss"] == [1.25, 0.75]
    assert view.history["learning_rate"] == [0.001, 0.001]
    assert isinstance(view.figure, Figure)
    assert [ax.get_ylabel() for ax in view.figure.get_axes()] == ["loss", "accuracy"]
    assert displayed == []  # not in IPython: nothing to display


def test_text_mode_respects_chosen_metrics(capsys):
    view = LiveTrainingView(metrics=["loss"], mode="text")
    simulate(view, LOGS[:1])
    assert capsys.readouterr().out == "epoch 1: loss 1.2500, val_loss 1.5000\n"
    assert [ax.get_ylabel() for ax in view.figure.get_axes()] == ["loss"]


def test_text_mode_displays_final_figure_in_ipython(monkeypatch, displayed):
    monkeypatch.setattr(widgets, "_in_ipython", lambda: True)
    view = LiveTrainingView(mode="text")
    simulate(view)
    assert displayed == [view.figure]


def test_history_is_reset_for_each_fit(capsys):
    view = LiveTrainingView(mode="text")
    simulate(view)
    simulate(view, LOGS[:1])
    assert view.history["loss"] == [1.25]
    assert capsys.readouterr().out.splitlines()[-1].startswith("epoch 1: ")


def test_text_mode_with_a_real_fit(capsys, tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.random((16, 4), dtype=np.float32), rng.integers(0, 2, 16)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    view = LiveTrainingView(mode="text")
    model.fit(x, y, validation_data=(x, y), batch_size=8, epochs=3, verbose=0, callbacks=[view])
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["epoch 1", "epoch 2", "epoch 3"]
    assert all("val_loss" in line and "accuracy" in line for line in lines)
    assert len(view.history["loss"]) == 3
    path = view.save(str(tmp_path / "curves.png"))
    assert open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_save_writes_png_and_creates_folders(tmp_path):
    view = LiveTrainingView(mode="text")
    simulate(view)
    target = tmp_path / "report" / "figures" / "curves.png"
    assert view.save(str(target)) == str(target)
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_save_before_training_is_an_error(tmp_path):
    view = LiveTrainingView(mode="text")
    with pytest.raises(CourseError, match=r"LiveTrainingView.save\(\): nothing drawn yet; train "
                                          r"with this callback first"):
        view.save(str(tmp_path / "x.png"))
    view.on_train_begin()
    view.on_train_end()  # a fit with no epochs draws nothing
    with pytest.raises(CourseError, match="nothing drawn yet"):
        view.save(str(tmp_path / "x.png"))
    assert not (tmp_path / "x.png").exists()


def test_widget_mode_redraws_in_an_output_widget(monkeypatch, capsys, displayed, tmp_path):
    monkeypatch.setattr(ipywidgets, "Output", FakeOutput)
    view = LiveTrainingView(mode="widget")
    view.on_train_begin()
    [output] = displayed
    assert isinstance(output, FakeOutput)
    figures = []
    for epoch, logs in enumerate(LOGS):
        view.on_epoch_end(epoch, dict(logs))
        figures.append(view.figure)
    view.on_train_end()
    assert output.clears == [True, True]  # wait=True: no flicker between redraws
    assert output.entered == 2
    assert displayed[1:] == figures
    assert all(isinstance(f, Figure) for f in figures) and figures[0] is not figures[1]
    assert [len(line.get_xdata()) for line in figures[1].get_axes()[0].lines] == [2, 2]
    assert capsys.readouterr().out == ""  # no text lines in widget mode
    assert view.save(str(tmp_path / "w.png")).endswith("w.png")
