"""Chapter 5's readings: what the notebook prints from repeated measurements (ratio, spread, verdict)."""

import pytest
import tensorflow as tf

import helpers
from helpers.experiments import ch05_tpu


def test_compare_says_outside_the_spread_only_when_the_ranges_do_not_overlap():
    apart = ch05_tpu.compare("spe=1", [100.0, 110.0, 105.0], "spe=32", [150.0, 160.0, 170.0], "steps/s")
    assert apart == ("spe=32 vs spe=1: 1.52x, higher, outside the spread of the repeated runs "
                     "[160 (150-170) vs 105 (100-110) steps/s]")
    overlap = ch05_tpu.compare("a", [100.0, 130.0], "b", [120.0, 125.0])
    assert overlap == "b vs a: 1.07x, within noise (the two ranges overlap) [122 (120-125) vs 115 (100-130)]"
    lower = ch05_tpu.compare("a", [100.0, 110.0], "b", [50.0, 60.0])
    assert lower.startswith("b vs a: 0.52x, lower, outside the spread")


def test_fusing_readings_compare_each_setting_with_the_first():
    lines = ch05_tpu.fusing_readings({"tiny": [[10.0, 11.0], [20.0, 21.0], [10.5, 12.0]]}, (1, 8, 32))
    assert len(lines) == 2
    assert lines[0] == ("tiny: steps_per_execution=8 vs steps_per_execution=1: 1.95x, higher, outside the spread of "
                        "the repeated runs [20.5 (20.0-21.0) vs 10.5 (10.0-11.0) steps/s]")
    assert "steps_per_execution=32 vs steps_per_execution=1: 1.07x, within noise" in lines[1]


def test_input_reading_needs_the_margin_at_both_ends_of_the_spreads():
    assert "input is not what limits training" in ch05_tpu.input_reading([900.0, 1000.0], [100.0, 120.0])
    assert "input limits training" in ch05_tpu.input_reading([150.0, 180.0], [100.0, 120.0])
    assert "too close to call" in ch05_tpu.input_reading([150.0, 400.0], [100.0, 120.0])


def test_gap_readings_give_the_share_per_epoch_and_seed_and_a_verdict():
    curves = {"small": [[3.0, 2.0, 1.0], [3.0, 2.2, 1.2]],
              "same": [[3.5, 3.0, 2.0], [3.5, 3.2, 2.2]],
              "scaled": [[3.5, 2.5, 1.5], [3.5, 2.7, 1.9]]}
    lines = ch05_tpu.gap_readings(curves)
    assert lines[0] == "epoch 2: the scaled rate closed 50%, 50% of the gap (seeds 0, 1)"
    assert lines[1] == "epoch 3: the scaled rate closed 50%, 30% of the gap (seeds 0, 1)"
    assert lines[2] == ("last epoch, scaled rate: loss 1.500-1.900 against 2.000-2.200 at the same rate: lower than "
                        "the same-rate run in every seed, outside the spread between seeds")
    curves["scaled"][1][-1] = 2.1
    assert ch05_tpu.gap_readings(curves)[-1].endswith("within the spread between seeds (run more seeds to tell)")


def test_step_readings_time_the_steady_step_in_milliseconds():
    timer = helpers.timing.EpochTimer()
    timer.epoch_seconds = [4.0, 0.2, 0.24, 0.22]
    lines = ch05_tpu.step_readings(timer, steps=4, samples_per_step=16)
    assert lines[0] == "first epoch (tracing/compiling + 4 step(s)): 4.00 s, 18.2x a steady epoch"
    assert lines[1] == "steady step: median 55.0 ms (range 50.0-60.0, 3 runs) over 3 epochs of 4 step(s)"
    assert lines[2].startswith("steady throughput: median 291 images/s (range 267-320")
    assert lines[3] == "one-time cost of the first epoch: about 3.78 s"
    timer.epoch_seconds = [4.0]
    with pytest.raises(helpers.CourseError, match="train at least 2 epochs"):
        ch05_tpu.step_readings(timer, steps=4, samples_per_step=16)


def test_pipeline_rates_times_repeated_runs_and_explains_a_short_dataset():
    ds = tf.data.Dataset.from_tensor_slices((tf.zeros((64, 2)), tf.zeros((64,)))).batch(8)
    rates = ch05_tpu.pipeline_rates(ds.repeat(), batches=3, repeats=4)
    assert len(rates) == 4 and all(rate > 0 for rate in rates)
    with pytest.raises(helpers.CourseError, match="ran out before 2 \\+ 5 x 3 batches"):
        ch05_tpu.pipeline_rates(ds, batches=3)
