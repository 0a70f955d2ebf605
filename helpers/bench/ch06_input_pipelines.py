"""Chapter 6's pipelines over image files: the naive Python generator and tf.data done right, and their comparison
(`python -m helpers.bench pipeline`)."""

from __future__ import annotations

import os
import statistics

from helpers.chapters.ch06_input_pipelines import LATENCY_S, pipeline_rates
from helpers.images import default_root, list_image_folder, make_image_folder
from helpers.plots import bars
from helpers.results import Result


def usable_cores() -> int:
    """The CPU cores this process may run on (what tf.data sizes its default thread pool by), not the machine's."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pipeline_comparison(fast: bool, root=None) -> dict:
    """{latency in s: {variant: images/s}} over the course's image folder (generated when missing)."""
    root = root or default_root()
    if not root.is_dir():
        make_image_folder(root)
    paths, labels, class_names = list_image_folder(root)
    return {latency: pipeline_rates(paths, labels, class_names, latency_s=latency, batches=20 if fast else 60)
            for latency in (0.0, LATENCY_S)}


def _median(rate) -> float:
    """A rate, or the median of repeated rates."""
    return statistics.median(rate) if isinstance(rate, (list, tuple)) else float(rate)


CACHED = "tf.data, cached"


def speedups(rates: dict, label: str) -> dict:
    """Over the Python generator's images/s (medians of repeated runs): the fastest tf.data variant that reads and
    decodes every file each epoch (uncached_...), and the cached one, which after its first epoch reads nothing."""
    generator = _median(rates["Python generator"])
    uncached = [_median(v) for k, v in rates.items() if k not in ("Python generator", CACHED)]
    found = {f"uncached_speedup_{label}": max(uncached) / generator} if uncached else {}
    if CACHED in rates:
        found[f"cached_speedup_{label}"] = _median(rates[CACHED]) / generator
    return {key: round(value, 2) for key, value in found.items()}


def pipeline_result(comparison: dict) -> Result:
    """The table, bar chart (whiskers: the range of repeated runs) and summary ratios of a
    {latency: {variant: images/s, or a list of repeated images/s}} comparison."""
    rows = [[f"{latency * 1000:g} ms", name, round(_median(rate)), round(_median(rate) / _median(
             rates["Python generator"]), 1)]
            for latency, rates in comparison.items() for name, rate in rates.items()]
    runs = [list(r) if isinstance(r, (list, tuple)) else [r] for rates in comparison.values() for r in rates.values()]
    fig = bars([f"{r[1].replace(', ', chr(10))}{chr(10)}{r[0]}" for r in rows],
               [_median(r) for r in runs], errors=([min(r) for r in runs], [max(r) for r in runs]),
               ylabel="images/s (log scale)", log=True,
               title="Reading and decoding image files, no model attached (whiskers: range of runs)")
    extra = {**speedups(comparison[0.0], "no_latency"), **speedups(comparison[LATENCY_S], "with_latency")}
    return Result("pipeline", ["latency", "variant", "images_per_s", "vs_generator"], rows, fig, extra)


def pipeline(fast: bool) -> Result:
    """Images/s of a Python generator vs tf.data variants, with and without 2 ms simulated latency per file."""
    return pipeline_result(pipeline_comparison(fast))
