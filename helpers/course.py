"""One call that prepares a notebook: modes from the environment, Keras's backend, logical devices, quiet logs,
seeds."""

from __future__ import annotations

import os
import random
import sys
from dataclasses import dataclass

from helpers.errors import CourseError, check_devices, flag_from_env, int_from_env, whole_number
from helpers.quiet import quiet_logs, use_up_one_time_cpu_notices
from helpers.versions import check_jax_versions, check_versions, versions_line


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


FAST_CHOICES = {None: None, "auto": None, True: True, "fast": True, False: False, "full": False}
SWITCH_RUNTIME = ("Colab: Runtime > Change runtime type > T4 GPU; Kaggle: Settings > Accelerator > GPU T4 x2")


def check_release(version: str | None) -> None:
    """The helpers this runtime imported are the release the setup cell installed: a kernel that imported another
    version before keeps using it until it restarts (pip replaces the files, not the modules already loaded)."""
    imported = sys.modules["helpers"].__version__  # the package, always imported before its modules
    if version is not None and version != imported:
        raise CourseError(f"setup(version={version!r}): this runtime imported the course's helpers {imported} "
                          f"before the setup cell installed {version}. Restart it (Colab: Runtime > Restart "
                          "session; Jupyter: Kernel > Restart), then run all.")


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
                          "(the backend argument in the setup cell).")
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
          backend: str | None = None, version: str | None = None) -> Course:
    """Prepare a notebook. fast: "auto" (None), "fast" (True) or "full" (False), see choose_fast();
    devices overrides COURSE_DEVICES; backend: "tensorflow" (None) or "jax", Keras's backend, set before Keras is
    imported; version: the course release the setup cell installed (these helpers must be it).

    TensorFlow: splits the GPU (or, without one, the CPU) into `devices` logical devices, which must happen before
    TensorFlow initialises. JAX: imports neither Keras nor JAX (see _setup_jax): the notebook sets KERAS_BACKEND and
    JAX's number of CPU devices itself, in a cell the learner sees. Running the same setup twice is harmless.
    """
    check_release(version)
    check_fast(fast)
    devices = check_devices(int_from_env("COURSE_DEVICES", 1) if devices is None else devices)
    whole_number("setup(seed=", seed, 0)
    if choose_backend(backend) == "jax":
        return _setup_jax(fast, devices, seed, verbose)
    check_versions()  # before anything imports TensorFlow: a TPU runtime without it is pointed to chapters 5 and 9
    import helpers.devices as device_tools

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
        # With a TPU attached, its own message says why the CPU and where the TPU works, not "no GPU or TPU".
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
