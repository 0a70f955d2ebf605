"""One call that prepares a notebook: modes from the environment, logical devices, quiet logs, seeds."""

from __future__ import annotations

import logging
import os
import warnings
from dataclasses import dataclass

MIN_TF = (2, 16)  # the first release whose tf.keras is Keras 3
MIN_KERAS = (3, 0)
MAX_DEVICES = 16
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class CourseError(Exception):
    """A mistake the learner can fix; the message says which call, what was wrong and what to do."""


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
        return f"fast mode {mode}; {len(self.logical_devices)} logical devices: " + ", ".join(
            self.logical_devices
        )


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


def check_devices(devices, call: str = "setup(devices=") -> int:
    if isinstance(devices, bool) or not isinstance(devices, int) or not 1 <= devices <= MAX_DEVICES:
        raise CourseError(
            f"{call}{devices!r}): the number of logical devices must be a whole number "
            f"from 1 to {MAX_DEVICES} (COURSE_DEVICES sets it too)."
        )
    return devices


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


NEWEST_TF_TPU = "2.20.0"  # the newest tensorflow-tpu release (checked November 2026); there is no 2.21
# Colab's own instruction (googlecolab/colabtools#5164) names this index for the matching libtpu.
TPU_INSTALL = (f"pip install tensorflow-tpu=={NEWEST_TF_TPU} "
               "-f https://storage.googleapis.com/libtpu-tf-releases/index.html")


def check_versions() -> None:
    """Fail early, with the fix, on a runtime too old for the course (Keras 2 APIs differ)."""
    try:
        import keras
        import tensorflow as tf
    except ImportError as err:
        raise CourseError(
            f"TensorFlow is not installed ({err}). Locally run `make setup`. Colab and Kaggle TPU runtimes "
            f"no longer ship it: run `{TPU_INSTALL}` and restart the runtime, or pick a CPU/GPU runtime."
        ) from None
    if _version_tuple(tf.__version__) < MIN_TF or _version_tuple(keras.__version__) < MIN_KERAS:
        raise CourseError(
            f"This course needs TensorFlow >= 2.16 with Keras 3; this runtime has TensorFlow "
            f"{tf.__version__} and Keras {keras.__version__}. Run `pip install -U tensorflow` "
            "(on Colab/Kaggle pick a newer runtime), then restart the runtime."
        )


def quiet_logs() -> None:
    """Keep notebook output to what the lesson prints: no INFO lines, no absl warnings."""
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    logging.getLogger("absl").setLevel(logging.ERROR)
    # fit(dataset) warns that its default shuffle=True is ignored: the dataset shuffles itself.
    warnings.filterwarnings("ignore", message="`shuffle=True` was passed")


def setup(fast: bool | None = None, devices: int | None = None, seed: int = 42,
          verbose: bool = True) -> Course:
    """Prepare a notebook. Arguments override COURSE_FAST and COURSE_DEVICES.

    Splits the GPU (or, without one, the CPU) into `devices` logical devices, which must happen
    before TensorFlow initialises; running the same setup twice is harmless.
    """
    from helpers import devices as device_tools

    fast = flag_from_env("COURSE_FAST") if fast is None else fast
    if not isinstance(fast, bool):
        raise CourseError(f"setup(fast={fast!r}): use True, False or None (None reads COURSE_FAST).")
    devices = check_devices(int_from_env("COURSE_DEVICES", 1) if devices is None else devices)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CourseError(f"setup(seed={seed!r}): the seed must be a whole number >= 0.")
    check_versions()
    quiet_logs()
    logical = device_tools.split_device(devices)
    import keras

    keras.utils.set_random_seed(seed)
    course = Course(fast=fast, devices=devices, logical_devices=tuple(d.name for d in logical))
    if verbose:
        print(f"Course setup: {course}")
    return course
