"""Plots the notebooks share: training curves and bar charts of measurements."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from helpers.errors import CourseError


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
    tops = values if errors is None else [max(v, hi) for v, hi in zip(values, errors[1])]  # above the whisker
    for i, (v, top) in enumerate(zip(values, tops)):
        ax.annotate(f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}", (i, top), ha="center", va="bottom", fontsize=9,
                    xytext=(0, 3), textcoords="offset points")
    if log:
        ax.set_yscale("log")
    ax.margins(y=0.12)  # room for the value labels
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def lines(series: dict, *, xlabel: str, ylabel: str, title: str = "", logx: bool = False):
    """One line per series on shared axes. series: {label: (xs, ys)}."""
    if not series:
        raise CourseError("lines(): give at least one series {label: (xs, ys)}.")
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, (xs, ys) in series.items():
        if len(xs) != len(ys):
            raise CourseError(f"lines(): series {label!r} has {len(xs)} x values for {len(ys)} y values.")
        ax.plot(xs, ys, "o-" if len(xs) > 1 else "*", markersize=6 if len(xs) > 1 else 12, label=label)
    if all(float(x).is_integer() for xs, _ in series.values() for x in xs):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if logx:
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted({x for xs, _ in series.values() for x in xs}))
        ax.get_xaxis().set_major_formatter(plt.ScalarFormatter())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def speedup_lines(series: dict, title: str = "Speed-up over one device"):
    """Speed-up curves against the ideal line. series: {label: (device counts, speed-ups)}."""
    if not series:
        raise CourseError("speedup_lines(): give at least one series {label: (counts, speedups)}.")
    fig, ax = plt.subplots(figsize=(6, 4))
    top = max(max(counts) for counts, _ in series.values())
    ax.plot([1, top], [1, top], color="grey", linestyle=":", label="ideal (N devices = N x)")
    for label, (counts, speedups) in series.items():
        if len(counts) != len(speedups):
            raise CourseError(f"speedup_lines(): series {label!r} has {len(counts)} counts for {len(speedups)} values.")
        ax.plot(counts, speedups, "o-", label=label)
    ax.set_xlabel("devices (replicas)")
    ax.set_ylabel("speed-up over 1 device")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def spacing(xs, gaps: dict, title: str = "Gap to the next representable number"):
    """Log-log plot of each format's gap after x. gaps: {format name: [gap after each x]}."""
    if not gaps or any(len(g) != len(xs) for g in gaps.values()):
        raise CourseError("spacing(): give {name: gaps} with one gap per x value.")
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for name, values in gaps.items():
        ax.loglog(xs, values, label=name, drawstyle="steps-post")
    ax.set_xlabel("x")
    ax.set_ylabel("gap after x")
    ax.set_title(title)
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    return fig


def stacked_bars(parts: dict, *, xlabel: str, title: str = "", minimum_share: float = 0.01):
    """Horizontal bars, one per key of `parts` ({bar: {part: value}}, the same parts in each), split into their
    parts; a part smaller than `minimum_share` of the longest bar in every bar is left out of the plot."""
    if not parts or len({tuple(p) for p in parts.values()}) != 1:
        raise CourseError("stacked_bars(): give {bar: {part: value}} with the same parts for every bar.")
    longest = max(sum(p.values()) for p in parts.values()) or 1.0
    fig, ax = plt.subplots(figsize=(7, 0.8 * len(parts) + 1.6))
    left = [0.0] * len(parts)
    for part in next(iter(parts.values())):
        widths = [p[part] for p in parts.values()]
        if max(widths) >= minimum_share * longest:
            ax.barh(list(parts), widths, left=left, label=part)
            left = [x + w for x, w in zip(left, widths)]
    ax.invert_yaxis()  # the first bar on top
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def as_jpeg(fig, dpi: int = 80, quality: int = 85):
    """Show a figure of photos as a JPEG: noisy pixels compress badly as PNG (a grid of a dozen photo thumbnails
    takes hundreds of kB in the notebook file). Closes the figure and returns an image the notebook displays."""
    import io

    from IPython.display import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, format="jpeg", dpi=dpi, pil_kwargs={"quality": quality})
    plt.close(fig)
    return Image(data=buffer.getvalue(), format="jpeg")
