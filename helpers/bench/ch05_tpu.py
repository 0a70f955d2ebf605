"""Chapter 5's plumbing around its measurements: step fusing at several `steps_per_execution` through
helpers.readings (`python -m helpers.bench step-fusing`, Keras on JAX), repeated input rates, and the per-seed lines
of the large-batch experiment. The one rule for reading a timed comparison is helpers.readings'; nothing here has
its own."""

from __future__ import annotations

import statistics
import time

from helpers.chapters.ch05_tpu import STEPS_PER_EXECUTION, fused_fit, per_call_model, predicted_rate
from helpers.errors import CourseError, whole_number
from helpers.plots import lines as line_chart
from helpers.quiet import import_tensorflow_for_keras_quietly
from helpers.readings import compare, verdict_of
from helpers.results import Result

import_tensorflow_for_keras_quietly()  # the notebook imports this module after Keras, before its first seed

# The TensorFlow TPU guide (https://www.tensorflow.org/guide/tpu, "Train a model using Keras high-level APIs"):
# steps_per_execution=50 "increases throughput by about 50%" for its small MNIST model on a TPU.
PUBLISHED_TPU_GAIN = {"published: TF TPU guide, MNIST on a TPU": ([50], [1.5])}


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"


def summary(samples, unit: str = "") -> str:
    """'median M (range A-B, n runs) unit' of repeated measurements: a spread, not a verdict."""
    unit = f" {unit}" if unit else ""
    return (f"median {_number(statistics.median(samples))}{unit} "
            f"(range {_number(min(samples))}-{_number(max(samples))}, {len(samples)} runs)")


# ---------------------------------------------------------------------------- step fusing


def fusing_rates(comparison, values=STEPS_PER_EXECUTION) -> list[float]:
    """Steps/s at each of `values` from a compare() over them: the baseline's median, then that times each reading's
    ratio (the median of per-round ratios, the gain the readings and the plot show), so fit and plot agree."""
    base = statistics.median(comparison.readings[0].baseline_values)
    return [base] + [base * reading.ratio for reading in comparison.readings]


def prediction_lines(comparison, values=STEPS_PER_EXECUTION) -> tuple[list[str], float | None, float | None]:
    """t(N) = c + o/N fitted on the two middle `values` (both run Keras's loop of steps, which N=1 does not), its
    prediction for the last beside the measured rate, gains relative to the first (N=1).
    Returns (printed lines, predicted steps/s, measured / predicted); no prediction (None, None) where the fit gives
    c <= 0, which no fixed cost per call explains."""
    rates = fusing_rates(comparison, values)
    c, o = per_call_model(rates[1], rates[2], values[1], values[2])
    lines = [f"fitted on N={values[1]} ({_number(rates[1])} steps/s) and N={values[2]} ({_number(rates[2])} steps/s): "
             f"c = {c * 1e3:.2f} ms of work per step, o = {o * 1e3:.2f} ms per call"]
    if c <= 0:
        lines.append(f"c <= 0: N={values[2]} ran over {values[2] // values[1]}x N={values[1]}'s rate, which no fixed "
                     "cost per call explains (noise, or a cost that shrinks faster than 1/N): no prediction")
        return lines, None, None
    predicted = predicted_rate(c, o, values[-1])
    ratio = rates[-1] / predicted
    lines.append(f"N={values[-1]}: predicted {_number(predicted)} steps/s ({predicted / rates[0]:.2f}x N={values[0]}), "
                 f"measured {_number(rates[-1])} steps/s ({rates[-1] / rates[0]:.2f}x); measured/predicted {ratio:.2f}")
    if o > 0:
        ceiling = 1 / c / rates[0]  # the gain as N grows without end: every call's fixed cost gone
        beaten = "  <- BEATS THE MODEL'S CEILING: part of each step's cost shrinks with N too, or the load changed"
        lines.append(f"the model's ceiling 1/c = {_number(1 / c)} steps/s ({ceiling:.2f}x N={values[0]})"
                     + (beaten if _beyond(comparison.readings[-1], ceiling) else ""))
    else:
        lines.append(f"o <= 0: N={values[2]} was no faster than N={values[1]} here: the model finds no fixed cost per "
                     f"call to remove, and predicts no gain past N={values[1]} (with o < 0, a loss)")
    return lines, predicted, ratio


def _beyond(reading, ceiling: float) -> bool:
    """Whether a gain reads above `ceiling` by the course's one rule (its per-round gains against the A/A noise)."""
    return verdict_of([gain / ceiling for gain in reading.per_round], reading.aa_ratios)[2] == "above"


def fusing_gains(comparisons: dict, values=STEPS_PER_EXECUTION) -> dict:
    """{label: (values, median steps/s relative to the first value)} per compare(), plus the published TPU point."""
    return {**{label: (list(values), [1.0] + [reading.ratio for reading in comparison.readings])
               for label, comparison in comparisons.items()},
            **PUBLISHED_TPU_GAIN}


def fusing_comparison(build, x, y, *, batch_size: int, steps: int, label: str, values=STEPS_PER_EXECUTION,
                      rounds: int = 5):
    """compare() of fits at each of `values`, alternating, each returning the steps/s of `steps` steady steps."""
    fits = {f"steps_per_execution={n}": fused_fit(build, n, x, y, batch_size=batch_size, steps=steps) for n in values}
    return compare(f"step fusing, {label}", fits, unit="steps/s", rounds=rounds)


def step_fusing(fast: bool) -> Result:
    """steps_per_execution 1, 2, 8, 32 for the tiny model with Keras on JAX, on one device: median steps/s, the ratio
    to 1 and its verdict (helpers.readings), and t(N) = c + o/N's prediction for the last value. Runs on the JAX
    backend (helpers.bench sets it before Keras is imported), as chapter 5 does."""
    import helpers.data
    import helpers.models

    data = helpers.data.load_reuters()
    label = "one device"
    comparison = fusing_comparison(helpers.models.reuters_bag_of_words, data.x_train, data.y_train, batch_size=32,
                                   steps=256 if fast else 1024, label=label)
    _, predicted, _ = prediction_lines(comparison)
    rows = []
    for n, rate, reading in zip(STEPS_PER_EXECUTION, fusing_rates(comparison), (None, *comparison.readings)):
        rows.append([label, n, round(rate, 1), round(reading.ratio, 2) if reading else 1.0,
                     reading.verdict if reading else "baseline",
                     round(predicted, 1) if predicted and n == STEPS_PER_EXECUTION[-1] else None])
    fig = line_chart(fusing_gains({label: comparison}), logx=True, xlabel="steps_per_execution",
                     ylabel="steps/s relative to steps_per_execution=1", title="Step fusing with fit on JAX, batch 32")
    return Result("step-fusing", ["where", "steps_per_execution", "steps_per_s", "vs_1", "verdict", "predicted"],
                  rows, fig)


# ---------------------------------------------------------------------------- input pipelines


def pipeline_reader(dataset, *, batches: int, warmup: int = 2):
    """A function for helpers.readings.compare(unit="images/s"): each call reads `batches` batches from one
    iterator over `dataset` (no model) and returns images/s; its first call first reads `warmup` batches untimed
    (start-up, a cache's first pass)."""
    whole_number("pipeline_reader(batches=", batches, 1)
    state = {}

    def images_per_second():
        try:
            if "iterator" not in state:
                state["iterator"] = iter(dataset)
                for _ in range(warmup):
                    next(state["iterator"])
            examples, start = 0, time.perf_counter()
            for _ in range(batches):
                examples += int(next(state["iterator"])[0].shape[0])
        except StopIteration:
            raise CourseError(f"pipeline_reader(): the dataset ran out within {warmup} + {batches} batches or on a "
                              "later call; add .repeat() or ask for fewer batches.") from None
        return examples / (time.perf_counter() - start)

    return images_per_second


# ---------------------------------------------------------------------------- large batches


def seed_lines(curves: dict) -> list[str]:
    """Loss curves {label: [per-seed losses per epoch]}, the small batch first and the large batch at the same rate
    second: each arm's last-epoch loss per seed with its range across seeds, and for each later arm the share of the
    large batch's gap (same rate minus small batch) that it closed, per seed. Numbers only: across seeds they are
    not timings, and no verdict is drawn from them."""
    labels = list(curves)
    if len(labels) < 2:
        raise CourseError("seed_lines(): give the small batch's curves and the large batch's at the same rate first.")
    small, same = curves[labels[0]], curves[labels[1]]
    width = max(len(label) for label in labels)
    lines = []
    for label in labels:
        last = [losses[-1] for losses in curves[label]]
        line = f"{label:{width}s}  last-epoch loss per seed {' '.join(f'{v:.3f}' for v in last)}"
        if len(last) > 1:
            line += f" (range {max(last) - min(last):.3f})"
        if label not in labels[:2]:
            shares = []
            for s, losses in enumerate(curves[label]):
                gap = same[s][-1] - small[s][-1]
                shares.append("no gap" if gap <= 0 else f"{(same[s][-1] - losses[-1]) / gap:.0%}")
            line += f"; closed {', '.join(shares)} of the gap"
        lines.append(line)
    return lines


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
