"""Chapter 5's measurements and the readings the notebook prints from them: step fusing at several
`steps_per_execution` (`python -m helpers.bench step-fusing`), repeated pipeline rates, and the verdicts (ratio,
spread, within noise or not) that the notebook's markdown leaves to the code."""

from __future__ import annotations

import statistics
import time

from helpers.chapters.ch05_tpu import STEPS_PER_EXECUTION, step_fusing_sweep
from helpers.errors import CourseError, whole_number
from helpers.plots import lines as line_chart
from helpers.results import Result
from helpers.strategies import choose_strategy

# The TensorFlow TPU guide (https://www.tensorflow.org/guide/tpu, "Train a model using Keras high-level APIs"):
# steps_per_execution=50 "increases throughput by about 50%" for its small MNIST model on a TPU.
PUBLISHED_TPU_GAIN = {"published: TF TPU guide, MNIST on a TPU": ([50], [1.5])}


# ---------------------------------------------------------------------------- readings of repeated measurements


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def summary(samples, unit: str = "") -> str:
    """'median M (min-max A-B) unit' of repeated measurements."""
    unit = f" {unit}" if unit else ""
    return (f"median {_number(statistics.median(samples))}{unit} "
            f"(range {_number(min(samples))}-{_number(max(samples))}, {len(samples)} runs)")


def compare(name_a: str, a, name_b: str, b, unit: str = "") -> str:
    """One line reading two sets of repeated measurements (rates): b's median over a's, and whether the difference
    is outside the spread (the two ranges do not overlap) or within noise."""
    ratio = statistics.median(b) / statistics.median(a)
    if min(b) > max(a):
        verdict = "higher, outside the spread of the repeated runs"
    elif max(b) < min(a):
        verdict = "lower, outside the spread of the repeated runs"
    else:
        verdict = "within noise (the two ranges overlap)"
    return f"{name_b} vs {name_a}: {ratio:.2f}x, {verdict} [{_short(b)} vs {_short(a)}{f' {unit}' if unit else ''}]"


def _short(samples) -> str:
    return f"{_number(statistics.median(samples))} ({_number(min(samples))}-{_number(max(samples))})"


def fusing_readings(sweep: dict, values=STEPS_PER_EXECUTION) -> list[str]:
    """For each model, each steps_per_execution against the first value, with the spread of the steady epochs."""
    return [f"{name}: " + compare(f"steps_per_execution={values[0]}", rates[0], f"steps_per_execution={n}", rate,
                                  "steps/s")
            for name, rates in sweep.items() for n, rate in zip(values[1:], rates[1:])]


def fusing_gains(sweep: dict, values=STEPS_PER_EXECUTION) -> dict:
    """{model: (steps_per_execution values, median steps/s relative to the first value)}, plus the published TPU
    point."""
    return {**{name: (list(values), [statistics.median(r) / statistics.median(rates[0]) for r in rates])
               for name, rates in sweep.items()},
            **PUBLISHED_TPU_GAIN}


def input_reading(input_rates, train_rates, margin: float = 2.0) -> str:
    """Whether the input pipeline alone keeps `margin` times ahead of training, judged on both spreads."""
    ratio = statistics.median(input_rates) / statistics.median(train_rates)
    head = f"the pipeline alone delivers {_number(ratio)}x the images/s training consumes"
    if min(input_rates) > margin * max(train_rates):
        return f"{head}: more than {margin:g}x even at the ends of both spreads, so input is not what limits training"
    if max(input_rates) < margin * min(train_rates):
        return (f"{head}: under {margin:g}x even at the ends of both spreads, so input limits training (or soon "
                "will): parallelise, cache, prefetch, or move the data into TFRecord files")
    return f"{head}: the spreads straddle {margin:g}x, too close to call; measure with more batches"


def pipeline_rates(dataset, *, batches: int, repeats: int = 5, warmup: int = 2) -> list[float]:
    """Images/s of `repeats` timed runs of `batches` batches each from one iterator over `dataset` (no model), after
    `warmup` untimed batches (start-up, a cache's first pass)."""
    whole_number("pipeline_rates(batches=", batches, 1)
    iterator = iter(dataset)
    try:
        for _ in range(warmup):
            next(iterator)
        rates = []
        for _ in range(repeats):
            examples, start = 0, time.perf_counter()
            for _ in range(batches):
                examples += int(next(iterator)[0].shape[0])
            rates.append(examples / (time.perf_counter() - start))
    except StopIteration:
        raise CourseError(f"pipeline_rates(): the dataset ran out before {warmup} + {repeats} x {batches} "
                                  "batches; add .repeat() or ask for fewer batches.") from None
    return rates


def gap_readings(curves: dict) -> list[str]:
    """Loss curves {label: [per-seed losses per epoch]} of (small batch, large batch at the same rate, large batch at
    the scaled rate), in that order: per epoch after the first, the share of the large batch's gap that the scaled
    rate closed, per seed; and whether the scaled run ends below the same-rate run outside the seeds' spread."""
    small, same, scaled = (curves[label] for label in curves)
    seeds, epochs = len(small), len(small[0])
    lines = []
    for epoch in range(1, epochs):
        shares = []
        for s in range(seeds):
            gap = same[s][epoch] - small[s][epoch]
            shares.append((same[s][epoch] - scaled[s][epoch]) / gap if gap > 0 else float("nan"))
        lines.append(f"epoch {epoch + 1}: the scaled rate closed " + ", ".join(
            "no gap to close" if share != share else f"{share:.0%}" for share in shares)
            + f" of the gap (seed{'s' if seeds > 1 else ''} {', '.join(str(s) for s in range(seeds))})")
    last_same, last_scaled = [c[-1] for c in same], [c[-1] for c in scaled]
    if max(last_scaled) < min(last_same):
        verdict = "lower than the same-rate run in every seed, outside the spread between seeds"
    elif min(last_scaled) > max(last_same):
        verdict = "higher than the same-rate run in every seed, outside the spread between seeds"
    else:
        verdict = "within the spread between seeds (run more seeds to tell)"
    lines.append(f"last epoch, scaled rate: loss {_range(last_scaled)} against {_range(last_same)} at the same rate: "
                 f"{verdict}")
    return lines


def _range(values) -> str:
    return f"{min(values):.3f}-{max(values):.3f}" if len(values) > 1 else f"{values[0]:.3f}"


def step_readings(timer, steps: int, samples_per_step: int) -> list[str]:
    """The first epoch against the steady ones, and the steady step in milliseconds with its spread."""
    first, rest = timer.epoch_seconds[0], timer.epoch_seconds[1:]
    if not rest:
        raise CourseError("step_readings(): train at least 2 epochs: the first one traces the step, the "
                                  "others give steady steps.")
    step_ms = [1000 * seconds / steps for seconds in rest]
    images = [samples_per_step * 1000 / ms for ms in step_ms]
    steady_epoch = statistics.median(rest)
    return [f"first epoch (tracing/compiling + {steps} step(s)): {first:.2f} s, {first / steady_epoch:.1f}x a steady "
            f"epoch",
            f"steady step: {summary(step_ms, 'ms')} over {len(rest)} epochs of {steps} step(s)",
            f"steady throughput: {summary(images, 'images/s')}",
            f"one-time cost of the first epoch: about {first - steady_epoch:.2f} s"]


def step_fusing(fast: bool) -> Result:
    """steps_per_execution 1, 8, 32 under the best strategy here: steady steps/s (median, range) and the gain."""
    strategy = choose_strategy(verbose=False)
    sweep = step_fusing_sweep(strategy, fast)
    rows = [[name, n, round(statistics.median(rate), 1), round(min(rate), 1), round(max(rate), 1),
             round(statistics.median(rate) / statistics.median(rates[0]), 2)]
            for name, rates in sweep.items() for n, rate in zip(STEPS_PER_EXECUTION, rates)]
    fig = line_chart(fusing_gains(sweep), logx=True, xlabel="steps_per_execution",
                     ylabel="steps/s relative to steps_per_execution=1",
                     title=f"Step fusing, {strategy.num_replicas_in_sync} replica(s), 32 examples per replica")
    return Result("step-fusing", ["model", "steps_per_execution", "steps_per_s", "min", "max", "vs_1"], rows, fig)
