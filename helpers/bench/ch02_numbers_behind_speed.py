"""Chapter 2's ceilings benchmark (`python -m helpers.bench ceilings [--json]`): this runtime's matmul FLOP/s per
dtype, its memory bandwidth and ridge point, and the roofline points of three products (XLA's counts, roofline
bounds and measured times; a ratio below 1 means the ceiling was underestimated), with the roofline plot."""

from __future__ import annotations

from helpers.chapters.ch02_numbers_behind_speed import (
    first_device,
    matmul_ceiling,
    memory_bandwidth,
    roofline_bound,
    roofline_plot,
    time_product,
    xla_counts,
)
from helpers.results import Result

SHAPES = {"square 1024": (1024, 1024, 1024), "Dense 1024, batch 64": (64, 1024, 1024),
          "matrix-vector": (1, 1024, 1024)}


def ceilings(fast: bool) -> Result:
    sizes = (128, 256, 512, 1024) if fast else (256, 512, 1024, 2048, 4096)
    largest = 2048 if fast else 8192  # the sweep goes on while it still climbs
    peaks = {dtype: matmul_ceiling(dtype, sizes, largest=largest)[0] for dtype in ("float32", "bfloat16", "float16")}
    bandwidth, _ = memory_bandwidth(64 if fast else 512)
    device = first_device()  # where the ceilings were measured
    rows, points = [], {}
    for name, (m, k, n) in SHAPES.items():
        flops, nbytes = xla_counts(lambda a, b: a @ b, (m, k), (k, n))
        timing = time_product(m, k, n, repeats=5, device=device)
        bound, _ = roofline_bound(flops, nbytes, peaks["float32"], bandwidth)
        points[name] = (flops / nbytes, flops / timing.median)
        rows.append([name, round(flops / nbytes, 2), round(flops / timing.median / 1e9, 2), bound * 1e3,
                     timing.median * 1e3, timing.min * 1e3, timing.max * 1e3, round(timing.median / bound, 2)])
    figure = roofline_plot(peaks["float32"], bandwidth, points, title=f"Roofline of {device}, float32")
    extra = {"device": device, "ceilings_gflop_s": {d: p / 1e9 for d, p in peaks.items()},
             "memory_bandwidth_gb_s": bandwidth / 1e9, "ridge_flops_per_byte": peaks["float32"] / bandwidth}
    return Result("ceilings", ["product", "FLOPs/byte", "GFLOP/s", "bound ms", "measured ms", "min ms", "max ms",
                              "measured/bound"],
                  rows, figure, extra)
