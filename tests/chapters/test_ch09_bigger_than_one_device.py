"""Chapter 9: the largest-batch finder against a fake out-of-memory error, the simulated device's memory count,
setup() on the JAX backend with the notebook's device cell, and the chapter run without TensorFlow on the default
runtime (4 virtual CPU devices) with its exercises' solutions (nbval runs it with TensorFlow, 2 devices and the
starting code)."""

from __future__ import annotations

import os
from pathlib import Path

import keras
import nbformat
import pytest
from conftest import run_python

from helpers import CourseError
from helpers.chapters import ch09_bigger_than_one_device as ch9
from helpers.chapters.ch09_bigger_than_one_device import is_out_of_memory, largest_batch
from helpers.memory import ResourceExhaustedError

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "09_bigger_than_one_device.ipynb"


class JaxRuntimeError(RuntimeError):  # named like JAX's
    pass


def fake_device(fits_up_to: int, error=ResourceExhaustedError):
    tried = []

    def try_batch(batch):
        tried.append(batch)
        if batch > fits_up_to:
            raise error(f"OOM at batch {batch}")

    return try_batch, tried


def test_the_largest_batch_is_the_last_doubling_before_out_of_memory():
    try_batch, tried = fake_device(fits_up_to=100)
    assert largest_batch(try_batch, start=8, limit=4096) == 64
    assert tried == [8, 16, 32, 64, 128]  # stops at the first size that does not fit


def test_no_batch_fits_and_the_limit_stops_the_search():
    assert largest_batch(fake_device(fits_up_to=4)[0], start=8) is None
    try_batch, tried = fake_device(fits_up_to=10**9)
    assert largest_batch(try_batch, start=8, limit=64) == 64 and tried == [8, 16, 32, 64]


def test_only_out_of_memory_means_too_big():
    def broken(batch):
        raise ValueError("a shape mistake, not memory")

    with pytest.raises(ValueError, match="shape mistake"):
        largest_batch(broken)


@pytest.mark.parametrize("err, oom", [
    (ResourceExhaustedError("OOM when allocating tensor"), True),  # TensorFlow's class name
    (JaxRuntimeError("RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1.2GiB"), True),  # JAX's message
    (MemoryError(), True),
    (RuntimeError("INTERNAL: something else"), False),
])
def test_out_of_memory_is_recognised_in_tensorflow_jax_and_python(err, oom):
    assert is_out_of_memory(err) is oom
    assert largest_batch(fake_device(fits_up_to=8, error=lambda m: err)[0]) == 8 if oom else True


def test_the_simulated_device_counts_weights_gradients_optimizer_and_activations():
    model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(5)])  # 55 numbers
    model.compile(optimizer="adam", loss="mse")
    held = ch9.fixed_bytes(model)  # builds the optimizer, as fit() would
    scalars = sum(ch9.bytes_of(v) for v in model.optimizer.variables if len(v.shape) == 0)  # step, rate
    assert held == {"weights": 4 * 55, "gradients": 4 * 55, "optimizer": 2 * 4 * 55 + scalars}
    assert ch9.activation_bytes_per_example(model) == 2 * 4 * 5
    ran = []
    fixed_mb = sum(held.values()) / 1e6
    assert ch9.needed_mb(model, 100) == pytest.approx(fixed_mb + 40 * 100 / 1e6)
    try_batch = ch9.simulated_device(model, ran.append, memory_mb=fixed_mb + 40 * 100 / 1e6)
    try_batch(100)
    with pytest.raises(ResourceExhaustedError, match="batch 101"):
        try_batch(101)
    assert ran == [100]
    with pytest.raises(CourseError, match="memory_mb"):
        ch9.simulated_device(model, ran.append, memory_mb=0)
    with pytest.raises(CourseError, match=r"try_batch\(2.5\)"):
        try_batch(2.5)


@pytest.mark.parametrize("optimizer, copies", [
    (keras.optimizers.SGD(0.1), 0),
    (keras.optimizers.SGD(0.1, momentum=0.9), 1),
    (keras.optimizers.SGD(0.1, gradient_accumulation_steps=4), 1),  # one accumulator per trainable weight
    (keras.optimizers.Adam(gradient_accumulation_steps=4), 3),  # two moments and the accumulators
])
def test_the_optimizer_state_is_read_from_the_optimizer_accumulators_included(optimizer, copies):
    model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(5)])
    model.compile(optimizer=optimizer, loss="mse")
    held = ch9.fixed_bytes(model)["optimizer"]
    scalars = sum(ch9.bytes_of(v) for v in model.optimizer.variables if len(v.shape) == 0)  # step, rate
    assert held - scalars == copies * 4 * 55


def _run(code: str, **env) -> dict:
    return run_python(code, **{"KERAS_BACKEND": "tensorflow", **env})


# The notebook's device cell (sets KERAS_BACKEND and XLA_FLAGS, imports Keras and JAX), as a program's first line.
DEVICE_CELL = "DEVICE_CELL = " + repr(next(c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells
                                          if c.cell_type == "code" and "CPU_DEVICES = " in c.source))


def test_setup_on_jax_imports_neither_keras_nor_jax_and_the_device_cell_sets_the_devices():
    found = _run(DEVICE_CELL + """
import json, os, sys, helpers
os.environ.pop("COURSE_DEVICES", None)
DEVICES = None
course = helpers.setup(fast=True, devices=DEVICES, backend="jax", verbose=False)
before = {"keras": "keras" in sys.modules, "backend": os.environ["KERAS_BACKEND"], "flags": os.environ.get("XLA_FLAGS"),
          "logical": list(course.logical_devices)}
exec(DEVICE_CELL)
again = helpers.setup(fast=True, devices=DEVICES, backend="jax", verbose=False)  # running setup twice is harmless
print(json.dumps({**before, "cpu": len(jax.devices("cpu")), "keras_backend": keras.backend.backend(),
                  "after": os.environ["XLA_FLAGS"]}))
""", XLA_FLAGS="--xla_cpu_use_thunk_runtime=true")
    assert found == {"keras": False, "backend": "jax", "flags": "--xla_cpu_use_thunk_runtime=true", "logical": [],
                     "cpu": 4, "keras_backend": "jax", "after": "--xla_force_host_platform_device_count=4"}


@pytest.mark.parametrize("devices, env, expected", [(None, "2", 2), (8, "2", 8), (1, None, 1)])
def test_the_device_cell_reads_devices_then_course_devices_then_four(devices, env, expected):
    found = _run(DEVICE_CELL + f"""
import json, os, helpers
os.environ.pop("COURSE_DEVICES", None)
if {env!r}:
    os.environ["COURSE_DEVICES"] = {env!r}
DEVICES = {devices!r}
course = helpers.setup(fast=True, devices=DEVICES, backend="jax", verbose=False)
exec(DEVICE_CELL)
print(json.dumps(len(jax.devices("cpu"))))
""")
    assert found == expected


@pytest.mark.parametrize("code, message", [
    ("import keras; helpers.setup(backend='jax')", "Keras was already imported with the 'tensorflow' backend"),
    ("helpers.setup(backend='torch')", "setup(backend='torch'): use one of 'tensorflow', 'jax'"),
    ("import os; os.environ['KERAS_BACKEND'] = 'jax'; import jax; jax.devices(); DEVICES = 2; exec(DEVICE_CELL)",
     "JAX had already started, with 1 CPU device(s), before this cell asked for 2"),
])
def test_a_backend_or_device_count_that_cannot_be_had_is_a_clear_error(code, message):
    found = _run(DEVICE_CELL + f"""
import json, helpers
try:
    {code}
    print(json.dumps("no error"))
except helpers.CourseError as err:
    print(json.dumps(str(err)))
""")
    assert message in found and ("restart" in found.lower() or "use one of" in found)
    if "already imported" in found:
        assert "keras.config.set_backend" in found


def with_solutions(nb):
    """The notebook with each exercise's folded solution put in: the value, the line, or the function."""
    import test_exercises_ch9 as ex

    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if cell.source.startswith("effective_batch = None"):
            cell.source = cell.source.replace("effective_batch = None", "effective_batch = 128", 1)
        elif 'check("ch9.exact_largest_batch"' in cell.source:
            cell.source = ex.folded_solution("ch9.exact_largest_batch") + "\n\n" + cell.source.split("\n\n\n", 1)[1]
        elif 'check("ch9.kernel_on_model_axis"' in cell.source:
            first = cell.source.splitlines()[1]
            cell.source = cell.source.replace(first, first + "\n" + ex.folded_solution("ch9.kernel_on_model_axis"))
    return nb


def test_the_chapter_runs_without_tensorflow_on_the_default_runtime_and_its_solutions_pass(monkeypatch,
                                                                                          no_tensorflow):
    from nbclient import NotebookClient

    # The default runtime: no DEVICES, no COURSE_DEVICES (the device cell then asks JAX for 4 CPU devices).
    monkeypatch.delenv("COURSE_DEVICES", raising=False)
    for name, value in {"COURSE_FAST": "1", "COURSE_WIDGETS": "0"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("COVERAGE_PROCESS_CONFIG", raising=False)  # an unmeasured kernel, as under nbval
    # No TensorFlow in the kernel, as on Colab's TPU runtime (nbval runs the chapter with it, as on Kaggle's).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [no_tensorflow, os.environ.get("PYTHONPATH")])))
    nb = with_solutions(nbformat.read(NOTEBOOK, as_version=4))
    nb.cells.append(nbformat.v4.new_code_cell('import importlib.util, sitecustomize\n'
                                              'print("TensorFlow found:", importlib.util.find_spec("tensorflow"), '
                                              'sitecustomize.tried)'))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    text = "".join(output.get("text", "") for cell in nb.cells if cell.cell_type == "code" for output in cell.outputs)
    assert "JAX CPU devices:     [CpuDevice(id=0), CpuDevice(id=1), CpuDevice(id=2), CpuDevice(id=3)]" in text
    assert "global batch 64 = 16 per device x 4 device(s)" in text
    assert "DataParallel on 4 devices" in text and "same loss per epoch, up to float32 rounding" in text
    assert "mesh: {'batch': 2, 'model': 2}" in text
    assert "spec (None, 'model')" in text and "per device (2336, 23)" in text
    # ZeRO-3 layouts over the 4 devices' data axis: the table padded to 30,984 rows, a quarter on each device
    assert "mesh: {'batch': 4}: weights and batches on one axis" in text and "per device (7746, 7)" in text
    assert "ZeRO-3 loss per epoch" in text and "a ring all-reduce over 4 device(s)" in text
    for name in ("ch9.effective_batch", "ch9.exact_largest_batch", "ch9.kernel_on_model_axis"):
        assert f"[{name}] Correct. Well done." in text, name
    assert "TensorFlow found: None [" in text  # Keras may look for it; nothing needed it


def test_sections_3_and_4_size_the_global_batch_from_one_device(monkeypatch):
    # 2 devices run under nbval and 4 in the test above; one device is the edge: a model axis of one.
    from nbclient import NotebookClient

    expected = ["global batch 16 = 16 per device x 1 device(s)", "DataParallel on 1 devices",
                "1 device(s): the model axis has one device", "mesh: {'batch': 1, 'model': 1}",
                "2 x (1 - 1) / 1 of that = 0.00 MB per device per step", "mesh: {'batch': 1}: weights and batches",
                "measured/predicted 1.000", "ZeRO-3 loss per epoch"]
    monkeypatch.setenv("COURSE_DEVICES", "1")
    monkeypatch.setenv("COURSE_FAST", "1")
    monkeypatch.delenv("COVERAGE_PROCESS_CONFIG", raising=False)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    # What sections 3 and 4 need: the parameters, setup, device, section 1's definitions and data cells, then the two
    # sections; not the search for the largest batch (it trains the model at each size), the exercises or section 2.
    skipped = ("check(", "largest_batch(device", "K, B = ", "compiled_step_mb")
    nb.cells = [c for c in nb.cells if c.cell_type == "code" and not any(s in c.source for s in skipped)]
    assert any("def fresh_model" in c.source for c in nb.cells)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    text = "".join(output.get("text", "") for cell in nb.cells for output in cell.outputs)
    for line in [*expected, "same loss per epoch, up to float32 rounding"]:
        assert line in text, line


def test_setup_on_jax_sees_an_accelerator_without_starting_jax(monkeypatch):
    from helpers import course

    monkeypatch.setattr("glob.glob", lambda pattern: [])
    monkeypatch.setattr("os.path.exists", lambda path: False)
    assert course.accelerator_without_starting_jax() is None
    monkeypatch.setenv("TPU_ACCELERATOR_TYPE", "v5litepod-1")
    assert course.accelerator_without_starting_jax() == "a TPU"
    monkeypatch.setattr("glob.glob", lambda pattern: ["/dev/nvidia0"] if pattern.startswith("/dev/nvidia") else [])
    assert course.accelerator_without_starting_jax() == "a GPU"
