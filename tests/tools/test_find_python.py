"""tools/find-python: the one place that finds a Python the course supports (3.11-3.13), for make, .ci/run and the
replicas; on PATH, then under pyenv, then python3; else a message that says what to install."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

FIND = ROOT / "tools" / "find-python"
REAL = Path(os.path.realpath(sys.executable))  # this interpreter itself, not .venv's link to it
HERE = "{}.{}".format(*sys.version_info[:2])


def machine(tmp_path: Path, on_path: dict[str, Path | None], pyenv: dict[str, Path] = {}) -> dict:  # noqa: B006
    """An environment whose PATH holds only `on_path` (name -> interpreter, None: a pyenv shim that refuses) and the
    shell tools the script uses, and whose pyenv holds `pyenv` (version -> interpreter)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("sh", "sed", "cat", "make"):
        (bin_ / tool).symlink_to(shutil.which(tool))
    for name, target in on_path.items():
        if target is None:
            (bin_ / name).write_text("#!/bin/sh\necho 'pyenv: python3.12: command not found' >&2\nexit 127\n")
            (bin_ / name).chmod(0o755)
        else:
            (bin_ / name).symlink_to(target)
    for version, target in pyenv.items():
        folder = tmp_path / "pyenv" / "versions" / version / "bin"
        folder.mkdir(parents=True)
        (folder / f"python{version.rsplit('.', 1)[0]}").symlink_to(target)
    return {"PATH": str(bin_), "HOME": str(tmp_path), "PYENV_ROOT": str(tmp_path / "pyenv")}


def find(env: dict, *versions: str) -> subprocess.CompletedProcess:
    return subprocess.run([FIND, *versions], env=env, capture_output=True, text=True, timeout=60)


def version_of(python: str) -> str:
    return subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True,
                          text=True, check=True).stdout.strip()


def test_pyenv_s_python_is_found_where_its_shim_refuses(tmp_path):
    env = machine(tmp_path, {f"python{HERE}": None}, pyenv={f"{HERE}.9": REAL})
    found = find(env, HERE)
    assert found.returncode == 0, found.stderr
    assert version_of(found.stdout.strip()) == HERE


def test_python3_is_taken_when_its_version_is_supported(tmp_path):
    found = find(machine(tmp_path, {"python3": REAL}))
    assert found.returncode == 0, found.stderr
    assert version_of(found.stdout.strip()) == HERE


def test_without_a_supported_python_the_message_says_what_to_install(tmp_path):
    found = find(machine(tmp_path, {}))
    assert found.returncode == 1 and found.stdout == ""
    assert "No Python 3.12, 3.13, 3.11 found (python3 here is none)" in found.stderr
    assert "TensorFlow 2.20-2.21 has no wheels for Python 3.14, and JAX 0.8.3 needs 3.11 or newer" in found.stderr
    assert "pyenv install 3.12" in found.stderr and "make PYTHON=" in found.stderr


def test_a_platform_s_version_is_that_version_only(tmp_path):
    other = "3.13" if HERE != "3.13" else "3.12"
    found = find(machine(tmp_path, {"python3": REAL}), other)
    assert found.returncode == 1 and f"No Python {other} found (python3 here is {HERE})" in found.stderr


def test_make_setup_stops_with_that_message_when_no_python_is_found(tmp_path):
    clone = tmp_path / "clone"
    (clone / "tools").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "tools/find-python"):
        shutil.copy2(ROOT / name, clone / name)
    made = subprocess.run(["make", "-C", str(clone), "setup"], env=machine(tmp_path, {}), capture_output=True,
                          text=True, timeout=60)
    assert made.returncode != 0 and "No Python 3.12, 3.13, 3.11 found" in made.stderr
    assert not (clone / ".venv").exists()
