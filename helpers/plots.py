"""Plots the notebooks share: training curves and bar charts of measurements."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from helpers.course import CourseError


def training_curves(history: dict, metrics=("loss", "accuracy"), title: str = ""):
    """Training vs validation curves, one panel per metric. `history` is History.history."""
    if not isinstance(history, dict) or not history:
        raise CourseError("training_curves(): pass model.fit(...).history, a non-empty dict of lists.")
    metrics = [m for m in metrics if m in history]
    if not metrics:
        raise CourseError(f"training_curves(): none of the metrics are in the history (it has {sorted(history)}).")
    fig, axes = plt.subplots(1, len(metrics), figsize=(5 * len(metrics), 3.4), squeeze=False)
    for ax, name in zip(axes[0], metrics):
        epochs = range(1, len(history[name]) + 1)
        ax.plot(epochs, history[name], "o-", label=f"training {name}")
        if f"val_{name}" in history:
            ax.plot(epochs, history[f"val_{name}"], "s--", label=f"validation {name}")
        ax.set_xlabel("epoch")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
        ax.legend()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def bars(labels, values, *, ylabel: str, title: str = "", errors=None, log: bool = False):
    """A labelled bar chart; `errors` is an optional (low, high) pair of lists (e.g. min/max)."""
    labels, values = list(labels), list(values)
    if not labels or len(labels) != len(values):
        raise CourseError(f"bars(): got {len(labels)} labels for {len(values)} values; give one label per value.")
    fig, ax = plt.subplots(figsize=(max(4, 1.4 * len(labels) + 2), 3.4))
    yerr = None
    if errors is not None:
        low, high = errors
        if len(low) != len(values) or len(high) != len(values):
            raise CourseError(f"bars(): errors must be (low, high) lists of {len(values)} values each.")
        yerr = [[v - lo for v, lo in zip(values, low)], [hi - v for v, hi in zip(values, high)]]
    ax.bar(labels, values, yerr=yerr, capsize=4, color="#4c72b0")
    for i, v in enumerate(values):
        ax.annotate(f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}", (i, v), ha="center", va="bottom", fontsize=9,
                    xytext=(0, 3), textcoords="offset points")
    if log:
        ax.set_yscale("log")
    ax.margins(y=0.12)  # room for the value labels
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig
