"""Chapter 8: the largest-batch finder against a fake out-of-memory error, setup() on the JAX backend, and the chapter
run with 4 virtual devices (nbval runs it with 2)."""

from __future__ import annotations

from pathlib import Path

import keras
import pytest
from conftest import run_python

from helpers import CourseError
from helpers.chapters import ch08_bigger_than_one_device as ch8

ROOT = Path(__file__).resolve().parents[1]


class JaxRuntimeError(RuntimeError):  # named like JAX's
    pass


def fake_device(fits_up_to: int, error=ch8.ResourceExhaustedError):
    tried = []

    def try_batch(batch):
        tried.append(batch)
        if batch > fits_up_to:
            raise error(f"OOM at batch {batch}")

    return try_batch, tried


def test_the_largest_batch_is_the_last_doubling_before_out_of_memory():
    try_batch, tried = fake_device(fits_up_to=100)
    assert ch8.largest_batch(try_batch, start=8, limit=4096) == 64
    assert tried == [8, 16, 32, 64, 128]  # stops at the first size that does not fit


def test_no_batch_fits_and_the_limit_stops_the_search():
    assert ch8.largest_batch(fake_device(fits_up_to=4)[0], start=8) is None
    try_batch, tried = fake_device(fits_up_to=10**9)
    assert ch8.largest_batch(try_batch, start=8, limit=64) == 64 and tried == [8, 16, 32, 64]


def test_only_out_of_memory_means_too_big():
    def broken(batch):
        raise ValueError("a shape mistake, not memory")

    with pytest.raises(ValueError, match="shape mistake"):
        ch8.largest_batch(broken)


@pytest.mark.parametrize("err, oom", [
    (ch8.ResourceExhaustedError("OOM when allocating tensor"), True),  # TensorFlow's class name
    (JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.2GiB"), True),  # JAX's message
    (MemoryError(), True),
    (RuntimeError("INTERNAL: something else"), False),
])
def test_out_of_memory_is_recognised_in_tensorflow_jax_and_python(err, oom):
    assert ch8.is_out_of_memory(err) is oom
    assert ch8.largest_batch(fake_device(fits_up_to=8, error=lambda m: err)[0]) == 8 if oom else True


def test_the_simulated_device_counts_weights_and_activations():
    model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(5)])
    assert ch8.activation_bytes_per_example(model) == 2 * 4 * 5
    ran = []
    fixed_mb = 4 * 4 * model.count_params() / 1e6
    try_batch = ch8.simulated_device(model, ran.append, memory_mb=fixed_mb + 40 * 100 / 1e6)
    try_batch(100)
    with pytest.raises(ch8.ResourceExhaustedError, match="batch 101"):
        try_batch(101)
    assert ran == [100]
    with pytest.raises(CourseError, match="memory_mb"):
        ch8.simulated_device(model, ran.append, memory_mb=0)


def test_setup_on_jax_gives_the_virtual_devices_asked_for():
    found = run_python("""
import json, os, helpers
course = helpers.setup(fast=True, devices=3, backend="jax", verbose=False)
import keras
again = helpers.setup(devices=3, backend="jax", verbose=False)
print(json.dumps({"backend": keras.backend.backend(), "devices": list(course.logical_devices),
                  "flags": os.environ["XLA_FLAGS"], "again": len(again.logical_devices)}))
""", XLA_FLAGS="--xla_cpu_use_thunk_runtime=true")
    assert found["backend"] == "jax" and found["devices"] == ["cpu:0", "cpu:1", "cpu:2"] and found["again"] == 3
    assert found["flags"] == "--xla_cpu_use_thunk_runtime=true --xla_force_host_platform_device_count=3"


@pytest.mark.parametrize("code, message", [
    ("import keras; helpers.setup(backend='jax')", "Keras was already imported with the 'tensorflow' backend"),
    ("helpers.setup(backend='torch')", "setup(backend='torch'): use one of 'tensorflow', 'jax'"),
    ("helpers.setup(devices=2, backend='jax'); helpers.setup(devices=4, backend='jax')",
     "JAX has already started with 2 CPU device"),
])
def test_a_backend_or_device_count_that_cannot_be_had_is_a_clear_error(code, message):
    found = run_python(f"""
import json, helpers
try:
    {code}
    print(json.dumps("no error"))
except helpers.CourseError as err:
    print(json.dumps(str(err)))
""", KERAS_BACKEND="tensorflow")
    assert message in found and ("restart" in found.lower() or "use one of" in found)


def test_the_chapter_runs_on_four_virtual_devices(monkeypatch):
    from tools.template import execute  # `make outputs`' runner: a fresh kernel, which reads the environment below

    for name, value in {"COURSE_FAST": "1", "COURSE_DEVICES": "4", "COURSE_WIDGETS": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("COVERAGE_PROCESS_CONFIG", raising=False)  # an unmeasured kernel, as under nbval: 55 s, not 75
    nb = execute(ROOT / "notebooks" / "08_bigger_than_one_device.ipynb")
    text = "".join(output.get("text", "") for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs)
    assert "4 logical devices: cpu:0, cpu:1, cpu:2, cpu:3" in text
    assert "DataParallel on 4 devices" in text and "same loss per epoch, up to float32 rounding" in text
    assert "mesh: {'batch': 2, 'model': 2}" in text
    assert "spec (None, 'model')" in text and "per device (2336, 23)" in text
