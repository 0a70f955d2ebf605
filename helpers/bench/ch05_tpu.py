"""Chapter 5's benchmark: step fusing at several `steps_per_execution` with Keras on JAX (`python -m helpers.bench
step-fusing`), timed through helpers.readings and read with the overhead model chapter 5 teaches (helpers/chapters/
ch05_tpu.py: fused_fit, prediction_lines, ...). The one rule for reading a timed comparison is helpers.readings';
nothing here has its own."""

from __future__ import annotations

from helpers.chapters.ch05_tpu import STEPS_PER_EXECUTION, fused_fit, fusing_gains, fusing_rates, prediction_lines
from helpers.plots import lines as line_chart
from helpers.quiet import import_tensorflow_for_keras_quietly
from helpers.readings import compare
from helpers.results import Result

import_tensorflow_for_keras_quietly()  # Keras on JAX imports TensorFlow where it is installed: now, quietly


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
