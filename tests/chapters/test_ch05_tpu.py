"""Chapter 5's measurements and what the notebook prints from them (spreads, the overhead model's prediction), and
its benchmark; the verdicts themselves, the spreads and the input reader are helpers.readings'
(tests/unit/test_readings.py)."""

import pytest
from conftest import run_python

import helpers
from helpers.bench import ch05_tpu
from helpers.chapters import ch05_tpu as taught
from helpers.readings import Comparison, Reading


@pytest.fixture
def offline(monkeypatch):
    def no_network():
        raise OSError("offline in tests")

    monkeypatch.setattr(helpers.data, "_download_reuters", no_network)


def fake_comparison(rate_1, rate_2, rate_8, rate_32):
    """A compare() over N = 1, 2, 8, 32 whose readings' ratios to N=1 are the given rates' (medians equal)."""
    base = (rate_1, rate_1)
    return Comparison("step fusing, test", tuple(
        Reading(f"steps_per_execution={n}", "steps_per_execution=1", "steps/s", rate / rate_1, 1.1, "above",
                (rate,), base, (rate / rate_1,), (1.0,)) for n, rate in ((2, rate_2), (8, rate_8), (32, rate_32))),
        1.1, 5)


def looped(c, o):
    """Steps/s at N under t(N) = c + o/N."""
    return lambda n: 1 / (c + o / n)


# ---------------------------------------------------------------------------- step fusing


def test_per_call_model_recovers_c_and_o_from_two_rates_and_predicts_a_third():
    rate = looped(0.002, 0.006)  # 2 ms of work per step, 6 ms per call
    fitted_c, fitted_o = taught.per_call_model(rate(2), rate(8))
    assert fitted_c == pytest.approx(0.002) and fitted_o == pytest.approx(0.006)
    assert taught.predicted_rate(fitted_c, fitted_o, 32) == pytest.approx(rate(32))


def test_prediction_lines_fit_the_two_looped_settings_only():
    rate = looped(0.002, 0.006)
    # N=1 runs no loop: a rate off the model must not move the prediction
    lines, predicted, ratio = taught.prediction_lines(fake_comparison(200.0, rate(2), rate(8), 450.0))
    assert predicted == pytest.approx(rate(32))
    assert ratio == pytest.approx(450.0 / predicted)
    assert lines[0] == ("fitted on N=2 (200 steps/s) and N=8 (364 steps/s): c = 2.00 ms of work per step, "
                        "o = 6.00 ms per call")
    assert lines[1].startswith(f"N=32: predicted {predicted:,.0f} steps/s (")
    assert "measured 450 steps/s (2.25x); measured/predicted" in lines[1]
    assert lines[2] == "the model's ceiling 1/c = 500 steps/s (2.50x N=1)"  # 2.25x is under it: no flag
    assert len(lines) == 3


def test_a_gain_above_the_models_ceiling_is_flagged():
    rate = looped(0.002, 0.006)
    lines, _, _ = taught.prediction_lines(fake_comparison(200.0, rate(2), rate(8), 600.0))  # 3x: 20% above 2.5x
    assert lines[2].startswith("the model's ceiling 1/c = 500 steps/s (2.50x N=1)  <- BEATS THE MODEL'S CEILING")
    within, _, _ = taught.prediction_lines(fake_comparison(200.0, rate(2), rate(8), 520.0))  # within 5%: noise
    assert within[2] == "the model's ceiling 1/c = 500 steps/s (2.50x N=1)"


def test_fusing_rates_follow_the_readings_ratios_not_the_ratio_of_medians():
    comparison = fake_comparison(100.0, 120.0, 150.0, 200.0)
    skewed = Comparison(comparison.title, tuple(Reading(r.name, r.baseline, r.unit, r.ratio * 1.1, r.band, r.verdict,
                                                        r.values, r.baseline_values, r.per_round, r.aa_ratios)
                                                for r in comparison.readings),
                        comparison.band, comparison.rounds)
    assert taught.fusing_rates(skewed) == pytest.approx([100.0, 132.0, 165.0, 220.0])


def test_prediction_lines_say_when_fusing_showed_no_per_call_cost():
    lines, _, _ = taught.prediction_lines(fake_comparison(100.0, 100.0, 95.0, 101.0))
    assert lines[-1].startswith("o <= 0: N=8 was no faster than N=2 here")


def test_prediction_lines_predict_nothing_when_the_fit_gives_no_work_per_step():
    # N=8 at over 4x N=2's rate: t(2) = c + o/2 and t(8) = c + o/8 give c <= 0, which no fixed cost per call explains
    lines, predicted, ratio = taught.prediction_lines(fake_comparison(100.0, 100.0, 450.0, 900.0))
    assert (predicted, ratio) == (None, None)
    assert lines[-1].startswith("c <= 0: N=8 ran over 4x N=2's rate") and lines[-1].endswith("no prediction")
    assert len(lines) == 2


def test_fusing_gains_are_the_readings_ratios_plus_the_published_point():
    gains = taught.fusing_gains({"one device": fake_comparison(100.0, 120.0, 150.0, 200.0)})
    assert gains == {"one device": ([1, 2, 8, 32], [1.0, 1.2, 1.5, 2.0]),
                     "published: TF TPU guide, MNIST on a TPU": ([50], [1.5])}
    assert taught.fusing_rates(fake_comparison(100.0, 120.0, 150.0, 200.0)) == pytest.approx(
        [100.0, 120.0, 150.0, 200.0])


def test_fused_fit_builds_once_and_times_steady_steps_on_jax():
    # 20 examples, batch 8, 8 steps: the arrays are repeated to 64 examples, so every fit runs all 8 steps.
    found = run_python("""
import json
import keras
import numpy as np
from helpers.chapters.ch05_tpu import fused_fit

built = []
def build():
    built.append(keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)]))
    return built[-1]

rng = np.random.default_rng(0)
x, y = rng.normal(size=(20, 4)).astype("float32"), rng.integers(0, 3, 20)
run = fused_fit(build, 4, x, y, batch_size=8, steps=8)
first = run()
iterations = [int(keras.ops.convert_to_numpy(built[0].optimizer.iterations))]
second = run()
iterations.append(int(keras.ops.convert_to_numpy(built[0].optimizer.iterations)))
print(json.dumps({"backend": keras.backend.backend(), "built": len(built), "fused": built[0].steps_per_execution,
                  "iterations": iterations, "rates": [first, second]}))
""", KERAS_BACKEND="jax")
    assert found["backend"] == "jax"
    assert found["built"] == 1 and found["fused"] == 4  # one model, fitted again: compiled once
    assert found["iterations"] == [8, 16]  # every step ran in each fit, fused or not
    assert all(rate > 0 for rate in found["rates"])


def test_stacked_trainer_runs_the_same_steps_whatever_the_steps_per_call():
    # 16 stacked batches, 1, 8 or 3 steps per compiled call (3 leaves a last stack of 1): the same updates.
    found = run_python("""
import json
import keras
import numpy as np
from helpers.chapters.ch05_tpu import model_state, stacked_trainer

def tiny():
    model = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(3)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model

rng = np.random.default_rng(0)
xs = rng.normal(size=(16, 8, 5)).astype("float32")
ys = rng.integers(0, 3, size=(16, 8))
models = {k: tiny() for k in (1, 8, 3)}
initial = models[1].get_weights()
for model in models.values():
    model.set_weights(initial)
fresh = model_state(models[1])  # builds the optimizer's variables, the step count among them
found = {"optimizer built": models[1].optimizer.built, "fresh state": [len(part) for part in fresh]}
for k, model in models.items():
    stacked_trainer(model, k)(xs, ys)
iterations = {k: int(keras.ops.convert_to_numpy(m.optimizer.iterations)) for k, m in models.items()}
def apart(a, b):
    return max(float(np.max(np.abs(u - v))) for u, v in zip(a, b))
found.update({
    "iterations": [iterations[k] for k in (1, 8, 3)],
    "moved": apart(models[1].get_weights(), initial),
    "8 vs 1": apart(models[8].get_weights(), models[1].get_weights()),
    "3 vs 1": apart(models[3].get_weights(), models[1].get_weights()),
    "optimizer 8 vs 1": apart([np.asarray(v.value) for v in models[8].optimizer.variables],
                              [np.asarray(v.value) for v in models[1].optimizer.variables]),
})
print(json.dumps(found))
""", KERAS_BACKEND="jax")
    assert found["optimizer built"] is True
    assert found["fresh state"][0] == 4 and found["fresh state"][2] > 0  # 2 kernels, 2 biases; Adam's variables
    assert found["iterations"] == [16, 16, 16]  # every batch trained once, whatever the calls
    assert found["moved"] > 1e-3  # training changed the weights, so equal weights below mean the same updates
    assert found["8 vs 1"] < 1e-5 and found["3 vs 1"] < 1e-5, found
    assert found["optimizer 8 vs 1"] < 1e-5, found


def test_step_fusing_benchmark_compares_the_settings_on_one_device(monkeypatch, offline):
    from helpers import bench, data

    calls = []

    def fake(build, x, y, *, batch_size, steps, label, values=(1, 2, 8, 32), rounds=5):
        calls.append((build.__name__, len(x), len(y), batch_size, steps, label, tuple(values)))
        return fake_comparison(100.0, 120.0, 150.0, 160.0)

    monkeypatch.setattr(ch05_tpu, "fusing_comparison", fake)
    monkeypatch.setattr(data, "synthetic_reuters", lambda seed=0: (([[1, 2]] * 40, [0] * 40), ([[1]], [0])))
    result = bench.chapter_function("step-fusing")(True)
    assert calls == [("reuters_bag_of_words", 40, 40, 32, 256, "one device", (1, 2, 8, 32))]  # one place only
    assert result.columns == ["where", "steps_per_execution", "steps_per_s", "vs_1", "verdict", "predicted"]
    assert result.rows[:3] == [["one device", 1, 100.0, 1.0, "baseline", None],
                               ["one device", 2, 120.0, 1.2, "above", None],
                               ["one device", 8, 150.0, 1.5, "above", None]]
    assert result.rows[3][:5] == ["one device", 32, 160.0, 1.6, "above"]
    _, predicted, _ = taught.prediction_lines(fake_comparison(100.0, 120.0, 150.0, 160.0))
    assert result.rows[3][5] == round(predicted, 1)
    assert len(result.rows) == 4
    calls.clear()
    ch05_tpu.step_fusing(False)
    assert calls[0][4] == 1024  # full mode: longer fits


# ---------------------------------------------------------------------------- seeds, the ResNet step


def test_seed_lines_give_numbers_per_seed_and_no_verdict():
    curves = {"small": [[3.0, 2.0, 1.0], [3.0, 2.2, 1.2]],
              "same": [[3.5, 3.0, 2.0], [3.5, 3.2, 2.2]],
              "scaled": [[3.5, 2.5, 1.5], [3.5, 2.7, 1.9]]}
    lines = taught.seed_lines(curves)
    assert lines[0] == "small   last-epoch loss per seed 1.000 1.200 (range 0.200)"
    assert lines[2] == "scaled  last-epoch loss per seed 1.500 1.900 (range 0.400); closed 50%, 30% of the gap"
    assert not any(word in " ".join(lines) for word in ("noise", "above", "below", "lower than"))
    with pytest.raises(helpers.CourseError, match="small batch's curves"):
        taught.seed_lines({"small": [[1.0]]})


def test_step_readings_time_the_steady_step_in_milliseconds():
    timer = helpers.timing.EpochTimer()
    timer.epoch_seconds = [4.0, 0.2, 0.24, 0.22]
    lines = taught.step_readings(timer, steps=4, samples_per_step=16)
    assert lines[0] == "first epoch (tracing/compiling + 4 step(s)): 4.00 s, 18.2x a steady epoch"
    assert lines[1] == "steady step: median 55.0 ms, range 50.0-60.0, over 3 epochs of 4 step(s)"
    assert lines[2] == "steady throughput: median 291 images/s, range 267-320"
    assert lines[3] == "one-time cost of the first epoch: about 3.78 s"
    timer.epoch_seconds = [4.0]
    with pytest.raises(helpers.CourseError, match="train at least 2 epochs"):
        taught.step_readings(timer, steps=4, samples_per_step=16)
