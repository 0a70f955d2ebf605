"""Chapter 6's benchmark (`python -m helpers.bench pipeline`): the naive Python generator against tf.data done right,
with and without simulated storage latency, timed and tabled with the code chapter 6 teaches
(helpers/chapters/ch06_input_pipelines.py: pipeline_rates, pipeline_result)."""

from __future__ import annotations

import statistics

from helpers.chapters.ch06_input_pipelines import LATENCY_S, as_runs, pipeline_rates, pipeline_result
from helpers.images import default_root, list_image_folder, make_image_folder
from helpers.results import Result

CACHED = "tf.data, cached"


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
    return statistics.median(as_runs(rate))


def speedups(rates: dict, label: str) -> dict:
    """Over the Python generator's images/s (medians of repeated runs): the fastest tf.data variant that reads and
    decodes every file each epoch (uncached_...), and the cached one, which after its first epoch reads nothing."""
    generator = _median(rates["Python generator"])
    uncached = [_median(v) for k, v in rates.items() if k not in ("Python generator", CACHED)]
    found = {f"uncached_speedup_{label}": max(uncached) / generator} if uncached else {}
    if CACHED in rates:
        found[f"cached_speedup_{label}"] = _median(rates[CACHED]) / generator
    return {key: round(value, 2) for key, value in found.items()}


def pipeline(fast: bool) -> Result:
    """Images/s of a Python generator vs tf.data variants, with and without 2 ms simulated latency per file: the
    chapter's table and chart, and the speed-ups over the generator for --json."""
    comparison = pipeline_comparison(fast)
    result = pipeline_result(comparison)
    result.extra = {**speedups(comparison[0.0], "no_latency"), **speedups(comparison[LATENCY_S], "with_latency")}
    return result
