"""Quiet output: TensorFlow's import and one-time C++ notices with native stderr silenced, and no INFO logs."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings


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


def import_tensorflow_for_keras_quietly() -> None:
    """Keras on JAX imports TensorFlow where it is installed (keras.utils.set_random_seed seeds it too), and TensorFlow
    logs lines at its import on some CPUs. A chapter on JAX calls this after importing Keras (so after Keras's backend
    is set: importing TensorFlow imports Keras) and before its first seed: TensorFlow is imported now, quietly. Where
    it is not installed (Colab's TPU runtime) this does nothing."""
    import importlib.util

    if "keras" in sys.modules and importlib.util.find_spec("tensorflow") is not None:
        import_tensorflow_quietly()


def use_up_one_time_cpu_notices() -> None:
    """On CPUs where TensorFlow's oneDNN is on but lacks float16 support, the first float16 op on the CPU logs "oneDNN
    supports DT_HALF only on platforms with AVX-512. Falling back to the default Eigen-based implementation", once per
    process, as an error (in red; TF_CPP_MIN_LOG_LEVEL=2 keeps errors). It says nothing a chapter needs (chapter 4
    measures float16 on the CPU instead), so one tiny float16 product here, with native stderr silenced, uses it up.
    Likewise TensorFlow 2.20's first XLA compilation logs "Compiled cluster using XLA! This line is logged at most
    once for the lifetime of the process" (absl's INFO, which TF_CPP_MIN_LOG_LEVEL does not reach; 2.21 no longer
    logs it): there one tiny compiled sum uses it up. TF_CPP_MIN_LOG_LEVEL=0 or 1 keeps both."""
    import tensorflow as tf

    with native_stderr_silenced(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0") not in ("0", "1")), tf.device("/CPU:0"):
        ones = tf.ones((2, 2), tf.float16)
        _ = (ones @ ones).numpy()
        if tuple(int(part) for part in tf.__version__.split(".")[:2]) < (2, 21):
            _ = tf.function(tf.reduce_sum, jit_compile=True)(tf.ones((2, 2), tf.float32)).numpy()


def quiet_logs() -> None:
    """Keep notebook output to what the lesson prints: no INFO lines, no absl warnings."""
    import tensorflow as tf

    tf.get_logger().setLevel(logging.ERROR)
    logging.getLogger("absl").setLevel(logging.ERROR)
    # fit(dataset) warns that its default shuffle=True is ignored: the dataset shuffles itself.
    warnings.filterwarnings("ignore", message="`shuffle=True` was passed")
