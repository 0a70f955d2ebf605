"""Plumbing shared by the course notebooks: setup, timing, devices, data, models, plots.

The TensorFlow calls a chapter teaches stay in its notebook; this package only holds what would
otherwise be repeated (timing, loading, device setup, plotting).
"""

import os

# TensorFlow's C++ INFO lines go to stderr and would make notebook outputs machine-dependent.
# Set before TensorFlow is imported; a learner can still export TF_CPP_MIN_LOG_LEVEL=0 to see them.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from helpers.course import Course, CourseError, setup  # noqa: E402

__all__ = ["Course", "CourseError", "setup"]
__version__ = "0.1.0"
