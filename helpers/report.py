"""Key figures a notebook measured, collected by `make run` into build/report.md."""

from __future__ import annotations

import json
import os

from helpers.errors import CourseError

REPORT_FILE_VAR = "COURSE_REPORT_FILE"
VERDICTS = ("above", "below", "within noise")  # helpers.readings decides them


def record(key: str, value, unit: str = "", verdict: str | None = None) -> None:
    """Note a key figure, e.g. record("median epoch time on CPU:0", 1.23, "s"), or a comparison's reading with its
    verdict, record("overlap: overlapped", 0.55, "x", verdict="below") (helpers.readings does this).

    Writes one JSON line to $COURSE_REPORT_FILE when `make run` sets it; does nothing otherwise.
    """
    if verdict is not None and verdict not in VERDICTS:
        raise CourseError(f"record({key!r}, verdict={verdict!r}): a verdict is one of {', '.join(VERDICTS)}.")
    path = os.environ.get(REPORT_FILE_VAR)
    if path:
        line = {"key": str(key), "value": _plain(value), "unit": unit} | ({"verdict": verdict} if verdict else {})
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def read(path: str) -> list[dict]:
    """The figures recorded in `path` (an empty list if the notebook recorded none)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _plain(value):
    if hasattr(value, "numpy"):  # a TensorFlow tensor
        value = value.numpy()
    if hasattr(value, "item"):  # a NumPy scalar or one-element array
        if getattr(value, "size", 1) != 1:
            raise CourseError(f"record(): a key figure is one number, got an array of shape {value.shape}.")
        value = value.item()
    if isinstance(value, float):
        return float(f"{value:.4g}")
    return value
