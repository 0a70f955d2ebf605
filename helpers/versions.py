"""The versions the course is tested on, the checks that fail early on older ones, and the route on a TPU runtime."""

from __future__ import annotations

from helpers.errors import CourseError
from helpers.quiet import import_tensorflow_quietly

# The versions CI runs every notebook on: replicas of Colab's and Kaggle's runtimes (tools/platforms/colab.txt and
# kaggle.txt, the oldest) and the newest releases (pyproject.toml's [cpu] extra).
# tests/tools/test_env_files.py checks the files agree. Three combinations, by position: Colab's first, the newest
# releases second, Kaggle's third.
TESTED = {"TensorFlow": ("2.20.0", "2.21.0", "2.20.0"), "Keras": ("3.13.2", "3.15.1", "3.13.2"),
          "Python": ("3.13", "3.12", "3.12")}
MIN_TF = (2, 20)  # the floors are the oldest tested versions, not older ones nobody ran
MIN_KERAS = (3, 13)

# The free TPU runtimes ship JAX with its libtpu and no TensorFlow that can use the TPU: Colab's has no TensorFlow
# (googlecolab/colabtools#5164), Kaggle's has tensorflow-cpu ("re-enable tensorflow-tpu when a compatible libtpu can be
# found", Kaggle/docker-python tpu/requirements.in). tensorflow-tpu pins another libtpu, so pip refuses it
# (colabtools#5209) or replaces JAX's: the course names no install and points to the chapters that run on JAX.
JAX_CHAPTERS = "chapters 5 and 9 run on the TPU runtime as it is (Keras on JAX)"
# The runtimes with TensorFlow that can replace a TPU one, as each platform's menus name them (course.SWITCH_RUNTIME
# names the GPU ones, for speed).
TENSORFLOW_RUNTIMES = "Colab: Runtime > Change runtime type > T4 GPU or CPU; Kaggle: Settings > Accelerator > GPU T4 x2"
TPU_ROUTE = ("Chapters 5 and 9 (05_tpu.ipynb and 09_bigger_than_one_device.ipynb, opened from their Open in Colab / "
             "Open in Kaggle badges: Keras on the JAX backend) are written for Colab's and Kaggle's TPU runtimes as "
             "they ship (they have been run on CPU devices, not yet on a TPU): install no TensorFlow or JAX over them.")


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def versions_line() -> str:
    """What this runtime has, beside the combinations the course was tested with."""
    import platform

    import keras
    import tensorflow as tf

    found = {"TensorFlow": tf.__version__, "Keras": keras.__version__, "Python": platform.python_version()}
    colab, newest, kaggle = ([" + ".join(f"{name} {TESTED[name][i]}" for name in TESTED) for i in range(3)])
    return (f"Versions: {' + '.join(f'{name} {version}' for name, version in found.items())} "
            f"(tested: {colab} as on Colab, {kaggle} as on Kaggle, and {newest})")


def check_versions() -> None:
    """Fail early, with the fix, on a runtime too old for the course (Keras 2 APIs differ)."""
    try:
        tf = import_tensorflow_quietly()
        import keras
    except ImportError as err:
        # One line, as a learner on a TPU runtime sees it; the import error (on one line too) only where it is not
        # the plain absence, e.g. a TensorFlow whose native library failed to load.
        found = "" if getattr(err, "name", None) == "tensorflow" else f" ({' '.join(str(err).split())})"
        raise CourseError(
            f"This chapter needs TensorFlow, which this runtime (e.g. Colab's TPU runtime) does not have{found}: "
            f"switch to a runtime with it ({TENSORFLOW_RUNTIMES}; locally, `make setup`) and run all again; "
            f"{JAX_CHAPTERS}."
        ) from None
    if _version_tuple(tf.__version__) < MIN_TF or _version_tuple(keras.__version__) < MIN_KERAS:
        raise CourseError(
            f"This course needs TensorFlow >= {'.'.join(map(str, MIN_TF))} and Keras >= "
            f"{'.'.join(map(str, MIN_KERAS))} (the oldest versions it is tested on); this runtime has TensorFlow "
            f"{tf.__version__} and Keras {keras.__version__}. On Colab: Command palette (Ctrl+Shift+P) > Change "
            "runtime version > Latest; on Kaggle: Settings > Environment > Always use latest environment. Upgrading "
            "TensorFlow by pip there replaces the platform's own build: do it only on your own machine "
            "(`pip install -U tensorflow keras`), then restart the runtime."
        )


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
