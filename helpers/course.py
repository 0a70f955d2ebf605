"""One call that prepares a notebook: modes from the environment, logical devices, quiet logs, seeds."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import sys
import warnings
from dataclasses import dataclass

from helpers.errors import CourseError  # noqa: F401  (re-exported: helpers.course.CourseError)

# The versions CI runs every notebook on: a replica of Colab's runtime (tools/platforms/colab.txt, the oldest)
# and the newest releases (pyproject.toml's [cpu] extra). tests/test_env_files.py checks both files agree.
# Two combinations, by position: Colab's first, the newest releases second.
TESTED = {"TensorFlow": ("2.20.0", "2.21.0"), "Keras": ("3.13.2", "3.15.1"), "Python": ("3.13", "3.11")}
MIN_TF = (2, 20)  # the floors are the oldest tested versions, not older ones nobody ran
MIN_KERAS = (3, 13)
MAX_DEVICES = 16
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Course:
    """What `setup()` decided; notebooks read their sizes from it."""

    fast: bool
    devices: int
    logical_devices: tuple[str, ...]

    def pick(self, *, full, fast):
        """`full` normally, `fast` in fast mode: `EPOCHS = course.pick(full=10, fast=2)`."""
        return fast if self.fast else full

    def __str__(self) -> str:
        mode = "ON (small data, few epochs)" if self.fast else "off (full size)"
        count = len(self.logical_devices)
        return f"fast mode {mode}; {count} logical device{'s' * (count != 1)}: " + ", ".join(self.logical_devices)


def flag_from_env(name: str, default: bool = False) -> bool:
    """Read a yes/no environment variable strictly, so a typo does not silently mean 'no'."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise CourseError(f"{name}={raw!r} is not a yes/no value: use {name}=1 or {name}=0.")


def int_from_env(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise CourseError(f"{name}={raw!r} is not a whole number: use e.g. {name}=2.") from None


def whole_number(call: str, value, minimum: int = 1, maximum: int | None = None, hint: str = "") -> int:
    """`value` if it is an int (not a bool) from `minimum` to `maximum`, else a CourseError that names the call,
    e.g. whole_number("make_dataset(batch_size=", 0) -> "make_dataset(batch_size=0): use a whole number >= 1."."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (maximum is not None
                                                                                    and value > maximum):
        allowed = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
        raise CourseError(f"{call}{value!r}): use a whole number {allowed}{hint}.")
    return value


def check_devices(devices, call: str = "setup(devices=") -> int:
    return whole_number(call, devices, 1, MAX_DEVICES, hint=" logical devices (COURSE_DEVICES sets it too)")


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


NEWEST_TF_TPU = "2.20.0"  # the newest tensorflow-tpu release (checked November 2026); there is no 2.21
# Colab's own instruction (googlecolab/colabtools#5164) names this index for the matching libtpu.
TPU_INSTALL = (f"pip install tensorflow-tpu=={NEWEST_TF_TPU} "
               "-f https://storage.googleapis.com/libtpu-tf-releases/index.html")


def tpu_install_command() -> str:
    """The exact command that gives this runtime TensorFlow's TPU build. Kaggle's TPU image ships
    tensorflow-cpu, whose files the TPU build would overwrite half-way: it must go first."""
    from importlib import metadata

    try:
        metadata.version("tensorflow-cpu")
    except metadata.PackageNotFoundError:
        return TPU_INSTALL
    return f"pip uninstall -y tensorflow-cpu && {TPU_INSTALL}"


def versions_line() -> str:
    """What this runtime has, beside the combinations the course was tested with."""
    import platform

    import keras
    import tensorflow as tf

    found = {"TensorFlow": tf.__version__, "Keras": keras.__version__, "Python": platform.python_version()}
    tested = [" + ".join(f"{name} {TESTED[name][i]}" for name in TESTED) for i in range(2)]
    return (f"Versions: {' + '.join(f'{name} {version}' for name, version in found.items())} "
            f"(tested: {tested[0]} as on Colab, and {tested[1]})")


@contextlib.contextmanager
def native_stderr_silenced(silence: bool = True):
    """Point the process's stderr file descriptor (2) at /dev/null inside the block. What C++ code writes there lands
    under Python's sys.stderr, in a notebook's output; Python's own warnings and errors are not affected there."""
    if not silence:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def import_tensorflow_quietly():
    """Import TensorFlow without the lines its C++ code logs during the import whatever TF_CPP_MIN_LOG_LEVEL says
    (before absl's logging is initialised every level goes to stderr: TensorFlow 2.21's "oneDNN custom operations
    are on" notice, on CPUs where oneDNN is on). TF_CPP_MIN_LOG_LEVEL=0 or 1 keeps them."""
    quiet = "tensorflow" not in sys.modules and os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") not in ("0", "1")
    with native_stderr_silenced(quiet):
        import tensorflow
    return tensorflow


def use_up_one_time_cpu_notices() -> None:
    """On CPUs where TensorFlow's oneDNN is on but lacks float16 support, the first float16 op on the CPU logs "oneDNN
    supports DT_HALF only on platforms with AVX-512. Falling back to the default Eigen-based implementation", once per
    process, as an error (in red; TF_CPP_MIN_LOG_LEVEL=2 keeps errors). It says nothing a chapter needs (chapter 3
    measures float16 on the CPU instead), so one tiny float16 product here, with native stderr silenced, uses it up.
    TF_CPP_MIN_LOG_LEVEL=0 or 1 keeps it."""
    import tensorflow as tf

    with native_stderr_silenced(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") not in ("0", "1")), tf.device("/CPU:0"):
        ones = tf.ones((2, 2), tf.float16)
        _ = (ones @ ones).numpy()


def check_versions() -> None:
    """Fail early, with the fix, on a runtime too old for the course (Keras 2 APIs differ)."""
    try:
        tf = import_tensorflow_quietly()
        import keras
    except ImportError as err:
        raise CourseError(
            f"TensorFlow is not installed ({err}). Locally run `make setup`. Colab and Kaggle TPU runtimes "
            f"no longer ship it: run `{TPU_INSTALL}` and restart the runtime, or pick a CPU/GPU runtime."
        ) from None
    if _version_tuple(tf.__version__) < MIN_TF or _version_tuple(keras.__version__) < MIN_KERAS:
        raise CourseError(
            f"This course needs TensorFlow >= {'.'.join(map(str, MIN_TF))} and Keras >= "
            f"{'.'.join(map(str, MIN_KERAS))} (the oldest versions it is tested on); this runtime has TensorFlow "
            f"{tf.__version__} and Keras {keras.__version__}. Run `pip install -U tensorflow keras` "
            "(on Colab/Kaggle pick a newer runtime), then restart the runtime."
        )


def missing_requirements(requirements) -> list[str]:
    """Those of `requirements` ("name==1.2", "name>=1.0") not installed at a version they accept."""
    from importlib import metadata

    from packaging.requirements import Requirement

    missing = []
    for text in requirements:
        requirement = Requirement(text)
        try:
            found = metadata.version(requirement.name)
        except metadata.PackageNotFoundError:
            found = None
        if found is None or not requirement.specifier.contains(found, prereleases=True):
            missing.append(text)
    return missing


def ensure_installed(requirements, why: str) -> None:
    """pip-install what of `requirements` is missing (a chapter's extra packages), saying what and why."""
    import importlib
    import subprocess
    import sys

    missing = missing_requirements(requirements)
    if not missing:
        print(f"Already installed: {', '.join(requirements)} ({why}).")
        return
    print(f"Installing {' '.join(missing)} ({why}) ...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *missing], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    if pip.returncode:
        last = "\n".join((pip.stdout + pip.stderr).strip().splitlines()[-8:])
        raise CourseError(f"pip could not install {' '.join(missing)}:\n{last}\nTurn internet access on (Kaggle: "
                          f"Settings > Internet) and run this cell again, or run `pip install {' '.join(missing)}` "
                          "yourself.")
    importlib.invalidate_caches()
    print("Installed.")


def quiet_logs() -> None:
    """Keep notebook output to what the lesson prints: no INFO lines, no absl warnings."""
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    logging.getLogger("absl").setLevel(logging.ERROR)
    # fit(dataset) warns that its default shuffle=True is ignored: the dataset shuffles itself.
    warnings.filterwarnings("ignore", message="`shuffle=True` was passed")


FAST_CHOICES = {None: None, "auto": None, True: True, "fast": True, False: False, "full": False}
SWITCH_RUNTIME = ("Colab: Runtime > Change runtime type > T4 GPU; Kaggle: Settings > Accelerator > GPU T4 x2")


def check_fast(requested) -> None:
    if not (requested is None or isinstance(requested, bool) or requested in ("auto", "fast", "full")):
        raise CourseError(f"setup(fast={requested!r}): use \"auto\" (or None), \"fast\" (or True) or "
                          "\"full\" (or False).")


def choose_fast(requested, accelerator: str | None) -> tuple[bool, str | None]:
    """Fast or full mode, and a note for the learner (or None).

    requested: True/"fast" or False/"full" decide; None/"auto" reads COURSE_FAST and, when that is unset,
    means full size with an accelerator and fast sizes without one, so that a CPU runtime never starts
    an hours-long full run by accident. accelerator: what `helpers.devices.accelerator()` found.
    """
    check_fast(requested)
    fast = FAST_CHOICES[requested]
    if fast is None and os.environ.get("COURSE_FAST") is not None:
        fast = flag_from_env("COURSE_FAST")
    if fast is None:
        if accelerator:
            return False, None
        return True, ("No GPU or TPU in this runtime, so this notebook runs at fast sizes (small data, few "
                      f"epochs). For full size, switch to a GPU runtime ({SWITCH_RUNTIME}) and run all "
                      "again, or set FAST = \"full\" in the parameters cell to run full size on this CPU "
                      "(see the header for how long that takes).")
    if not fast and not accelerator:
        return False, ("Full mode on a CPU only: this takes the header's full-mode time or longer. Set "
                       "FAST = \"fast\" for a quick run, or switch to a GPU runtime "
                       f"({SWITCH_RUNTIME}).")
    return fast, None


BACKENDS = ("tensorflow", "jax")


def choose_backend(backend) -> str:
    """Set Keras's backend before Keras is imported (KERAS_BACKEND is read at the first `import keras`)."""
    backend = "tensorflow" if backend is None else backend
    if backend not in BACKENDS:
        raise CourseError(f"setup(backend={backend!r}): use one of {', '.join(map(repr, BACKENDS))} "
                          "(BACKEND in the parameters cell).")
    keras = sys.modules.get("keras")
    if keras is not None and keras.backend.backend() != backend:
        # keras.config.set_backend() reloads Keras, but its docstring warns that every Keras object made before
        # (layers, tensors, models, functions that use them) stops working: a restart is the safe switch.
        raise CourseError(f"setup(backend={backend!r}): Keras was already imported with the "
                          f"{keras.backend.backend()!r} backend. Switching in a running Python "
                          "(keras.config.set_backend) leaves every Keras object made before unusable. Restart the "
                          "runtime (Colab: Runtime > Restart session; Jupyter: Kernel > Restart) and run all again, "
                          "with no `import keras` before the setup cell.")
    os.environ["KERAS_BACKEND"] = backend
    return backend


def check_jax_versions() -> tuple[str, str]:
    """The installed Keras and JAX versions, read without importing either (importing Keras fixes its backend)."""
    from importlib import metadata

    try:
        keras_version, jax_version = metadata.version("keras"), metadata.version("jax")
    except metadata.PackageNotFoundError as err:
        raise CourseError(f"{err.name} is not installed: locally `make setup`; on Colab and Kaggle JAX and Keras are "
                          "preinstalled (use a recent runtime).") from None
    if _version_tuple(keras_version) < MIN_KERAS:
        raise CourseError(f"This course needs Keras >= {'.'.join(map(str, MIN_KERAS))}; this runtime has Keras "
                          f"{keras_version} (JAX {jax_version}). Run `pip install -U keras`, then restart.")
    return keras_version, jax_version


def accelerator_without_starting_jax() -> str | None:
    """A GPU or TPU for JAX, seen from the runtime's device files and variables (the signs helpers.devices.tpu_hint
    reads) without starting JAX: starting it would fix its number of CPU devices before the notebook sets it."""
    import glob

    if glob.glob("/dev/nvidia[0-9]*"):
        return "a GPU"
    if (any(os.environ.get(name) for name in ("TPU_NAME", "TPU_ACCELERATOR_TYPE", "COLAB_TPU_ADDR"))
            or any(os.path.exists(path) for path in ("/dev/accel0", "/dev/vfio/0"))):
        return "a TPU"
    return None


def setup(fast=None, devices: int | None = None, seed: int = 42, verbose: bool = True,
          backend: str | None = None) -> Course:
    """Prepare a notebook. fast: "auto" (None), "fast" (True) or "full" (False), see choose_fast();
    devices overrides COURSE_DEVICES; backend: "tensorflow" (None) or "jax", Keras's backend, set before Keras is
    imported.

    TensorFlow: splits the GPU (or, without one, the CPU) into `devices` logical devices, which must happen before
    TensorFlow initialises. JAX: imports neither Keras nor JAX (see _setup_jax): the notebook sets KERAS_BACKEND and
    JAX's number of CPU devices itself, in a cell the learner sees. Running the same setup twice is harmless.
    """
    check_fast(fast)
    devices = check_devices(int_from_env("COURSE_DEVICES", 1) if devices is None else devices)
    whole_number("setup(seed=", seed, 0)
    if choose_backend(backend) == "jax":
        return _setup_jax(fast, devices, seed, verbose)
    check_versions()  # before anything imports TensorFlow: a TPU runtime without it gets the install command
    from helpers import devices as device_tools

    quiet_logs()
    tpu_missing = device_tools.tpu_runtime_missing()
    fast, note = choose_fast(fast, device_tools.accelerator())
    logical = device_tools.split_device(devices)
    use_up_one_time_cpu_notices()  # after the split: running an op initialises TensorFlow's devices
    import keras

    keras.utils.set_random_seed(seed)
    course = Course(fast=fast, devices=devices, logical_devices=tuple(d.name for d in logical))
    if verbose:
        print(f"Course setup: {course}")
        print(versions_line())
        memory = device_tools.gpu_memory_note()  # None without a GPU
        if memory:
            print(memory)
        # With a TPU attached, its own message says why the CPU and what to install, instead of "no GPU or TPU".
        message = tpu_missing if tpu_missing and fast else note
        if message:
            print(message)
    return course


def _setup_jax(fast, devices: int, seed: int, verbose: bool) -> Course:
    """The JAX backend: check the versions and choose the mode without importing Keras or starting JAX, so that the
    notebook's next cell can still set KERAS_BACKEND and XLA_FLAGS itself (Keras reads the first at its first import,
    JAX the second when it starts its devices). `logical_devices` stays empty: JAX has not started."""
    keras_version, jax_version = check_jax_versions()
    # Not even TensorFlow: importing it imports Keras (TensorFlow 2.21's __init__ loads keras.src.optimizers), which
    # would fix Keras's backend before the notebook sets it.
    import numpy

    random.seed(seed)  # Keras's own: keras.utils.set_random_seed(...) once the notebook has imported Keras
    numpy.random.seed(seed)
    fast, note = choose_fast(fast, accelerator_without_starting_jax())
    course = Course(fast=fast, devices=devices, logical_devices=())
    if verbose:
        mode = "ON (small data, few epochs)" if fast else "off (full size)"
        print(f"Course setup: fast mode {mode}; Keras and JAX are imported by the notebook, after it sets "
              "KERAS_BACKEND and XLA_FLAGS")
        print(f"Versions: Keras {keras_version} on JAX {jax_version} (backend {os.environ['KERAS_BACKEND']}), "
              f"Python {sys.version.split()[0]}")
        if note:
            print(note)
    return course
