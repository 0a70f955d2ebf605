"""The course's one rule for reading a timed comparison: is a difference real, or noise?

`compare` runs a baseline and its variants in rounds, in a rotating order (A B A', B A' A, A' A B, ...), so a machine
that slows down or speeds up mid-measurement favours none of them. The baseline runs twice per round (A and A'): how
far A' strays from A is the A/A noise, what "no difference" looks like on this machine right now. A variant's verdict:

- "above" or "below": its median ratio to the baseline is outside the A/A band (1.5 times the baseline's largest
  stray from itself: a stray of 10% makes a band of about ±15%), and it sits on that side of the baseline in every
  round. From 5 rounds on, one round may be disturbed by another program: the largest A/A stray is left out, and the
  variant may sit on the other side in one round;
- "within noise" otherwise. A difference under 5% is never a verdict: no lesson here rests on one.

Each verdict is recorded in the run report (`helpers.report.record(..., verdict=...)`), so that two runs of a notebook
can be compared key by key (tools/verdicts.py). Every comparison in the course goes through `verdict_of`.

Beside the rule, the readings chapters share: `spread` (the median and range of repeated measurements, no verdict)
and `input_reader` (an input's examples/s, read with no model attached, for `compare`). They need no TensorFlow:
chapter 5 runs them on Keras's JAX backend.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass

from helpers.errors import CourseError, whole_number
from helpers.report import record

SMALLEST_EFFECT = 0.05  # the A/A band is never narrower than ±5%
MARGIN = 1.5  # the band is 1.5 times the baseline's largest stray from itself (in log terms): a few rounds
# underestimate the noise, and with pure noise this keeps a false verdict near 1 in 60 (tests/unit/test_readings.py)


@dataclass(frozen=True)
class Reading:
    """One variant against the baseline: `ratio` = the median over rounds of variant / baseline (the geometric mean
    of the baseline's two runs in that round) of the measured quantity (time, or the unit the runs return), so it can
    differ from the ratio of the two medians; `band` = the A/A band as a factor (1.08: ±8%); `verdict` one of
    helpers.report.VERDICTS."""

    name: str
    baseline: str
    unit: str
    ratio: float
    band: float
    verdict: str
    values: tuple
    baseline_values: tuple
    per_round: tuple = ()  # the variant over its round's baseline (the geometric mean of its two runs)
    aa_ratios: tuple = ()  # the baseline's second run over its first, per round: the A/A noise

    def __str__(self) -> str:
        what = "time" if self.unit == "s" else self.unit
        side = {"above": "above, outside the noise", "below": "below, outside the noise"}.get(self.verdict,
                                                                                             self.verdict)
        return (f"{self.name}: {self.ratio:.2f}x {self.baseline}'s {what} ({side}; "
                f"{spread(self.values, self.unit)} against {spread(self.baseline_values, self.unit)})")


@dataclass(frozen=True)
class Comparison:
    """The readings of one `compare` call, in the order the variants were given, and the A/A band they share."""

    title: str
    readings: tuple
    band: float
    rounds: int

    def __getitem__(self, name: str) -> Reading:
        for reading in self.readings:
            if reading.name == name:
                return reading
        raise CourseError(f"Comparison {self.title!r}: no variant called {name!r}; it has "
                          f"{', '.join(r.name for r in self.readings)}.")

    def __str__(self) -> str:
        head = (f"{self.title} ({self.rounds} rounds in rotating order; A/A band ±{self.band - 1:.0%}: 1.5 times "
                "how far the baseline strayed from itself)")
        return "\n".join([head] + [f"  {reading}" for reading in self.readings])


def verdict_of(ratios, aa_ratios) -> tuple[float, float, str]:
    """The rule. `ratios`: one variant's value / the baseline's, per round; `aa_ratios`: the baseline's second run /
    its first, per round. Returns (median ratio, A/A band as a factor, verdict)."""
    ratios, aa_ratios = list(ratios), list(aa_ratios)
    if not ratios or not aa_ratios or min(ratios + aa_ratios) <= 0:
        raise CourseError("verdict_of(): needs positive ratios from at least one round, with an A/A ratio each.")
    allowed = 1 if len(ratios) >= 5 else 0  # one disturbed round may disagree, and its A/A stray is not the noise
    strays = sorted(abs(math.log(r)) for r in aa_ratios)
    band = max(math.exp(MARGIN * strays[-1 - allowed] if len(strays) > allowed else MARGIN * strays[-1]),
               1 + SMALLEST_EFFECT)
    ratio = statistics.median(ratios)
    if ratio > band and sum(r <= 1 for r in ratios) <= allowed:
        return ratio, band, "above"
    if ratio < 1 / band and sum(r >= 1 for r in ratios) <= allowed:
        return ratio, band, "below"
    return ratio, band, "within noise"


def compare(title: str, variants: dict, *, rounds: int = 5, warmup: int = 1, unit: str = "s",
            record_as: str | bool | None = None) -> Comparison:
    """Run each of `variants` ({name: function}, the first is the baseline) `warmup` times untimed, then `rounds`
    rounds in rotating order, the baseline twice per round. With unit="s" each call is timed on the wall clock
    (the function returns when its work is done); with another unit the function returns its own measurement in
    that unit (images/s, seconds per step, ...). Each verdict is recorded as "{record_as or title}: {name}"
    (record_as=False: not recorded, as in an exercise check)."""
    if not isinstance(variants, dict) or len(variants) < 2 or not all(callable(f) for f in variants.values()):
        raise CourseError("compare(): pass {name: function} with a baseline first and at least one variant, e.g. "
                          "compare('overlap', {'one after the other': run_a, 'overlapped': run_b}).")
    whole_number("compare(rounds=", rounds, 2)
    whole_number("compare(warmup=", warmup, 0)
    names = list(variants)
    base, again = names[0], object()  # `again`: the baseline's second run in each round
    for name in names:
        for _ in range(warmup):
            variants[name]()
    order = [base, *names[1:], again]
    values = {name: [] for name in names} | {again: []}
    for r in range(rounds):
        shift = r % len(order)
        for key in order[shift:] + order[:shift]:
            values[key].append(_one(variants[base if key is again else key], unit, title))
    aa = [b / a for a, b in zip(values[base], values[again])]
    readings = []
    for name in names[1:]:
        per_round = [v / math.sqrt(a * b) for v, a, b in zip(values[name], values[base], values[again])]
        ratio, band, verdict = verdict_of(per_round, aa)
        readings.append(Reading(name, base, unit, ratio, band, verdict, tuple(values[name]),
                                tuple(values[base] + values[again]), tuple(per_round), tuple(aa)))
        if record_as is not False:
            record(f"{record_as or title}: {name}", ratio, "x", verdict=verdict)
    return Comparison(title, tuple(readings), readings[0].band, rounds)


def _one(fn, unit: str, title: str) -> float:
    if unit == "s":
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start
    value = fn()
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
        raise CourseError(f"compare({title!r}, unit={unit!r}): each function must return its measurement in "
                          f"{unit}, a positive number; one returned {value!r}. With unit='s' compare times the "
                          "calls itself.")
    return float(value)


def spread(values, unit: str = "") -> str:
    """'median 4,350 images/s, range 3,900-4,600': the median and range of repeated measurements, a spread and not a
    verdict. Times (unit="s") under a second are shown in ms."""
    values = list(values)
    if not values:
        raise CourseError("spread(): give at least one measurement.")
    mid, low, high = statistics.median(values), min(values), max(values)
    if unit == "s":
        scale, unit = (1000, "ms") if high < 1 else (1, "s")
        mid, low, high = mid * scale, low * scale, high * scale
    unit = f" {unit}" if unit else ""
    return f"median {_number(mid)}{unit}, range {_number(low)}-{_number(high)}"


def examples_read(iterator, batches: int, wanted: int) -> int:
    """Read `batches` batches from `iterator`; the examples they held (the leading axis of each batch, or of its first
    part when a batch is a tuple such as (images, labels)). Running out is a CourseError naming the `wanted` batches
    the reading takes."""
    examples = 0
    for _ in range(batches):
        try:
            batch = next(iterator)
        except StopIteration:
            raise CourseError(f"the input ran out before the {wanted} batches a reading takes; add .repeat() or ask "
                              "for fewer batches.") from None
        first = batch[0] if isinstance(batch, (tuple, list)) else batch
        examples += int(first.shape[0])
    return examples


def input_reader(batches_of, *, batches: int, warmup: int = 2):
    """A function for compare(unit="images/s") that times an input alone, with no model: each call reads `batches`
    batches from one iterator over `batches_of` (a dataset, a generator, a PyDataset's batches) and returns their
    examples/s. Its first call first reads `warmup` batches untimed (start-up, a cache's first pass); later calls go
    on from where the last one stopped, so a generator, which cannot start again, can be read too."""
    whole_number("input_reader(batches=", batches, 1)
    whole_number("input_reader(warmup=", warmup, 0)
    state = {}

    def examples_per_second():
        wanted = batches if "iterator" in state else warmup + batches  # what this call reads in all
        if "iterator" not in state:
            state["iterator"] = iter(batches_of)
            examples_read(state["iterator"], warmup, wanted)
        start = time.perf_counter()
        examples = examples_read(state["iterator"], batches, wanted)
        return examples / (time.perf_counter() - start)

    return examples_per_second


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"

