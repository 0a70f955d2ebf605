import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from helpers import CourseError
from helpers.plots import bars, training_curves

HISTORY = {
    "loss": [1.2, 0.8, 0.6],
    "accuracy": [0.5, 0.7, 0.8],
    "val_loss": [1.1, 0.9, 1.0],
    "val_accuracy": [0.55, 0.65, 0.6],
    "learning_rate": [0.001, 0.001, 0.001],
}


def bar_container(ax):
    [container] = [c for c in ax.containers if isinstance(c, BarContainer)]
    return container


def lines_of(ax):
    return {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines}


def test_training_curves_one_panel_per_metric_with_validation():
    fig = training_curves(HISTORY, title="Reuters")
    assert isinstance(fig, Figure)
    axes = fig.get_axes()
    assert [ax.get_ylabel() for ax in axes] == ["loss", "accuracy"]
    assert all(ax.get_xlabel() == "epoch" for ax in axes)
    assert lines_of(axes[0]) == {
        "training loss": ([1, 2, 3], HISTORY["loss"]),
        "validation loss": ([1, 2, 3], HISTORY["val_loss"]),
    }
    assert set(lines_of(axes[1])) == {"training accuracy", "validation accuracy"}
    assert fig._suptitle.get_text() == "Reuters"


def test_training_curves_skips_missing_metrics_and_validation():
    fig = training_curves({"loss": [1.0, 0.5]}, metrics=("loss", "accuracy", "auc"))
    [ax] = fig.get_axes()
    assert lines_of(ax) == {"training loss": ([1, 2], [1.0, 0.5])}
    assert fig._suptitle is None


def test_training_curves_integer_epoch_ticks():
    fig = training_curves({"loss": [1.0, 0.5, 0.4]})
    [ax] = fig.get_axes()
    fig.canvas.draw()
    assert all(float(t).is_integer() for t in ax.get_xticks())


@pytest.mark.parametrize("history", [{}, None, [1.0, 0.5], "loss"])
def test_training_curves_rejects_non_history(history):
    with pytest.raises(CourseError, match=r"training_curves\(\): pass model.fit\(...\).history"):
        training_curves(history)


def test_training_curves_names_the_available_metrics():
    with pytest.raises(CourseError, match=r"none of the metrics are in the history \(it has "
                                          r"\['mae', 'val_mae'\]\)"):
        training_curves({"val_mae": [1.0], "mae": [1.0]})


def test_bars_heights_labels_and_annotations():
    fig = bars(["/CPU:0", "/GPU:0"], [0.5, 1234.5], ylabel="seconds", title="matmul")
    [ax] = fig.get_axes()
    assert [p.get_height() for p in ax.patches] == [0.5, 1234.5]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["/CPU:0", "/GPU:0"]
    assert [a.get_text() for a in ax.texts] == ["0.5", "1,234"]
    assert ax.get_ylabel() == "seconds"
    assert ax.get_title() == "matmul"
    assert ax.get_yscale() == "linear"
    assert bar_container(ax).errorbar is None


def test_bars_error_bars_and_log_scale():
    fig = bars(("a", "b"), (2.0, 4.0), ylabel="s", errors=([1.5, 3.0], [2.5, 6.0]), log=True)
    [ax] = fig.get_axes()
    assert ax.get_yscale() == "log"
    errorbar = bar_container(ax).errorbar
    assert errorbar is not None
    [segments] = [c.get_segments() for c in errorbar.lines[2]]
    spans = [(seg[0][1], seg[1][1]) for seg in segments]
    assert spans == [(1.5, 2.5), (3.0, 6.0)]


@pytest.mark.parametrize("labels, values", [([], []), (["a"], [1, 2]), (["a", "b"], [1])])
def test_bars_rejects_mismatched_labels(labels, values):
    with pytest.raises(CourseError, match=rf"bars\(\): got {len(labels)} labels for {len(values)} "
                                          r"values; give one label per value"):
        bars(labels, values, ylabel="s")

