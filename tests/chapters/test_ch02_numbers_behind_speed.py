"""Chapter 2 (the numbers behind speed): the formulas and counters against known cases, its exercises (each
refuses the starting code and every shortcut, accepts the solution), the calculator's plain view, and the
ceilings benchmark's JSON."""

import json
import math
import subprocess
import sys

import keras
import numpy as np
import pytest

from helpers import calculator
from helpers.chapters import ch02_numbers_behind_speed as ch2
from helpers.exercises import check
from helpers.exercises.ch2 import ring_all_reduce_sent_bytes


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    return capsys.readouterr().out.strip()


# ---------------------------------------------------------------------------- formulas and counters


@pytest.mark.parametrize("m,k,n", [(1024, 1024, 1024), (64, 1024, 1024), (1, 512, 256), (7, 3, 5)])
def test_xla_counts_a_matmul_as_the_formula(m, k, n):
    flops, nbytes = ch2.xla_counts(lambda a, b: a @ b, (m, k), (k, n))
    assert flops == 2 * m * k * n
    assert nbytes == 4 * (m * k + k * n + m * n)


def test_a_dense_layers_parameters_bytes_and_training_flops():
    model = keras.Sequential([keras.Input((100,)), keras.layers.Dense(100, name="first"),
                              keras.layers.Dense(10, use_bias=False, name="inner")])
    model.compile(optimizer=keras.optimizers.SGD(momentum=0.9), loss="mse")
    assert model.count_params() == 100 * 100 + 100 + 100 * 10
    model.optimizer.build(model.trainable_variables)
    scalars = 8 + 4  # the optimizer's step counter (int64) and learning rate (float32)
    assert ch2.variable_bytes(model) == 2 * 4 * model.count_params() + scalars  # weights + momentum
    counted = ch2.training_step_flops(model, np.ones((16, 100), "float32"), np.ones((16, 10), "float32"))
    # products: first layer forward + weight gradient (its input is data: no input gradient), inner layer all three
    products = 2 * 16 * 100 * 100 * 2 + 2 * 16 * 100 * 10 * 3
    assert products < counted < products * 1.2  # plus the element-wise math (bias, loss, update)


def test_the_ring_model_and_the_predicted_speedup():
    assert ch2.ring_allreduce_seconds(1e6, 1, 1e9) == 0.0
    assert math.isclose(ch2.ring_allreduce_seconds(1e6, 2, 1e9), 1e-3)
    assert math.isclose(ch2.ring_allreduce_seconds(1e6, 4, 1e9, latency=1e-5), 6e-5 + 1.5e-3)
    assert ch2.predicted_speedup(0.01, 0.0, 4, shared_hardware=False) == 4
    assert ch2.predicted_speedup(0.01, 0.0, 4, shared_hardware=True) == 1
    assert math.isclose(ch2.predicted_speedup(0.01, 0.01, 2, shared_hardware=False), 1.0)


def test_a_fixed_cost_per_step_is_optional_and_allows_a_gain_on_shared_hardware():
    assert ch2.predicted_speedup(0.01, 0.001, 2, True) == ch2.predicted_speedup(0.01, 0.001, 2, True, fixed_seconds=0)
    assert math.isclose(ch2.predicted_speedup(0.01, 0.0, 2, shared_hardware=True, fixed_seconds=0.005), 0.02 / 0.015)


def test_the_exchange_models_count_dense_and_sparse_apart():
    assert ch2.one_device_exchange_seconds(1e6, 1e6, 1, 1e9, fixed=1.0) == 0.0
    assert math.isclose(ch2.one_device_exchange_seconds(1e6, 0, 2, 1e9, fixed=1e-4), 1e-4 + 4e-3)
    assert math.isclose(ch2.one_device_exchange_seconds(0, 1e6, 2, 1e9), 6e-3)
    assert ch2.sparse_gather_seconds(1e6, 1, 1e9) == 0.0
    assert math.isclose(ch2.sparse_gather_seconds(1e6, 4, 1e9), 15e-3)


def test_the_reuters_gradient_splits_into_dense_tensors_and_the_embeddings_rows():
    from helpers.chapters.ch01_single_gpu import reuters_conv1d

    model = reuters_conv1d()
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = np.ones((32, 300), "int32"), np.zeros((32,), "int32")
    split = ch2.gradient_exchange_bytes(model, x, y)
    assert split["dense"] == 4 * (model.count_params() - model.layers[0].count_params())  # 115,982 x 4 B
    assert split["sparse"] == 32 * 300 * (7 * 4 + 4)  # a row of 7 floats and an int32 index per word


def test_the_ceiling_sweep_goes_on_only_while_it_climbs():
    ceiling, points = ch2.matmul_ceiling("float32", (16, 32), repeats=1, largest=64)
    assert set(points) <= {16, 32, 64} and ceiling == max(f for f, _ in points.values())
    _, points = ch2.matmul_ceiling("float32", (16, 32), repeats=1)
    assert set(points) == {16, 32}


def test_the_roofline_bound_is_the_larger_time_and_names_its_term():
    assert ch2.roofline_bound(1e6, 12e6, peak=1e12, bandwidth=1e11) == (1.2e-4, "memory")
    assert ch2.roofline_bound(2e9, 1e6, peak=1e12, bandwidth=1e11) == (2e-3, "compute")


def test_time_product_times_the_product_it_names():
    timing = ch2.time_product(8, 4, 2, repeats=2)
    assert timing.name == "8x4 @ 4x2" and len(timing.times) == 2 and timing.min > 0


def test_dense_stack_memory_keeps_state_in_float32_and_activations_in_the_compute_dtype():
    params = 2 * 100 * 101
    memory = ch2.dense_stack_memory(2, 100, tokens=32, policy="mixed_bfloat16", optimizer="momentum",
                                    accumulation_steps=2)
    assert memory == {"weights": 4 * params, "gradients": 4 * params, "optimizer": 4 * params,
                      "accumulators": 4 * params, "activations": 2 * 100 * 2 * 32 / 2}


def test_the_estimates_update_reads_the_gradient():
    memory_bound = ch2.estimate(1, 100, 1, optimizer="adam", peak_flops=1e15, bandwidth=1e9)
    params = 100 * 101
    assert memory_bound["bound by"] == "memory"
    assert math.isclose(memory_bound["step-time bound (s)"], (4 * params * (6 + 2 * 2) + 2 * 4 * 100) / 1e9)


def test_the_estimate_adds_memory_per_parameter_and_reads_mfu():
    base = ch2.estimate(layers=2, width=100, batch=8, seq_len=4, optimizer="adam", peak_flops=1e9, bandwidth=1e9)
    params = 2 * 100 * 101
    assert base["parameters"] == params
    assert base["weights"] == base["gradients"] == 4 * params and base["optimizer"] == 8 * params
    assert base["accumulators"] == 0 and base["activations"] == 4 * 100 * 2 * 32
    assert base["FLOPs per update"] == 6 * params * 32
    assert ch2.estimate(2, 100, 8, 4, optimizer="sgd")["optimizer"] == 0
    mixed = ch2.estimate(2, 100, 8, 4, policy="mixed_bfloat16", accumulation_steps=4)
    assert mixed["accumulators"] == 4 * params and mixed["weights"] == 4 * params  # variables stay float32
    assert mixed["activations"] == base["activations"] / 2 / 4  # 16-bit, a quarter of the batch at a time
    two = ch2.estimate(2, 100, 8, 4, replicas=2, link_bandwidth=1e9)
    assert math.isclose(two["all-reduce, no latency (s)"], 4 * params / 1e9)
    assert math.isclose(ch2.estimate(2, 100, 8, 4, peak_flops=1e9, step_seconds=1.0)["MFU at that step time"],
                        6 * params * 32 / 1e9)


def test_the_numpy_ring_sums_and_counts_two_n_minus_one_over_n():
    for n in (1, 2, 3, 5):
        results, sent = ring_all_reduce_sent_bytes([np.full(30, r + 1.0, "float32") for r in range(n)])
        assert all(np.allclose(r, n * (n + 1) / 2) for r in results)
        assert sent == [2 * (n - 1) * 120 // n] * n


# ---------------------------------------------------------------------------- exercises: the starting code and
# the named shortcuts (the notebook's folded solutions: tests/exercises/test_exercises.py)


@pytest.mark.parametrize("answer,hint", [
    (lambda b, i, o: 2 * b * i * o, "forward pass only"),
    (lambda b, i, o: 4 * b * i * o, "gradient for the layer's input"),
    (lambda b, i, o: 6 * b * i * o + b * o, "your formula gives"),
    (lambda b, i, o: 6 * 32 * 64 * 16, "Not yet"),  # right for the first shape only
    (lambda b, i, o: None, "your formula gives None"),
])
def test_dense_training_flops_refuses_the_starting_code_and_shortcuts(capsys, answer, hint):
    assert hint in verdict(capsys, "ch2.dense_training_flops", answer)


@pytest.mark.parametrize("answer,hint", [
    (lambda s, p: 4, "your answer is 4"),
    (lambda s, p: 12, "one more float32 buffer"),
    (lambda s, p: 16, "not a variable"),
    (lambda s, p: 8 + (4 if s > 1 else 0), "your answer is 8"),
    (lambda s, p: (12 if p == "float32" else 6) + (4 if s > 1 else 0), "float32 under mixed policies"),
])
def test_adam_bytes_refuses_the_starting_code_and_shortcuts(capsys, answer, hint):
    assert hint in verdict(capsys, "ch2.adam_bytes_per_parameter", answer)


@pytest.mark.parametrize("answer", [
    lambda nbytes, n: nbytes,  # the starting code: right for 2 replicas only
    lambda nbytes, n: 2 * nbytes,
    lambda nbytes, n: (n - 1) * nbytes,
    lambda nbytes, n: 2 * (n - 1) * nbytes,
    lambda nbytes, n: (n - 1) / n * nbytes,  # the reduce-scatter alone
])
def test_ring_bytes_refuses_the_starting_code_and_shortcuts(capsys, answer):
    assert "each replica of the ring sent" in verdict(capsys, "ch2.ring_bytes_per_device", answer)


# ---------------------------------------------------------------------------- calculator and benchmark


def test_the_calculator_prints_the_prediction_where_widgets_cannot_show(capsys):
    assert not calculator.widgets_available()  # COURSE_WIDGETS=0 in tests
    controls = calculator.show({"width": 8, "policy": ("float32", ["float32", "mixed_float16"])},
                               lambda v: f"predicted for {v}", measure=lambda v: pytest.fail("measured"))
    assert controls == {}
    assert capsys.readouterr().out.strip() == "predicted for {'width': 8, 'policy': 'float32'}"


def test_the_ceilings_benchmark_prints_json_and_a_png(tmp_path):
    png = tmp_path / "ceilings.png"
    proc = subprocess.run([sys.executable, "-m", "helpers.bench", "ceilings", "--json", "--png", str(png)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert set(result["ceilings_gflop_s"]) == {"float32", "bfloat16", "float16"}
    assert all(v > 0 for v in result["ceilings_gflop_s"].values()) and result["memory_bandwidth_gb_s"] > 0
    assert [r["product"] for r in result["results"]] == ["square 1024", "Dense 1024, batch 64", "matrix-vector"]
    assert result["results"][0]["FLOPs/byte"] == round(2 * 1024**3 / (3 * 1024**2 * 4), 2)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_the_ceilings_default_to_the_first_accelerator_not_the_cpu_tensorflow_lists_first(monkeypatch):
    from types import SimpleNamespace

    import tensorflow as tf

    from helpers.chapters import ch02_numbers_behind_speed as ch2

    listed = {None: ["/device:CPU:0", "/device:GPU:0"], "GPU": ["/device:GPU:0"], "TPU": []}
    monkeypatch.setattr(tf.config, "list_logical_devices",
                        lambda kind=None: [SimpleNamespace(name=n) for n in listed[kind]])
    assert ch2.first_device() == "/device:GPU:0"
    listed.update({None: ["/device:CPU:0"], "GPU": []})
    assert ch2.first_device() == "/device:CPU:0"
