"""What this runtime has (platform, CPU, GPUs, TPU), GPU memory settings and logical devices. The distribution
strategy to use over them is helpers/strategies.py's."""

from __future__ import annotations

import os
import shutil
import subprocess

import tensorflow as tf

from helpers.cpu import cpu_name
from helpers.errors import CourseError, check_devices
from helpers.tables import Table
from helpers.versions import TPU_ROUTE

RESTART = (
    "TensorFlow has already initialised its devices in this runtime, and they cannot change now. "
    "Restart the runtime (Colab: Runtime > Restart session; Jupyter: Kernel > Restart) and run "
    "the notebook from the top: the setup cell must run before anything creates a tensor."
)


def runtime_platform() -> str:
    """'Colab', 'Kaggle' or 'local', from the variables those services set."""
    if "COLAB_RELEASE_TAG" in os.environ or "COLAB_GPU" in os.environ:
        return "Colab"
    if "KAGGLE_KERNEL_RUN_TYPE" in os.environ or "KAGGLE_URL_BASE" in os.environ:
        return "Kaggle"
    return "local"


def nvidia_smi(query: str = "name,memory.total") -> list[list[str]]:
    """Rows from `nvidia-smi --query-gpu`, or [] where there is no NVIDIA driver."""
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20, check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [[cell.strip() for cell in line.split(",")] for line in out.strip().splitlines() if line]


def tpu_hint() -> str | None:
    """Why we think a TPU may be attached (its variables or device files), else None."""
    for name in ("TPU_NAME", "TPU_ACCELERATOR_TYPE", "COLAB_TPU_ADDR"):
        if os.environ.get(name):
            return f"{name}={os.environ[name]}"
    for path in ("/dev/accel0", "/dev/vfio/0"):
        if os.path.exists(path):
            return f"{path} exists"
    return None


def describe_runtime() -> Table:
    """A small table of what this runtime has: where it runs, CPU, GPUs, TPU, versions, devices."""
    import keras

    rows = [
        ("platform", runtime_platform()),
        ("CPU", f"{cpu_name()} ({os.cpu_count()} cores visible)"),
    ]
    smi = nvidia_smi()
    gpus = tf.config.list_physical_devices("GPU")
    for i, gpu in enumerate(gpus):
        details = tf.config.experimental.get_device_details(gpu)
        name = details.get("device_name", gpu.name)
        memory = f", {smi[i][1]} MiB" if i < len(smi) and len(smi[i]) > 1 else ""
        cc = details.get("compute_capability")
        cc_text = f", compute capability {cc[0]}.{cc[1]}" if cc else ""
        rows.append((f"GPU {i}", f"{name}{memory}{cc_text}"))
    if not gpus:
        rows.append(("GPU", "none"))
    hint = tpu_hint()
    rows.append(("TPU", f"maybe ({hint}); connect with choose_strategy()" if hint else "none"))
    rows.append(("TensorFlow", f"{tf.__version__} (built with CUDA: {tf.test.is_built_with_cuda()})"))
    rows.append(("Keras", keras.__version__))
    logical = tf.config.list_logical_devices()
    rows.append(("logical devices", ", ".join(d.name for d in logical)))
    return Table(["what", "this runtime"], rows, title="Runtime")


def gpu_memory_mb(index: int = 0, query: str = "memory.total") -> int | None:
    rows = nvidia_smi(query)
    try:
        return int(float(rows[index][0]))
    except (IndexError, ValueError):
        return None


def split_device(n: int):
    """Split the one GPU (or, without a GPU, the CPU) into `n` logical devices; return them.

    With several real GPUs nothing is split: they already are several devices. Running it again
    with the same `n` is harmless; a different `n` after TensorFlow initialised needs a restart.
    """
    check_devices(n, call="split_device(")
    gpus = tf.config.get_visible_devices("GPU")
    if len(gpus) > 1:
        return tf.config.list_logical_devices("GPU")
    kind, device = ("GPU", gpus[0]) if gpus else ("CPU", tf.config.list_physical_devices("CPU")[0])
    current = tf.config.get_logical_device_configuration(device)
    if len(current or [None]) == n:
        return tf.config.list_logical_devices(kind)
    if kind == "GPU":
        # From the memory still free: another process (the notebook's kernel, beside a benchmark it
        # started) may already hold part of the card.
        free = gpu_memory_mb(query="memory.free") or 8192
        each = max(256, int(free * 0.85) // n)
        config = [tf.config.LogicalDeviceConfiguration(memory_limit=each) for _ in range(n)]
    else:
        config = [tf.config.LogicalDeviceConfiguration() for _ in range(n)]
    try:
        tf.config.set_logical_device_configuration(device, config)
    except RuntimeError as err:
        have = len(current or [None])
        raise CourseError(
            f"split_device({n}): this runtime already has {have} logical {kind} device(s). {RESTART} "
            f"(TensorFlow said: {err})"
        ) from None
    return tf.config.list_logical_devices(kind)


TPU_PACKAGES = ("tensorflow-tpu", "libtpu", "libtpu-nightly")


def tpu_build() -> str | None:
    """The installed package that gives TensorFlow its TPU runtime, or None (a CPU/GPU-only build)."""
    from importlib import metadata

    for name in TPU_PACKAGES:
        try:
            found = f"{name} {metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
        # A bare libtpu is JAX's (Colab's and Kaggle's TPU images ship it for JAX), not TensorFlow's.
        return found if name == "tensorflow-tpu" else f"{found}, JAX's"
    return None


def tensorflow_can_use_tpu() -> bool:
    """True where TensorFlow's own TPU build is installed. A bare libtpu does not count: Colab's and Kaggle's
    TPU images ship it for JAX (Kaggle's beside tensorflow-cpu), and TensorFlow cannot use a TPU through it."""
    return (tpu_build() or "").startswith("tensorflow-tpu ")


def tpu_runtime_missing() -> str | None:
    """What to do when a TPU is attached but this TensorFlow cannot use it (Kaggle's TPU image ships
    tensorflow-cpu), else None. It names no install: TensorFlow's TPU build would replace the runtime's libtpu."""
    hint = tpu_hint()
    if hint is None or tensorflow_can_use_tpu():
        return None
    found = tpu_build()
    return (f"A TPU seems attached ({hint}), but TensorFlow {tf.__version__} here cannot use it (no tensorflow-tpu "
            f"package{'; ' + found if found else ''}), so this notebook runs at fast sizes on the host CPU. "
            f"{TPU_ROUTE} For this notebook at full size, pick a GPU runtime (Kaggle: Settings > Accelerator > GPU T4 "
            "x2; Colab: Runtime > Change runtime type > T4 GPU).")


def gpu_memory_note() -> str | None:
    """On a GPU runtime, one line saying how TensorFlow takes GPU memory here and how to change it; else None.
    TensorFlow reads TF_FORCE_GPU_ALLOW_GROWTH ("true" or "false") when it creates each GPU's memory allocator, and
    it overrides tf.config.experimental.set_memory_growth (gpu_bfc_allocator.cc: "Overriding allow_growth
    setting because the TF_FORCE_GPU_ALLOW_GROWTH environment variable is set")."""
    if not tf.config.list_physical_devices("GPU"):
        return None
    value = os.environ.get("TF_FORCE_GPU_ALLOW_GROWTH")
    change = ("to change it, restart the runtime and set os.environ[\"TF_FORCE_GPU_ALLOW_GROWTH\"] in a new cell above "
              "the setup cell")
    if value == "true":
        return ("GPU memory: taken as needed (TF_FORCE_GPU_ALLOW_GROWTH=true, which `import helpers` sets unless it "
                f"is set already; \"false\" takes most of each GPU's memory at start); {change}.")
    if value == "false":
        return f"GPU memory: most of each GPU's memory is taken at start (TF_FORCE_GPU_ALLOW_GROWTH=false); {change}."
    setting = ("TF_FORCE_GPU_ALLOW_GROWTH is not set" if value is None else
               f"TF_FORCE_GPU_ALLOW_GROWTH={value!r} is neither \"true\" nor \"false\"")
    return ("GPU memory: as tf.config.experimental.set_memory_growth says (default: most of each GPU's memory at "
            f"start), since {setting}; {change}.")


def accelerator() -> str | None:
    """The GPUs or the usable TPU this runtime has, in words, or None (CPU only, or a TPU without runtime)."""
    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        return f"{len(gpus)} GPU(s)"
    if tpu_hint() and tensorflow_can_use_tpu():
        return "a TPU"
    return None
