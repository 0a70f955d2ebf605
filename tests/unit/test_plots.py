import matplotlib.pyplot as plt
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from helpers import CourseError
from helpers.plots import (
    bars,
    lines,
    spacing,
    speedup_lines,
    stacked_bars,
    training_curves,
)

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
    assert fig.get_suptitle() == "Reuters"


def test_training_curves_skips_missing_metrics_and_validation():
    fig = training_curves({"loss": [1.0, 0.5]}, metrics=("loss", "accuracy", "auc"))
    [ax] = fig.get_axes()
    assert lines_of(ax) == {"training loss": ([1, 2], [1.0, 0.5])}
    assert fig.get_suptitle() == ""


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
    # each value's label sits above its whisker, not across it
    assert [(a.get_text(), a.xy[1]) for a in ax.texts] == [("2", 2.5), ("4", 6.0)]


@pytest.mark.parametrize("labels, values", [([], []), (["a"], [1, 2]), (["a", "b"], [1])])
def test_bars_rejects_mismatched_labels(labels, values):
    with pytest.raises(CourseError, match=rf"bars\(\): got {len(labels)} labels for {len(values)} "
                                          r"values; give one label per value"):
        bars(labels, values, ylabel="s")



def test_speedup_lines_draws_ideal_and_each_series():
    fig = speedup_lines({"book": ([1, 2, 4], [1.0, 2.0, 3.8]), "here": ([1, 2], [1.0, 0.9])})
    lines = lines_of(fig.axes[0])
    assert lines["ideal (N devices = N x)"] == ([1, 4], [1, 4])
    assert lines["book"] == ([1, 2, 4], [1.0, 2.0, 3.8])
    assert lines["here"] == ([1, 2], [1.0, 0.9])


@pytest.mark.parametrize("series, message", [
    ({}, "at least one series"),
    ({"bad": ([1, 2], [1.0])}, "series 'bad' has 2 counts for 1 values"),
])
def test_speedup_lines_rejects_bad_series(series, message):
    with pytest.raises(CourseError, match=message):
        speedup_lines(series)


def test_spacing_plots_one_line_per_format_on_log_axes():
    fig = spacing([1.0, 2.0, 4.0], {"float16": [1e-3, 2e-3, 4e-3], "float32": [1e-7, 2e-7, 4e-7]})
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert lines_of(ax)["float32"] == ([1.0, 2.0, 4.0], [1e-7, 2e-7, 4e-7])


def test_spacing_rejects_gaps_of_the_wrong_length():
    with pytest.raises(CourseError, match="one gap per x value"):
        spacing([1.0, 2.0], {"float16": [1e-3]})


def test_lines_one_line_per_series_and_a_star_for_a_single_point():
    fig = lines({"a": ([1, 8, 32], [1.0, 1.2, 1.3]), "published": ([50], [1.5])}, xlabel="x", ylabel="y",
                title="t", logx=True)
    ax = fig.axes[0]
    assert lines_of(ax) == {"a": ([1, 8, 32], [1.0, 1.2, 1.3]), "published": ([50], [1.5])}
    assert ax.lines[1].get_marker() == "*" and ax.lines[0].get_marker() == "o"
    assert ax.get_xscale() == "log" and list(ax.get_xticks()) == [1, 8, 32, 50]
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("x", "y", "t")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "published"]


def test_lines_linear_axis_by_default():
    ax = lines({"loss": ([1, 2, 3], [3.0, 2.0, 1.5])}, xlabel="epoch", ylabel="loss").axes[0]
    assert ax.get_xscale() == "linear"
    assert all(float(t).is_integer() for t in ax.get_xticks())


@pytest.mark.parametrize("series, message", [({}, "at least one series"), ({"a": ([1, 2], [1.0])}, "'a' has 2 x")])
def test_lines_rejects_bad_series(series, message):
    with pytest.raises(CourseError, match=message):
        lines(series, xlabel="x", ylabel="y")


def test_as_jpeg_returns_a_small_jpeg_and_closes_the_figure():
    import numpy as np

    from helpers.plots import as_jpeg

    fig, ax = plt.subplots(figsize=(4, 2))
    ax.imshow(np.random.default_rng(0).random((64, 128, 3)))  # noise: the worst case for PNG
    image = as_jpeg(fig, dpi=50)
    assert image.data[:3] == b"\xff\xd8\xff"  # JPEG magic
    assert len(image.data) < 30_000
    assert not plt.fignum_exists(fig.number)


def test_stacked_bars_stack_each_part_and_leave_out_the_negligible_ones():
    fig = stacked_bars({"naive": {"input": 70.0, "compute": 20.0, "other": 0.1},
                        "fixed": {"input": 1.0, "compute": 22.0, "other": 0.2}}, xlabel="ms per step")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["input", "compute"]  # "other" is < 1% everywhere
    compute = [c for c in ax.containers if c.get_label() == "compute"][0]
    assert [bar.get_x() for bar in compute] == [70.0, 1.0]  # each part starts where the previous one ended
    assert [t.get_text() for t in ax.get_yticklabels()] == ["naive", "fixed"]


@pytest.mark.parametrize("parts", [{}, {"a": {"x": 1.0}, "b": {"y": 1.0}}])
def test_stacked_bars_need_the_same_parts_in_every_bar(parts):
    with pytest.raises(CourseError, match="same parts for every bar"):
        stacked_bars(parts, xlabel="ms")
