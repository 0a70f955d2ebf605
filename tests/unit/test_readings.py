"""helpers.readings: the one rule for "is this difference real?", and the order it times things in."""

import json
import math

import numpy as np
import pytest

from helpers import readings, report
from helpers.errors import CourseError


def fake_clock(monkeypatch, durations: dict):
    """Each call of a variant advances a fake clock by its next duration; returns the order of the calls."""
    now, calls, pending = [0.0], [], {}

    def variant(name):
        def run():
            calls.append(name)
            pending["next"] = next(durations[name])
        return run

    def perf_counter():
        now[0] += pending.pop("next", 0.0)
        return now[0]

    monkeypatch.setattr(readings.time, "perf_counter", perf_counter)
    return calls, variant


def test_rounds_rotate_the_order_and_run_the_baseline_twice(monkeypatch):
    calls, variant = fake_clock(monkeypatch, {"a": iter([1.0] * 20), "b": iter([1.0] * 20)})
    readings.compare("t", {"a": variant("a"), "b": variant("b")}, rounds=3, warmup=1, record_as=False)
    assert calls == ["a", "b"] + ["a", "b", "a"] + ["b", "a", "a"] + ["a", "a", "b"]


def test_a_clear_difference_is_read_with_its_direction(monkeypatch):
    calls, variant = fake_clock(monkeypatch, {"slow": iter([1.0, 1.02, 0.99, 1.01, 1.0] * 2),
                                              "fast": iter([0.5, 0.52, 0.49, 0.5, 0.51])})
    result = readings.compare("t", {"slow": variant("slow"), "fast": variant("fast")}, rounds=5, warmup=0,
                              record_as=False)
    fast = result["fast"]
    assert fast.verdict == "below" and fast.ratio == pytest.approx(0.5, rel=0.05)
    assert len(fast.per_round) == len(fast.aa_ratios) == 5 and fast.ratio == sorted(fast.per_round)[2]
    assert "0.50x slow's time (below, outside the noise" in str(result)


def test_a_difference_inside_the_a_a_noise_is_within_noise():
    # the baseline strays 30% from itself (a band of 1.3 ** 1.5 = 1.48x); a variant 1.4x faster is not a reading
    assert readings.verdict_of([0.7, 0.7, 0.7], [1.3, 1.0, 0.9])[2] == "within noise"
    assert readings.verdict_of([0.6, 0.6, 0.6], [1.3, 1.0, 0.9])[2] == "below"


def test_differences_under_five_percent_are_never_a_verdict():
    ratio, band, verdict = readings.verdict_of([1.04] * 6, [1.0] * 6)  # a perfectly quiet baseline
    assert band == pytest.approx(1.05) and verdict == "within noise"
    assert readings.verdict_of([1.06] * 6, [1.0] * 6)[2] == "above"


def test_a_variant_on_both_sides_of_the_baseline_is_within_noise_whatever_its_median():
    # median 1.5x, but two rounds below the baseline: drift, not an effect
    assert readings.verdict_of([1.5, 1.6, 0.9, 1.5, 0.95], [1.0] * 5)[2] == "within noise"
    # one round on the wrong side is allowed from 5 rounds on, none with 4
    assert readings.verdict_of([1.5, 1.6, 0.9, 1.5, 1.5], [1.0] * 5)[2] == "above"
    assert readings.verdict_of([1.5, 1.6, 0.9, 1.5], [1.0] * 4)[2] == "within noise"


def test_one_disturbed_round_of_the_baseline_does_not_set_the_noise():
    ratio, band, verdict = readings.verdict_of([0.5, 0.5, 0.5, 0.5, 0.5], [1.0, 5.0, 1.0, 1.1, 1.0])
    assert band == pytest.approx(1.1 ** 1.5) and verdict == "below"
    # with 4 rounds every round counts
    assert readings.verdict_of([0.5, 0.5, 0.5, 0.5], [1.0, 5.0, 1.0, 1.0])[2] == "within noise"


@pytest.mark.parametrize("ratios, aa", [([], [1.0]), ([1.0], []), ([0.0], [1.0]), ([1.0], [-1.0])])
def test_the_rule_refuses_what_is_not_a_measurement(ratios, aa):
    with pytest.raises(CourseError, match="positive ratios"):
        readings.verdict_of(ratios, aa)


def test_with_no_difference_a_verdict_is_rare_and_never_takes_both_sides_across_three_runs():
    import random
    rng, false_verdicts, flips = random.Random(0), 0, 0
    for _ in range(2000):  # the same work three runs over: 15% jitter per call, one run in five disturbed 3x
        said = set()
        for _ in range(3):
            runs = [[rng.lognormvariate(0, 0.15) * (3 if rng.random() < 0.04 else 1) for _ in range(3)]
                    for _ in range(5)]
            verdict = readings.verdict_of([b / math.sqrt(a * a2) for a, b, a2 in runs],
                                          [a2 / a for a, _, a2 in runs])[2]
            said.add(verdict)
            false_verdicts += verdict != "within noise"
        flips += {"above", "below"} <= said
    assert false_verdicts / 6000 < 0.03 and flips / 2000 < 0.001


def test_a_clear_effect_is_read_through_the_same_noise():
    import random
    rng = random.Random(1)
    found = []
    for _ in range(500):
        runs = [[rng.lognormvariate(0, 0.15), 3 * rng.lognormvariate(0, 0.15), rng.lognormvariate(0, 0.15)]
                for _ in range(5)]
        found.append(readings.verdict_of([b / math.sqrt(a * a2) for a, b, a2 in runs],
                                         [a2 / a for a, _, a2 in runs])[2])
    assert found.count("above") / len(found) > 0.95


def test_runs_that_return_their_own_measurement(monkeypatch, tmp_path):
    path = tmp_path / "figures.jsonl"
    monkeypatch.setenv(report.REPORT_FILE_VAR, str(path))
    rates = {"one worker": iter([100.0] * 10), "four": iter([210.0, 190.0, 205.0, 200.0, 200.0])}
    result = readings.compare("PyDataset", {name: (lambda n=name: next(rates[n])) for name in rates},
                              rounds=5, warmup=0, unit="images/s")
    assert result["four"].verdict == "above" and "2.00x one worker's images/s" in str(result["four"])
    line = json.loads(path.read_text().splitlines()[0])
    assert line == {"key": "PyDataset: four", "value": 2.0, "unit": "x", "verdict": "above"}


def test_record_as_false_records_nothing(monkeypatch, tmp_path):
    path = tmp_path / "figures.jsonl"
    monkeypatch.setenv(report.REPORT_FILE_VAR, str(path))
    readings.compare("t", {"a": lambda: 1.0, "b": lambda: 1.0}, rounds=2, warmup=0, unit="ms", record_as=False)
    assert not path.exists()


@pytest.mark.parametrize("variants, match", [
    ({"a": lambda: None}, "at least one variant"),
    ([lambda: None, lambda: None], "name: function"),
    ({"a": lambda: None, "b": 3}, "name: function"),
])
def test_bad_variants_get_an_example(variants, match):
    with pytest.raises(CourseError, match=match):
        readings.compare("t", variants)


@pytest.mark.parametrize("value", [None, 0, -1.0, "fast", True])
def test_a_run_that_returns_no_measurement_is_named(value):
    with pytest.raises(CourseError, match=r"compare\('t', unit='images/s'\): each function must return"):
        readings.compare("t", {"a": lambda: 1.0, "b": lambda: value}, rounds=2, warmup=0, unit="images/s",
                         record_as=False)


def test_too_few_rounds_are_refused():
    with pytest.raises(CourseError, match="rounds"):
        readings.compare("t", {"a": lambda: None, "b": lambda: None}, rounds=1)


def test_asking_for_a_variant_that_is_not_there_names_those_that_are():
    result = readings.compare("t", {"a": lambda: 1.0, "b": lambda: 1.0}, rounds=2, warmup=0, unit="ms",
                              record_as=False)
    with pytest.raises(CourseError, match="no variant called 'c'; it has b"):
        result["c"]


# ---------------------------------------------------------------------------- spreads and input rates


def test_spread_prints_the_median_and_the_range():
    assert readings.spread([4350.0, 3900.0, 4600.0], "images/s") == "median 4,350 images/s, range 3,900-4,600"
    assert readings.spread([1.33, 1.2, 1.5]) == "median 1.33, range 1.20-1.50"
    assert readings.spread([0.012, 0.0105, 0.02], "s") == "median 12.0 ms, range 10.5-20.0"  # under 1 s: ms
    with pytest.raises(CourseError, match="at least one measurement"):
        readings.spread([])


class Batches:
    """`count` (images, labels) batches of `size`, as NumPy arrays: what a PyDataset or a generator hands over."""

    def __init__(self, count, size=8):
        self.count, self.size = count, size

    def __iter__(self):
        for _ in range(self.count):
            yield np.zeros((self.size, 4, 4, 3), "float32"), np.zeros(self.size, "int64")


def test_input_reader_keeps_one_iterator_and_explains_when_it_runs_out():
    read = readings.input_reader(iter(Batches(8)), batches=3)  # a generator: it cannot start again
    assert read() > 0 and read() > 0  # 2 untimed + 3, then 3: all 8 batches, one iterator throughout
    with pytest.raises(CourseError, match="ran out before the 3 batches a reading takes"):
        read()
    first = readings.input_reader(Batches(4), batches=3)  # 2 untimed + 3 > 4: the first call runs out
    with pytest.raises(CourseError, match=r"the 5 batches a reading takes; add \.repeat\(\) or ask for fewer"):
        first()


def test_input_reader_counts_the_examples_it_reads_and_times_only_those(monkeypatch):
    ticks = iter(range(100))
    monkeypatch.setattr(readings.time, "perf_counter", lambda: next(ticks) * 0.25)  # each reading 0.25 s later
    read = readings.input_reader(Batches(5, size=16), batches=3)
    assert read() == pytest.approx(3 * 16 / 0.25)  # 3 batches of 16 between two readings; the 2 warm-up ones not


def test_examples_read_counts_plain_arrays_and_the_first_part_of_tuples():
    assert readings.examples_read(iter([np.zeros((4, 2)), np.zeros((3, 2))]), 2, 2) == 7
    assert readings.examples_read(iter([(np.zeros((5, 2)), np.zeros(5))]), 1, 1) == 5


@pytest.mark.parametrize("batches", [0, 2.5, True])
def test_input_reader_wants_a_whole_number_of_batches(batches):
    with pytest.raises(CourseError, match=r"input_reader\(batches="):
        readings.input_reader(Batches(8), batches=batches)
