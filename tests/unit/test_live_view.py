import sys

import IPython
import IPython.display
import keras
import numpy as np
import pytest
from matplotlib.figure import Figure

from helpers import CourseError, live_view
from helpers.live_view import LiveTrainingView, live_display_available

LOGS = [
    {"loss": 1.25, "accuracy": 0.5, "val_loss": 1.5, "val_accuracy": 0.4, "learning_rate": 0.001},
    {"loss": 0.75, "accuracy": 0.625, "val_loss": 1.0, "val_accuracy": 0.5, "learning_rate": 0.001},
]


class ZMQInteractiveShell:
    """Named like ipykernel's shell, which is all live_display_available() looks for."""


class ColabShell(ZMQInteractiveShell):
    """Colab's kernel shell is a subclass with another name (google.colab._shell.Shell)."""


class TerminalInteractiveShell:
    pass


class FakeHandle:
    def __init__(self, shown):
        self.shown = shown

    def update(self, obj):
        self.shown.append(("update", obj))


@pytest.fixture
def displayed(monkeypatch):
    """Record what would be shown with IPython.display.display (and updated through its handle)."""
    shown = []

    def display(obj, display_id=None):
        shown.append(("display", obj) if display_id else obj)
        return FakeHandle(shown) if display_id else None

    monkeypatch.setattr(IPython.display, "display", display)
    return shown


def simulate(view, logs=LOGS):
    view.on_train_begin()
    for epoch, epoch_logs in enumerate(logs):
        view.on_epoch_end(epoch, dict(epoch_logs))
    view.on_train_end()


# ---------------------------------------------------------------------------- live_display_available


def test_live_display_off_by_environment(monkeypatch):
    monkeypatch.setenv("COURSE_WIDGETS", "0")
    monkeypatch.setattr(IPython, "get_ipython", lambda: ZMQInteractiveShell())
    assert live_display_available() is False


def test_live_display_unavailable_outside_ipython(monkeypatch):
    monkeypatch.delenv("COURSE_WIDGETS")
    assert IPython.get_ipython() is None
    assert live_display_available() is False


@pytest.mark.parametrize("shell, expected", [(ZMQInteractiveShell, True), (ColabShell, True),
                                             (TerminalInteractiveShell, False)])
def test_live_display_in_any_jupyter_kernel_shell(monkeypatch, shell, expected):
    monkeypatch.setenv("COURSE_WIDGETS", "1")
    monkeypatch.setattr(IPython, "get_ipython", lambda: shell())
    assert live_display_available() is expected


def test_live_display_needs_no_ipywidgets(monkeypatch):
    monkeypatch.setenv("COURSE_WIDGETS", "1")
    monkeypatch.setattr(IPython, "get_ipython", lambda: ColabShell())
    monkeypatch.setitem(sys.modules, "ipywidgets", None)
    assert live_display_available() is True


def test_live_display_flag_typo_is_an_error(monkeypatch):
    monkeypatch.setenv("COURSE_WIDGETS", "nope")
    with pytest.raises(CourseError, match=r"COURSE_WIDGETS='nope' is not a yes/no value"):
        live_display_available()


def test_in_ipython(monkeypatch):
    assert live_view._in_ipython() is False
    monkeypatch.setattr(IPython, "get_ipython", lambda: TerminalInteractiveShell())
    assert live_view._in_ipython() is True
    monkeypatch.setitem(sys.modules, "IPython", None)
    assert live_view._in_ipython() is False


# ---------------------------------------------------------------------------- LiveTrainingView


@pytest.mark.parametrize("mode", ["fancy", "", None, "TEXT"])
def test_view_rejects_unknown_mode(mode):
    with pytest.raises(CourseError, match=rf"LiveTrainingView\(mode={mode!r}\): use 'auto', "
                                          r"'live' or 'text'"):
        LiveTrainingView(mode=mode)


def test_auto_mode_follows_live_display_available(monkeypatch):
    assert LiveTrainingView().mode == "text"  # COURSE_WIDGETS=0 in tests
    monkeypatch.setattr(live_view, "live_display_available", lambda: True)
    assert LiveTrainingView().mode == "live"
    assert LiveTrainingView(mode="text").mode == "text"


def test_text_mode_prints_nothing_and_builds_a_figure_at_the_end(capsys, displayed):
    view = LiveTrainingView(mode="text")
    simulate(view)
    assert capsys.readouterr().out == ""  # the numbers are Keras's own log (verbose=2)
    assert view.history["loss"] == [1.25, 0.75]
    assert view.history["learning_rate"] == [0.001, 0.001]
    assert isinstance(view.figure, Figure)
    assert [ax.get_ylabel() for ax in view.figure.get_axes()] == ["loss", "accuracy"]
    assert displayed == []  # not in IPython: nothing to display


def test_text_mode_respects_chosen_metrics():
    view = LiveTrainingView(metrics=["loss"], mode="text")
    simulate(view, LOGS[:1])
    assert [ax.get_ylabel() for ax in view.figure.get_axes()] == ["loss"]


def test_text_mode_displays_final_figure_in_ipython(monkeypatch, displayed):
    monkeypatch.setattr(live_view, "_in_ipython", lambda: True)
    view = LiveTrainingView(mode="text")
    simulate(view)
    assert displayed == [view.figure]


def test_history_is_reset_for_each_fit():
    view = LiveTrainingView(mode="text")
    simulate(view)
    simulate(view, LOGS[:1])
    assert view.history["loss"] == [1.25]


def test_text_mode_with_a_real_fit(capsys, tmp_path):
    rng = np.random.default_rng(0)
    x, y = rng.random((16, 4), dtype=np.float32), rng.integers(0, 2, 16)
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    view = LiveTrainingView(mode="text")
    model.fit(x, y, validation_data=(x, y), batch_size=8, epochs=3, verbose=0, callbacks=[view])
    assert capsys.readouterr().out == ""
    assert [len(view.history[k]) for k in ("loss", "accuracy", "val_loss", "val_accuracy")] == [3, 3, 3, 3]
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


def test_live_mode_displays_one_figure_and_updates_it_in_place(capsys, displayed, tmp_path):
    view = LiveTrainingView(mode="live")
    view.on_train_begin()
    figures = []
    for epoch, logs in enumerate(LOGS):
        view.on_epoch_end(epoch, dict(logs))
        figures.append(view.figure)
    view.on_train_end()
    assert displayed == [("display", figures[0]), ("update", figures[1])]
    assert all(isinstance(f, Figure) for f in figures) and figures[0] is not figures[1]
    assert [len(line.get_xdata()) for line in figures[1].get_axes()[0].lines] == [2, 2]
    assert capsys.readouterr().out == ""
    assert view.save(str(tmp_path / "w.png")).endswith("w.png")


def test_live_mode_starts_a_new_figure_for_each_fit(displayed):
    view = LiveTrainingView(mode="live")
    simulate(view, LOGS[:1])
    simulate(view, LOGS[:1])
    assert [kind for kind, _ in displayed] == ["display", "display"]
