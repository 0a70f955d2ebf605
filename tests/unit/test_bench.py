import json

import matplotlib.pyplot as plt
import pytest
import tensorflow as tf
from conftest import run_python

from helpers import CourseError, bench, data
from helpers.bench import ch01_single_gpu, ch03_multi_gpu, ch04_mixed_precision, ch06_input_pipelines, main
from helpers.results import Result
from helpers.tables import Table

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def fast(monkeypatch):
    monkeypatch.setenv("COURSE_FAST", "1")


@pytest.fixture
def offline(monkeypatch):
    def no_network():
        raise OSError("offline in tests")

    monkeypatch.setattr(data, "_download_reuters", no_network)


def only_json(capsys) -> dict:
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one JSON object, nothing else on stdout
    return json.loads(out)


def test_registered_benchmarks():
    assert sorted(bench.BENCHMARKS) == ["ceilings", "epoch-time", "matmul", "mixed-precision", "multiworker",
                                       "pipeline", "profile", "scaling", "step-fusing"]


def test_accelerators_lists_the_cpu_then_one_entry_per_physical_gpu(monkeypatch):
    assert ch01_single_gpu.accelerators() == ["/CPU:0"]  # this machine has no GPU
    monkeypatch.setattr(tf.config, "get_visible_devices", lambda kind: ["gpu a", "gpu b"] if kind == "GPU" else [])
    assert ch01_single_gpu.accelerators() == ["/CPU:0", "/GPU:0", "/GPU:1"]


def test_result_table_and_json():
    result = Result("demo", ["device", "median_s"], [["/CPU:0", 0.25]], figure=None)
    table = result.table()
    assert isinstance(table, Table)
    assert table.title == "demo"
    assert table.rows == [["/CPU:0", "0.25"]]
    assert result.as_json("p.png") == {
        "benchmark": "demo", "results": [{"device": "/CPU:0", "median_s": 0.25}], "png": "p.png"
    }


def test_matmul_json(fast, capsys, tmp_path):
    png = tmp_path / "m.png"
    assert main(["matmul", "--json", "--png", str(png)]) == 0
    out = only_json(capsys)
    assert out["benchmark"] == "matmul"
    assert out["fast"] is True
    assert out["png"] == str(png)
    assert png.read_bytes()[:8] == PNG_MAGIC
    assert [row["device"] for row in out["results"]] == ["/CPU:0"]  # no GPU here
    for row in out["results"]:
        assert set(row) == {"device", "median_s", "min_s", "max_s", "gflops", "sum"}
        assert 0 < row["min_s"] <= row["median_s"] <= row["max_s"]
        assert row["gflops"] > 0
        # entries of a and b are uniform in [0, 3): each of the 10000 x 10000 products averages
        # 100 * 1.5 * 1.5, so the total is close to 2.25e10 (it checks the right work was done)
        assert float(row["sum"]) == pytest.approx(2.25e10, rel=0.01)


def test_epoch_time_json(fast, offline, capsys, tmp_path):
    png = tmp_path / "e.png"
    assert main(["epoch-time", "--json", "--png", str(png)]) == 0
    out = only_json(capsys)
    assert out["benchmark"] == "epoch-time"
    assert out["fast"] is True
    assert png.read_bytes()[:8] == PNG_MAGIC
    [row] = [r for r in out["results"] if r["device"] == "/CPU:0"]
    assert set(row) == {"device", "steady_epoch_s", "samples_per_s", "first_epoch_s"}
    assert row["steady_epoch_s"] > 0 and row["first_epoch_s"] > 0
    # fast mode: 40 steps of 32 examples per epoch
    assert row["samples_per_s"] == round(40 * 32 / row["steady_epoch_s"])


def test_text_output_and_default_png_path(monkeypatch, capsys, tmp_path):
    def fake_benchmark(is_fast):
        fig, ax = plt.subplots()
        ax.bar(["x"], [1.0])
        return Result("fake", ["fast", "value"], [[is_fast, 1.5]], fig)

    monkeypatch.setitem(bench.BENCHMARKS, "fake", ("none", "none"))
    monkeypatch.setattr(bench, "chapter_function", lambda name: fake_benchmark)
    monkeypatch.setenv("COURSE_FAST", "0")
    monkeypatch.chdir(tmp_path)
    assert main(["fake"]) == 0
    out = capsys.readouterr().out
    expected_png = "build/bench/fake.png"
    assert out == f"fake\nfast   value\n-----  -----\nFalse  1.5\nplot: {expected_png}\n"
    assert (tmp_path / expected_png).read_bytes()[:8] == PNG_MAGIC


def test_unknown_benchmark_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["nope"])
    assert info.value.code == 2
    assert "unknown benchmark 'nope'; choose one of: ceilings, epoch-time, matmul" in capsys.readouterr().err


def test_missing_name_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    assert "usage: python -m helpers.bench" in capsys.readouterr().err


def test_course_errors_are_reported_not_raised(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("COURSE_FAST", "maybe")
    assert main(["matmul", "--json", "--png", str(tmp_path / "m.png")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("error: COURSE_FAST='maybe' is not a yes/no value: use COURSE_FAST=1 "
                            "or COURSE_FAST=0.\n")
    assert not (tmp_path / "m.png").exists()


# ---------------------------------------------------------------------------- scaling


class FakeRun:
    """Stands in for subprocess.run: records the calls, answers like
    `python -m helpers.bench.ch03_multi_gpu --replicas N`."""

    def __init__(self, returncode=0):
        self.calls, self.returncode = [], returncode

    def __call__(self, cmd, **kwargs):
        self.calls.append((cmd, kwargs["env"]))
        replicas = int(cmd[cmd.index("--replicas") + 1])
        point = {"replicas": replicas, "global_batch": 32 * replicas, "steps_per_s": 10.0 / replicas,
                 "samples_per_s": 320.0, "first_epoch_s": 2.0}

        class Done:
            returncode = self.returncode
            stdout = json.dumps({"benchmark": "scaling", "results": [point], "fast": True})
            stderr = "boom: the worker failed"
        return Done()


def test_scaling_point_runs_a_fresh_process_with_that_many_devices(monkeypatch):
    import subprocess

    fake = FakeRun()
    monkeypatch.setattr(subprocess, "run", fake)
    point = ch03_multi_gpu.scaling_point(4, fast=True)
    assert point["replicas"] == 4 and point["global_batch"] == 128
    cmd, env = fake.calls[0]
    assert cmd[1:] == ["-m", "helpers.bench.ch03_multi_gpu", "--replicas", "4", "--per-replica-batch", "32"]
    assert env["COURSE_DEVICES"] == "4" and env["COURSE_FAST"] == "1"
    assert "CUDA_VISIBLE_DEVICES" not in env


def test_scaling_point_with_real_gpus_limits_visibility_and_skips_too_many(monkeypatch):
    import subprocess

    fake = FakeRun()
    monkeypatch.setattr(subprocess, "run", fake)
    assert ch03_multi_gpu.scaling_point(4, fast=False, physical_gpus=2) is None
    assert fake.calls == []
    ch03_multi_gpu.scaling_point(1, fast=False, physical_gpus=2)
    assert fake.calls[0][1]["CUDA_VISIBLE_DEVICES"] == "0"
    assert fake.calls[0][1]["COURSE_FAST"] == "0"


def test_scaling_point_failure_is_a_course_error_with_the_workers_stderr(monkeypatch):
    import subprocess

    monkeypatch.setattr(subprocess, "run", FakeRun(returncode=1))
    with pytest.raises(CourseError, match="scaling run with 2 replicas failed:\nboom"):
        ch03_multi_gpu.scaling_point(2, fast=True)


def test_scaling_sweep_on_cpu_measures_1_2_4(monkeypatch):
    seen = []
    monkeypatch.setattr(ch03_multi_gpu, "scaling_point",
                        lambda n, fast, gpus, batch: seen.append((n, batch)) or {"replicas": n})
    assert [p["replicas"] for p in ch03_multi_gpu.scaling_sweep(fast=True, per_replica_batch=64)] == [1, 2, 4]
    assert seen == [(1, 64), (2, 64), (4, 64)]  # 8 only with 8 real GPUs


@pytest.mark.parametrize("batch", [0, True, 2.5])
def test_scaling_sweep_rejects_bad_per_replica_batch(batch):
    with pytest.raises(CourseError, match="scaling_sweep\\(per_replica_batch="):
        ch03_multi_gpu.scaling_sweep(fast=True, per_replica_batch=batch)


def test_scaling_benchmark_computes_speedups(monkeypatch):
    points = [{"replicas": 1, "global_batch": 32, "steps_per_s": 10.0, "samples_per_s": 320.0},
              {"replicas": 2, "global_batch": 64, "steps_per_s": 8.0, "samples_per_s": 512.0}]
    monkeypatch.setattr(ch03_multi_gpu, "scaling_sweep", lambda fast: points)
    result = ch03_multi_gpu.scaling(True)
    assert result.columns == ["replicas", "global_batch", "steps_per_s", "samples_per_s", "speedup"]
    assert [r[4] for r in result.rows] == [1.0, 1.6]
    plt.close(result.figure)


def test_one_scaling_point_in_process(fast, offline, capsys):
    assert ch03_multi_gpu.main(["--replicas", "1"]) == 0
    out = only_json(capsys)
    [point] = out["results"]
    assert point["replicas"] == 1 and point["global_batch"] == ch03_multi_gpu.PER_REPLICA_BATCH
    assert point["samples_per_s"] == pytest.approx(point["steps_per_s"] * point["global_batch"])
    assert point["first_epoch_s"] > 0


def test_a_scaling_point_needs_its_replica_count(capsys):
    with pytest.raises(SystemExit) as info:
        ch03_multi_gpu.main([])
    assert info.value.code == 2
    assert "the following arguments are required: --replicas" in capsys.readouterr().err


# ---------------------------------------------------------------------------- mixed precision


def tiny_reuters(n=64):
    from types import SimpleNamespace

    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.integers(0, 200, size=(n, 300)).astype("int32")
    y = rng.integers(0, 46, size=n)
    return SimpleNamespace(x_train=x, y_train=y, x_test=x[:16], y_test=y[:16], vocab_size=200, num_classes=46)


@pytest.mark.parametrize("policy, optimizer", [("mixed_float16", "LossScaleOptimizer"), ("mixed_bfloat16", "Nadam")])
def test_train_with_policy_reports_and_restores_float32(policy, optimizer):
    import keras

    result = ch04_mixed_precision.train_with_policy(policy, False, tiny_reuters(), batch=16, steps=2, epochs=2)
    assert result["policy"] == policy and result["xla"] is False
    assert result["optimizer"] == optimizer  # compile() wraps the optimizer for float16 only
    assert 0.0 <= result["val_accuracy"] <= 1.0
    assert result["first_epoch_s"] > 0 and result["steps_per_s"] > 0
    assert len(result["epoch_steps_per_s"]) == 1 and result["epoch_steps_per_s"][0] > 0  # the timed epochs' spread
    assert keras.config.dtype_policy().name == "float32"


def test_train_with_policy_restores_float32_after_a_failure():
    import keras

    broken = tiny_reuters()
    broken.y_train = broken.y_train[:10]  # mismatched lengths: make_dataset refuses
    with pytest.raises(CourseError):
        ch04_mixed_precision.train_with_policy("mixed_float16", False, broken, batch=16, steps=2, epochs=2)
    assert keras.mixed_precision.dtype_policy().name == "float32"


def test_mixed_precision_benchmark_runs_every_policy_with_and_without_xla(monkeypatch):
    calls = []

    def fake(policy, xla, data, **kwargs):
        calls.append((policy, xla))
        return {"policy": policy, "xla": xla, "steps_per_s": 10.0 if policy == "float32" else 5.0,
                "val_accuracy": 0.5}

    monkeypatch.setattr(ch04_mixed_precision, "train_with_policy", fake)
    monkeypatch.setattr(data, "_download_reuters", lambda: (_ for _ in ()).throw(OSError("offline")))
    result = ch04_mixed_precision.mixed_precision(True)
    assert calls[0] == ("float32", False)  # the warm-up run
    assert calls[1:] == [(p, x) for p in ch04_mixed_precision.POLICIES for x in (False, True)]
    assert [r[3] for r in result.rows] == [1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
    plt.close(result.figure)


# ---------------------------------------------------------------------------- pipeline


def test_pipeline_benchmark_json_names_the_uncached_and_the_cached_speedups(monkeypatch, fast, capsys, tmp_path):
    fake = {0.0: {"Python generator": 1000.0, "tf.data, parallel map": 3500.0, "tf.data, cached": 15000.0},
            0.002: {"Python generator": 300.0, "tf.data, parallel map": 3300.0, "tf.data, cached": 21000.0}}
    monkeypatch.setattr(ch06_input_pipelines, "pipeline_comparison", lambda fast: fake)
    assert main(["pipeline", "--json", "--png", str(tmp_path / "p.png")]) == 0
    result = only_json(capsys)
    assert (result["uncached_speedup_no_latency"], result["cached_speedup_no_latency"]) == (3.5, 15.0)
    assert (result["uncached_speedup_with_latency"], result["cached_speedup_with_latency"]) == (11.0, 70.0)
    assert result["results"][1] == {"latency": "0 ms", "variant": "tf.data, parallel map", "images_per_s": 3500,
                                    "vs_generator": 3.5}
    assert len(result["results"]) == 6


def test_pipeline_comparison_generates_the_folder_when_missing(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(ch06_input_pipelines, "pipeline_rates",
                        lambda paths, labels, names, *, latency_s, batches: calls.append((len(paths), latency_s,
                                                                                          batches)) or {})
    import helpers.images as images

    real_make = images.make_image_folder
    monkeypatch.setattr(ch06_input_pipelines, "make_image_folder", lambda root: real_make(root, per_class=2))
    comparison = ch06_input_pipelines.pipeline_comparison(fast=True, root=tmp_path / "shapes")
    assert list(comparison) == [0.0, ch06_input_pipelines.LATENCY_S]
    assert calls == [(12, 0.0, 20), (12, 0.002, 20)]


def test_multiworker_benchmark_runs_two_real_workers(fast, capsys, tmp_path):
    assert main(["multiworker", "--json", "--png", str(tmp_path / "m.png")]) == 0
    [row] = only_json(capsys)["results"]
    assert row["workers"] == 2 and row["startup_s"] > 0 and row["steps_per_s"] > 0


# ---------------------------------------------------------------------------- step fusing (Keras on JAX)


def test_step_fusing_is_set_up_on_jax_and_the_others_on_tensorflow(monkeypatch, capsys, tmp_path):
    from types import SimpleNamespace

    import helpers.course

    backends = []

    def recording_setup(verbose=True, backend=None, **kwargs):
        backends.append(backend)
        return SimpleNamespace(fast=True)

    def fake_benchmark(is_fast):
        fig, ax = plt.subplots()
        return Result("fake", ["fast"], [[is_fast]], fig)

    monkeypatch.setattr(helpers.course, "setup", recording_setup)
    monkeypatch.setattr(bench, "chapter_function", lambda name: fake_benchmark)
    assert bench.JAX_BENCHMARKS == ("step-fusing",)
    for name in ("step-fusing", "matmul", "pipeline"):
        assert main([name, "--json", "--png", str(tmp_path / f"{name}.png")]) == 0
    assert backends == ["jax", None, None]  # None: setup's default, TensorFlow


def test_step_fusing_in_a_python_that_runs_keras_on_tensorflow_is_a_course_error(capsys, tmp_path):
    import keras

    assert keras.backend.backend() == "tensorflow"  # this process, as any that imported Keras on TensorFlow
    assert main(["step-fusing", "--json", "--png", str(tmp_path / "s.png")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("error: setup(backend='jax'): Keras was already imported with the 'tensorflow' "
                                   "backend.")
    assert not (tmp_path / "s.png").exists()


STEP_FUSING = """
import contextlib, io, json, sys
import urllib.request

def offline(*args, **kwargs):
    raise OSError("offline in tests")

urllib.request.urlretrieve = offline  # Keras's download (load_reuters then trains on its stand-in)
assert "keras" not in sys.modules  # the benchmark is the first to import it
out = io.StringIO()
with contextlib.redirect_stdout(out):
    from helpers.bench import main
    status = main(["step-fusing", "--json", "--png", PNG])
import keras
print(json.dumps({"status": status, "backend": keras.backend.backend(), "out": out.getvalue()}))
"""


def test_step_fusing_json_runs_keras_on_jax(tmp_path):
    # KERAS_BACKEND=tensorflow in the environment, as a shell might have it: the benchmark sets JAX before Keras.
    png = tmp_path / "s.png"
    found = run_python(STEP_FUSING.replace("PNG", repr(str(png))), COURSE_FAST="1", KERAS_BACKEND="tensorflow",
                       COURSE_DEVICES="1")
    assert found["status"] == 0 and found["backend"] == "jax"
    assert found["out"].count("\n") == 1, found["out"]  # one JSON object, nothing else on stdout
    out = json.loads(found["out"])
    assert out["benchmark"] == "step-fusing" and out["fast"] is True and out["png"] == str(png)
    assert png.read_bytes()[:8] == PNG_MAGIC
    rows = out["results"]
    assert [row["where"] for row in rows] == ["one device"] * 4
    assert [row["steps_per_execution"] for row in rows] == [1, 2, 8, 32]
    assert all(row["steps_per_s"] > 0 for row in rows)
    assert (rows[0]["vs_1"], rows[0]["verdict"]) == (1.0, "baseline")
    assert all(row["verdict"] in ("above", "below", "within noise") for row in rows[1:])
    assert [row["predicted"] is None for row in rows] == [True, True, True, False] and rows[3]["predicted"] > 0
