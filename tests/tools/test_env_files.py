"""environment.yml installs the course's package with its extras and pins nothing itself: pyproject.toml holds every
pin, once."""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def environment_pip_lines() -> list[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("  - pip:")
    return [line.strip().removeprefix("- ") for line in lines[start + 1:] if line.startswith("      - ")]


def test_environment_yml_installs_the_package_with_the_extras_make_setup_and_make_lab_install():
    assert environment_pip_lines() == ['-e ".[cpu,dev,lab]"']
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"cpu", "dev", "lab"} <= set(extras)
    makefile = (ROOT / "Makefile").read_text()
    assert '-e ".[cpu,dev,profile]"' in makefile and '-e ".[lab]"' in makefile  # what the venv gets, less the profiler


def test_environment_yml_pins_only_python_in_range():
    text = (ROOT / "environment.yml").read_text()
    assert "==" not in text and ">=" not in text
    # One of the Pythons the course supports locally (3.11-3.13, tools/find-python), pinned: CI's 3.12 or Colab's 3.13.
    pinned = [line.strip() for line in text.splitlines() if line.strip().startswith("- python=")]
    assert pinned in (["- python=3.12"], ["- python=3.13"]), pinned


def test_tensorflow_is_not_a_core_dependency():
    # Installing the course on Colab/Kaggle must never replace their TensorFlow build.
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in core if d.lower().startswith(("tensorflow", "keras"))]


def pins(lines) -> dict[str, str]:
    found = {}
    for line in lines:
        requirement = line.split(";")[0].strip().strip('"')
        if "==" in requirement and not requirement.startswith("#"):
            name, version = requirement.split("==")
            found.setdefault(name.lower(), version)
    return found


def test_tested_versions_are_the_ones_the_ci_environments_install():
    # setup() prints these as "tested"; its floors come from the oldest. They must be what CI really runs.
    from helpers.versions import MIN_KERAS, MIN_TF, TESTED
    from tools.replica import PLATFORMS

    colab = pins((ROOT / "tools" / "platforms" / "colab.txt").read_text().splitlines())
    kaggle = pins((ROOT / "tools" / "platforms" / "kaggle.txt").read_text().splitlines())
    newest = pins(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["cpu"])
    assert TESTED["TensorFlow"] == (colab["tensorflow-cpu"], newest["tensorflow-cpu"], kaggle["tensorflow-cpu"])
    assert TESTED["Keras"] == (colab["keras"], newest["keras"], kaggle["keras"])
    assert (TESTED["Python"][0], TESTED["Python"][2]) == (PLATFORMS["colab"].python, PLATFORMS["kaggle"].python)
    def oldest(name):
        return min(tuple(int(p) for p in replica[name].split(".")[:2]) for replica in (colab, kaggle))

    assert (MIN_TF, MIN_KERAS) == (oldest("tensorflow-cpu"), oldest("keras"))


def test_requires_python_is_the_oldest_local_python_with_no_upper_bound():
    # tools/find-python's default list is what `make` accepts; the package installs wherever that floor holds, so
    # the setup cell keeps working the day Colab moves to a newer Python.
    import re

    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    local = re.search(r"versions=\$\{\*:-([\d. ]+)\}", (ROOT / "tools" / "find-python").read_text())[1].split()
    assert requires == f">={min(local, key=lambda v: tuple(map(int, v.split('.'))))}" == ">=3.11"


@pytest.mark.parametrize("platform", ["colab", "kaggle"])
def test_course_install_leaves_colabs_and_kaggles_widgets_alone(platform):
    # Colab ships ipywidgets 7.7.1, Kaggle's GPU image 8.1.5: the course must not pull either way.
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in core if d.lower().startswith(("ipywidgets", "widgetsnbextension", "jupyterlab"))]
    shipped = pins((ROOT / "tools" / "platforms" / f"{platform}.txt").read_text().splitlines())
    for requirement in core:
        name, floor = requirement.split(">=")
        assert tuple(map(int, floor.split("."))) <= tuple(map(int, shipped[name].split(".")[:2])), requirement


@pytest.mark.parametrize("platform, wanted", [("linux", "tensorflow-cpu"), ("darwin", "tensorflow")])
def test_cpu_extra_picks_a_tensorflow_build_that_exists_for_the_platform(platform, wanted):
    # PyPI has no tensorflow-cpu wheel for macOS; there `tensorflow` is the CPU build.
    from packaging.requirements import Requirement

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["cpu"]
    chosen = [Requirement(r).name for r in extra
              if Requirement(r).marker is None or Requirement(r).marker.evaluate({"sys_platform": platform})]
    assert [name for name in chosen if name.startswith("tensorflow")] == [wanted]
