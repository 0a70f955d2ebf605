"""Plumbing shared by the course notebooks: setup, timing, devices, data, models, plots.

The TensorFlow calls a chapter teaches stay in its notebook; this package holds what would otherwise be repeated
(timing, loading, device setup, plotting), each chapter's experiments where a benchmark reruns them
(helpers/chapters), and the programs chapter 6 starts as processes (helpers/programs).
"""

import importlib
import os

# TensorFlow's C++ INFO lines go to stderr and would make notebook outputs machine-dependent.
# Set before TensorFlow is imported; a learner can still export TF_CPP_MIN_LOG_LEVEL=0 to see them.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# On a GPU, take memory as needed instead of the whole card: the kernel and the processes the course
# starts beside it (benchmarks, the scaling sweep, workers) share one GPU. Children inherit it. On a GPU runtime
# setup() prints a line saying so (devices.gpu_memory_note), and chapter 1 shows the variable.
os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")

from helpers.course import Course, setup  # noqa: E402
from helpers.errors import CourseError  # noqa: E402

# The plumbing several chapters share. Chapter code is in helpers/chapters, runnable programs in helpers/programs,
# and the benchmark command line in helpers/bench.py; none of those is imported here.
PLUMBING = ("cluster", "course", "data", "devices", "errors", "exercises", "images", "installs", "live_view",
            "models", "plots", "processes", "quiet", "report", "results", "storage", "strategies", "tables", "timing",
            "versions")
__all__ = ["Course", "CourseError", "setup"]
__version__ = "0.1.0"


def __getattr__(name):
    # For notebooks: `helpers.data.load_reuters(...)` works without importing each module first; they load
    # lazily so that `import helpers` stays light and never fails for lack of TensorFlow. The package's own code
    # imports what it uses plainly (`from helpers.timing import measure`), never through here.
    if name in PLUMBING:
        return importlib.import_module(f"helpers.{name}")
    raise AttributeError(f"module 'helpers' has no attribute {name!r}")
