"""Shared fixtures for the helpers unit tests.

Every test runs with a hermetic environment: no report file, no Colab/Kaggle/TPU variables,
fast mode unset, widgets off and one logical device, so an in-process `helpers.setup()` never
splits the device (device configuration is process-global; tests that split run in a fresh
subprocess).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

PLATFORM_VARS = (
    "COLAB_RELEASE_TAG", "COLAB_GPU", "COLAB_TPU_ADDR",
    "KAGGLE_KERNEL_RUN_TYPE", "KAGGLE_URL_BASE",
    "TPU_NAME", "TPU_ACCELERATOR_TYPE",
)


@pytest.fixture(autouse=True)
def hermetic_env(monkeypatch):
    for name in (*PLATFORM_VARS, "COURSE_REPORT_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("COURSE_FAST", raising=False)
    monkeypatch.setenv("COURSE_DEVICES", "1")
    monkeypatch.setenv("COURSE_WIDGETS", "0")
    yield
    plt.close("all")


# A sitecustomize.py for a Python without TensorFlow, as on Colab's TPU runtime: Python's path finder finds no
# "tensorflow" (importing it fails, importlib.util.find_spec gives None), and each attempt is kept in `tried`.
NO_TENSORFLOW = """
import importlib.machinery

tried = []
_find_spec = importlib.machinery.PathFinder.find_spec


def _without_tensorflow(fullname, path=None, target=None):
    if fullname.split(".")[0] == "tensorflow":
        tried.append(fullname)
        return None
    return _find_spec(fullname, path, target)


importlib.machinery.PathFinder.find_spec = staticmethod(_without_tensorflow)
"""


@pytest.fixture
def no_tensorflow(tmp_path) -> str:
    """A folder to put first on PYTHONPATH: the Pythons started with it find no TensorFlow (`sitecustomize.tried`
    lists what tried to import it)."""
    (tmp_path / "sitecustomize.py").write_text(NO_TENSORFLOW, encoding="utf-8")
    return str(tmp_path)


def run_python(code: str, **env_overrides: str) -> dict:
    """Run `code` in a fresh interpreter (fresh TensorFlow runtime) and return the JSON object it
    prints on its last stdout line."""
    env = {k: v for k, v in os.environ.items() if k not in PLATFORM_VARS}
    env.pop("COURSE_REPORT_FILE", None)
    env.update({"PYTHONPATH": str(ROOT), "COURSE_WIDGETS": "0", "MPLBACKEND": "Agg", "TF_CPP_MIN_LOG_LEVEL": "2",
                **env_overrides})
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    lines = proc.stdout.strip().splitlines()
    assert lines, f"subprocess printed nothing:\n{proc.stderr}"
    return json.loads(lines[-1])


def running(pattern: str) -> list[int]:
    """PIDs of the processes (other than this one) whose command line matches the regular expression: what a test
    started and should have stopped."""
    import psutil

    this = os.getpid()
    # Without the right to read a process's command line (another user's), psutil gives None: it cannot be ours.
    return [proc.info["pid"] for proc in psutil.process_iter(["pid", "cmdline"])
            if proc.info["pid"] != this and re.search(pattern, " ".join(proc.info["cmdline"] or []))]


class FakeDevice:
    """Stands in for tf.config.PhysicalDevice / LogicalDevice in tests that fake hardware."""

    def __init__(self, name: str, device_type: str):
        self.name = name
        self.device_type = device_type

    def __repr__(self) -> str:
        return f"FakeDevice({self.name!r})"
