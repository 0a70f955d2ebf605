import io
import os
import subprocess
from types import SimpleNamespace

import pytest
import tensorflow as tf
from conftest import FakeDevice, run_python

from helpers import CourseError, cpu, devices
from helpers.tables import Table

# ---------------------------------------------------------------------------- fake hardware


@pytest.fixture
def fake_gpus(monkeypatch):
    """Pretend TensorFlow sees `n` physical GPUs; record what the helpers ask TF to configure."""
    calls = {"logical": []}
    state = {"gpus": []}
    real_physical = tf.config.list_physical_devices
    real_visible = tf.config.get_visible_devices

    def install(n, *, fail_with=None):
        state["gpus"] = [FakeDevice(f"/physical_device:GPU:{i}", "GPU") for i in range(n)]

        def maybe_fail():
            if fail_with is not None:
                raise fail_with

        def set_logical(device, config):
            maybe_fail()
            calls["logical"].append((device, list(config)))

        monkeypatch.setattr(
            tf.config, "list_physical_devices",
            lambda kind=None: list(state["gpus"]) if kind == "GPU" else real_physical(kind),
        )
        monkeypatch.setattr(
            tf.config, "get_visible_devices",
            lambda kind=None: list(state["gpus"]) if kind == "GPU" else real_visible(kind),
        )
        monkeypatch.setattr(tf.config, "set_logical_device_configuration", set_logical)
        monkeypatch.setattr(tf.config, "get_logical_device_configuration", lambda device: None)
        monkeypatch.setattr(
            tf.config, "list_logical_devices",
            lambda kind=None: [SimpleNamespace(name=f"/device:{kind}:{i}") for i in range(2)],
        )
        return state["gpus"]

    install.calls = calls
    return install


# ---------------------------------------------------------------------------- platform & CPU


def test_runtime_platform_local_by_default():
    assert devices.runtime_platform() == "local"


@pytest.mark.parametrize(
    "var, expected",
    [
        ("COLAB_RELEASE_TAG", "Colab"),
        ("COLAB_GPU", "Colab"),
        ("KAGGLE_KERNEL_RUN_TYPE", "Kaggle"),
        ("KAGGLE_URL_BASE", "Kaggle"),
    ],
)
def test_runtime_platform_from_service_variables(monkeypatch, var, expected):
    monkeypatch.setenv(var, "x")
    assert devices.runtime_platform() == expected


def test_cpu_name_reads_model_name(monkeypatch):
    fake = "processor\t: 0\nvendor_id\t: Test\nmodel name\t: Fake CPU 9000 @ 3GHz\n"
    monkeypatch.setattr(cpu, "open", lambda *a, **k: io.StringIO(fake), raising=False)
    assert cpu.cpu_name() == "Fake CPU 9000 @ 3GHz"


def test_cpu_name_falls_back_to_platform(monkeypatch):
    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr(cpu, "open", no_proc, raising=False)
    monkeypatch.setattr(cpu.platform, "processor", lambda: "")
    monkeypatch.setattr(cpu.platform, "machine", lambda: "arm64")
    assert cpu.cpu_name() == "arm64"
    monkeypatch.setattr(cpu.platform, "processor", lambda: "i386")
    assert cpu.cpu_name() == "i386"


XEON_CPUINFO = ("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8481C\n"
                "flags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile\n\n"
                "processor\t: 1\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_fp16 amx_bf16 amx_tile\n")
EPYC_CPUINFO = "processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2 fma f16c\n"
GRAVITON_CPUINFO = "processor\t: 0\nBogoMIPS\t: 2100.00\nFeatures\t: fp asimd fphp asimdhp bf16 i8mm\n"


@pytest.mark.parametrize("cpuinfo, bfloat16, float16", [
    (XEON_CPUINFO, ["amx_bf16", "avx512_bf16"], ["avx512_fp16"]),
    (EPYC_CPUINFO, [], []),
    (GRAVITON_CPUINFO, ["bf16"], ["asimdhp"]),
])
def test_cpu_16bit_support_reads_the_flags(cpuinfo, bfloat16, float16):
    assert cpu.cpu_16bit_support(cpu.cpu_flags(cpuinfo)) == {"bfloat16": bfloat16, "float16": float16}


def test_cpu_flags_are_unknown_without_proc_cpuinfo(monkeypatch):
    def no_proc(*args, **kwargs):
        raise OSError("no /proc here")

    monkeypatch.setattr(cpu, "open", no_proc, raising=False)  # macOS, Windows
    assert cpu.cpu_flags() is None
    assert cpu.cpu_16bit_support(cpu.cpu_flags()) == {"bfloat16": None, "float16": None}
    assert cpu.cpu_flags("processor\t: 0\nmodel name\t: a CPU without a flags line\n") is None
    monkeypatch.setattr(cpu, "open", lambda *a, **k: io.StringIO(EPYC_CPUINFO), raising=False)
    assert cpu.cpu_flags() == {"fpu", "sse2", "avx2", "fma", "f16c"}


# ---------------------------------------------------------------------------- nvidia-smi


def test_nvidia_smi_without_driver(monkeypatch):
    monkeypatch.setattr(devices.shutil, "which", lambda name: None)

    def never(*args, **kwargs):
        raise AssertionError("nvidia-smi must not run when it is not installed")

    monkeypatch.setattr(devices.subprocess, "run", never)
    assert devices.nvidia_smi() == []


def test_nvidia_smi_parses_csv(monkeypatch):
    seen = {}

    def fake_run(cmd, **kwargs):
        seen["cmd"] = cmd
        stdout = "Tesla T4, 15360\nNVIDIA A100 , 40960 \n\n"
        return subprocess.CompletedProcess(cmd, 0, stdout=stdout)

    monkeypatch.setattr(devices.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(devices.subprocess, "run", fake_run)
    assert devices.nvidia_smi() == [["Tesla T4", "15360"], ["NVIDIA A100", "40960"]]
    assert seen["cmd"][0] == "nvidia-smi"
    assert "--query-gpu=name,memory.total" in seen["cmd"]
    devices.nvidia_smi("memory.total")
    assert "--query-gpu=memory.total" in seen["cmd"]


@pytest.mark.parametrize(
    "error",
    [
        subprocess.CalledProcessError(9, "nvidia-smi"),
        subprocess.TimeoutExpired("nvidia-smi", 20),
        OSError("exec format error"),
    ],
)
def test_nvidia_smi_failures_give_no_rows(monkeypatch, error):
    def failing(*args, **kwargs):
        raise error

    monkeypatch.setattr(devices.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(devices.subprocess, "run", failing)
    assert devices.nvidia_smi() == []


@pytest.mark.parametrize(
    "rows, index, expected",
    [
        ([["15360"]], 0, 15360),
        ([["15360"], ["40960.0"]], 1, 40960),
        ([], 0, None),
        ([["15360"]], 1, None),
        ([["[N/A]"]], 0, None),
    ],
)
def test_gpu_memory_mb(monkeypatch, rows, index, expected):
    monkeypatch.setattr(devices, "nvidia_smi", lambda query="": rows)
    assert devices.gpu_memory_mb(index) == expected


# ---------------------------------------------------------------------------- TPU


def test_tpu_hint_none_without_signs(monkeypatch):
    monkeypatch.setattr(devices.os.path, "exists", lambda path: False)
    assert devices.tpu_hint() is None


@pytest.mark.parametrize("var", ["TPU_NAME", "TPU_ACCELERATOR_TYPE", "COLAB_TPU_ADDR"])
def test_tpu_hint_from_variables(monkeypatch, var):
    monkeypatch.setenv(var, "v4-8")
    assert devices.tpu_hint() == f"{var}=v4-8"


def test_tpu_hint_from_device_file(monkeypatch):
    monkeypatch.setattr(devices.os.path, "exists", lambda path: path == "/dev/vfio/0")
    assert devices.tpu_hint() == "/dev/vfio/0 exists"


def kaggle_tpu_image(monkeypatch):
    """Kaggle's TPU image: TPU hardware, tensorflow-cpu, and JAX's libtpu (jax[tpu]), but no tensorflow-tpu."""
    from importlib import metadata

    monkeypatch.setenv("TPU_ACCELERATOR_TYPE", "v5litepod-8")
    installed = {"tensorflow-cpu": "2.20.0", "libtpu": "0.0.21"}

    def version(name):
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(metadata, "version", version)
    return installed


def test_tpu_runtime_missing_on_kaggles_tpu_image_points_to_chapters_5_and_9_and_installs_nothing(monkeypatch):
    kaggle_tpu_image(monkeypatch)
    message = devices.tpu_runtime_missing()
    assert "TPU seems attached (TPU_ACCELERATOR_TYPE=v5litepod-8)" in message
    assert "libtpu 0.0.21, JAX's" in message  # JAX's libtpu is no runtime for TF
    assert "so this notebook runs at fast sizes on the host CPU" in message
    assert ("Chapters 5 and 9 (05_tpu.ipynb and 09_bigger_than_one_device.ipynb, opened from their Open in Colab / "
            "Open in Kaggle badges: Keras on the JAX backend) are written for Colab's and Kaggle's TPU runtimes as "
            "they ship") in message
    assert "GPU runtime (Kaggle: Settings > Accelerator > GPU T4 x2" in message
    # TensorFlow's TPU build pins its own libtpu and would replace the one the runtime's JAX uses.
    assert "pip install" not in message and "pip uninstall" not in message


def test_tpu_runtime_missing_is_none_without_a_tpu_or_with_its_runtime(monkeypatch):
    assert devices.tpu_runtime_missing() is None  # no TPU here
    monkeypatch.setenv("TPU_NAME", "local")
    monkeypatch.setattr(devices, "tpu_build", lambda: "tensorflow-tpu 2.20.0")
    assert devices.tpu_runtime_missing() is None


def test_accelerator(monkeypatch, fake_gpus):
    fake_gpus(0)
    assert devices.accelerator() is None
    installed = kaggle_tpu_image(monkeypatch)
    assert devices.accelerator() is None  # a TPU this TensorFlow cannot use is no accelerator
    installed["tensorflow-tpu"] = "2.20.0"
    assert devices.accelerator() == "a TPU"
    fake_gpus(2)
    assert devices.accelerator() == "2 GPU(s)"


@pytest.mark.parametrize("value, says", [
    ("true", "GPU memory: taken as needed (TF_FORCE_GPU_ALLOW_GROWTH=true, which `import helpers` sets"),
    ("false", "GPU memory: most of each GPU's memory is taken at start (TF_FORCE_GPU_ALLOW_GROWTH=false)"),
    (None, "since TF_FORCE_GPU_ALLOW_GROWTH is not set"),
    ("yes", "TF_FORCE_GPU_ALLOW_GROWTH='yes' is neither"),
])
def test_gpu_memory_note_says_how_memory_is_taken_and_how_to_change_it(monkeypatch, fake_gpus, value, says):
    fake_gpus(0)
    assert devices.gpu_memory_note() is None  # nothing to say without a GPU
    fake_gpus(1)
    if value is None:
        monkeypatch.delenv("TF_FORCE_GPU_ALLOW_GROWTH", raising=False)
    else:
        monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", value)
    note = devices.gpu_memory_note()
    assert says in note and "restart the runtime" in note and "above the setup cell" in note


def test_setup_prints_the_gpu_memory_line_on_a_gpu_runtime(monkeypatch, capsys, fake_gpus):
    import helpers

    fake_gpus(1)
    monkeypatch.setenv("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    monkeypatch.setattr(devices, "split_device", lambda n: tf.config.list_logical_devices("CPU")[:n])
    helpers.setup(fast="fast", devices=1)
    assert "GPU memory: taken as needed" in capsys.readouterr().out


def test_setup_on_kaggles_tpu_image_runs_fast_on_the_cpu_and_points_to_chapters_5_and_9(monkeypatch, capsys):
    import helpers

    kaggle_tpu_image(monkeypatch)
    monkeypatch.delenv("COURSE_FAST", raising=False)
    course = helpers.setup(devices=1)
    assert course.fast is True  # never full-size ResNet50 on a host CPU
    out = capsys.readouterr().out
    assert "No GPU or TPU" not in out  # one message: the TPU is there, TensorFlow cannot use it yet
    assert "so this notebook runs at fast sizes on the host CPU. Chapters 5 and 9 (05_tpu.ipynb and " in out
    assert "pip install" not in out


def test_setup_with_a_gpu_in_auto_mode_runs_full_size(monkeypatch, fake_gpus):
    import helpers

    monkeypatch.delenv("COURSE_FAST", raising=False)
    monkeypatch.setattr(devices, "accelerator", lambda: "1 GPU(s)")
    monkeypatch.setattr(devices, "split_device", lambda n: tf.config.list_logical_devices("CPU")[:n])
    assert helpers.setup(devices=1, verbose=False).fast is False


def test_tpu_build_reads_installed_packages(monkeypatch):
    from importlib import metadata

    installed = {"libtpu": "0.0.21"}

    def version(name):
        if name not in installed:
            raise metadata.PackageNotFoundError(name)
        return installed[name]

    monkeypatch.setattr(metadata, "version", version)
    assert devices.tpu_build() == "libtpu 0.0.21, JAX's"
    installed["tensorflow-tpu"] = "2.20.0"
    assert devices.tpu_build() == "tensorflow-tpu 2.20.0"
    installed.clear()
    assert devices.tpu_build() is None


# ---------------------------------------------------------------------------- describe_runtime


def rows_of(table: Table) -> dict:
    return {what: value for what, value in table.rows}


def test_describe_runtime_rows():
    table = devices.describe_runtime()
    assert isinstance(table, Table)
    assert table.columns == ["what", "this runtime"]
    rows = rows_of(table)
    assert list(rows) == ["platform", "CPU", "GPU", "TPU", "TensorFlow", "Keras", "logical devices"]
    assert rows["platform"] == "local"
    assert rows["CPU"].endswith(f"({os.cpu_count()} cores visible)")
    assert rows["GPU"] == "none"
    assert rows["TPU"] == "none"
    from importlib.metadata import version

    assert rows["TensorFlow"] == f"{version('tensorflow-cpu')} (built with CUDA: False)"  # the CPU build installed here
    assert rows["Keras"] == version("keras")
    assert "/device:CPU:0" in rows["logical devices"]


def test_describe_runtime_on_colab_with_tpu_hint(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-20250101")
    monkeypatch.setenv("TPU_NAME", "local")
    rows = rows_of(devices.describe_runtime())
    assert rows["platform"] == "Colab"
    assert rows["TPU"] == "maybe (TPU_NAME=local); connect with choose_strategy()"


def test_describe_runtime_lists_each_gpu(monkeypatch, fake_gpus):
    fake_gpus(2)
    details = {
        "/physical_device:GPU:0": {"device_name": "Tesla T4", "compute_capability": (7, 5)},
        "/physical_device:GPU:1": {},
    }
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda gpu: details[gpu.name])
    monkeypatch.setattr(devices, "nvidia_smi", lambda query="": [["Tesla T4", "15360"]])
    rows = rows_of(devices.describe_runtime())
    assert rows["GPU 0"] == "Tesla T4, 15360 MiB, compute capability 7.5"
    assert rows["GPU 1"] == "/physical_device:GPU:1"
    assert "GPU" not in rows


# ---------------------------------------------------------------------------- split_device


@pytest.mark.parametrize("bad", [0, 17, True, 2.0, "2"])
def test_split_device_validates_n(bad):
    with pytest.raises(CourseError, match="whole number from 1 to 16"):
        devices.split_device(bad)


def test_split_device_error_names_split_device():
    with pytest.raises(CourseError, match=r"split_device\(0\)"):
        devices.split_device(0)


def test_split_device_same_count_is_harmless_in_process():
    tf.constant(1.0)  # the runtime is initialised
    assert [d.name for d in devices.split_device(1)] == ["/device:CPU:0"]


def test_split_device_after_initialisation_asks_for_restart():
    tf.constant(1.0)  # the runtime is initialised, with one logical CPU device
    with pytest.raises(CourseError) as info:
        devices.split_device(3)
    message = str(info.value)
    assert message.startswith("split_device(3): this runtime already has 1 logical CPU device(s).")
    assert "Restart the runtime" in message
    assert "TensorFlow said:" in message
    assert len(tf.config.list_logical_devices("CPU")) == 1


def test_split_device_cpu_configuration(fake_gpus):
    fake_gpus(0)
    devices.split_device(4)
    [(device, config)] = fake_gpus.calls["logical"]
    assert device.device_type == "CPU"
    assert len(config) == 4
    assert all(c.memory_limit is None for c in config)


@pytest.mark.parametrize(
    "smi_rows, expected",
    [
        ([["16000"]], int(16000 * 0.85) // 2),
        ([], int(8192 * 0.85) // 2),  # unknown memory: assume 8 GiB
        ([["300"]], 256),  # never below 256 MiB
    ],
)
def test_split_device_one_gpu_shares_memory(monkeypatch, fake_gpus, smi_rows, expected):
    [gpu] = fake_gpus(1)
    # The free memory counts, not the card's total: the kernel may already hold part of it.
    monkeypatch.setattr(devices, "nvidia_smi",
                        lambda query="": smi_rows if query == "memory.free" else [["99999"]])
    result = devices.split_device(2)
    assert [d.name for d in result] == ["/device:GPU:0", "/device:GPU:1"]
    [(device, config)] = fake_gpus.calls["logical"]
    assert device is gpu
    assert [c.memory_limit for c in config] == [expected, expected]


def test_split_device_several_gpus_are_not_split(fake_gpus):
    fake_gpus(2)
    assert [d.name for d in devices.split_device(2)] == ["/device:GPU:0", "/device:GPU:1"]
    assert fake_gpus.calls["logical"] == []


def test_split_device_gpu_after_initialisation_asks_for_restart(monkeypatch, fake_gpus):
    fake_gpus(1, fail_with=RuntimeError("Virtual devices cannot be modified"))
    monkeypatch.setattr(devices, "nvidia_smi", lambda query="": [])
    with pytest.raises(CourseError, match=r"split_device\(2\): this runtime already has 1 logical "
                                          r"GPU device\(s\)\. TensorFlow has already initialised"):
        devices.split_device(2)


SPLIT_SCRIPT = """
import contextlib, io, json
import helpers
from helpers import devices, strategies
import tensorflow as tf
out = {}
course = helpers.setup(verbose=False)                  # COURSE_DEVICES=2 from the environment
out["course"] = [course.fast, course.devices, list(course.logical_devices)]
out["again"] = [d.name for d in devices.split_device(2)]  # same split: harmless
for n in (3, 1):
    try:
        devices.split_device(n)
        out[f"split{n}"] = "no error"
    except helpers.CourseError as err:
        out[f"split{n}"] = str(err)
printed = io.StringIO()
with contextlib.redirect_stdout(printed):
    strategy = strategies.choose_strategy()
out["printed"] = printed.getvalue()
out["strategy"] = [type(strategy).__name__, strategy.num_replicas_in_sync]
total = strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
out["sum"] = float(total)
print(json.dumps(out))
"""


def test_split_device_in_fresh_runtime():
    out = run_python(SPLIT_SCRIPT, COURSE_DEVICES="2", COURSE_FAST="1")
    cpus = ["/device:CPU:0", "/device:CPU:1"]
    assert out["course"] == [True, 2, cpus]
    assert out["again"] == cpus
    for n in (3, 1):
        assert out[f"split{n}"].startswith(
            f"split_device({n}): this runtime already has 2 logical CPU device(s). "
        )
        assert "Restart the runtime" in out[f"split{n}"]
    assert out["strategy"] == ["MirroredStrategy", 2]
    assert out["printed"].startswith("Strategy: MirroredStrategy over 2 replica(s) with "
                                     "ReductionToOneDevice (2 logical CPU devices")
    assert out["sum"] == 2.0
