"""environment.yml must install exactly what pyproject.toml declares, with the same pins."""

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    return set(project["dependencies"]) | set(extras["cpu"]) | set(extras["dev"]) | set(extras["lab"])


def environment_requirements() -> set[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = lines.index("  - pip:")
    pips = [line.strip().removeprefix("- ") for line in lines[start + 1:] if line.startswith("      - ")]
    return {p for p in pips if p != "-e ."}


def test_environment_yml_matches_pyproject():
    missing = pyproject_requirements() - environment_requirements()
    extra = environment_requirements() - pyproject_requirements()
    assert not missing, f"environment.yml lacks {sorted(missing)}"
    assert not extra, f"environment.yml has packages pyproject.toml does not: {sorted(extra)}"


def test_environment_yml_installs_the_package_and_python_in_range():
    text = (ROOT / "environment.yml").read_text()
    assert "      - -e ." in text
    assert "python=3.1" in text and any(f"python=3.{m}" in text for m in (10, 11, 12))


def test_tensorflow_is_not_a_core_dependency():
    # Installing the course on Colab/Kaggle must never replace their TensorFlow build.
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [d for d in core if d.lower().startswith(("tensorflow", "keras"))]
