"""The notebook template: check it, rewrite its generated parts.

    python -m tools.template        # check every notebook, list problems (exit 1 if any)
    python -m tools.template --fix  # rewrite badges + setup cell from pyproject's Repository and the version

Stored outputs: notebooks are committed WITH the outputs of a fast-mode run on CI's logical devices, so readers see
results and nbval compares them (`make outputs`, `python -m tools.run_notebooks --in-place`, refreshes them). Cells
whose output varies between runs (times, device lists, training logs) carry the `nbval-ignore-output` tag; everything
else is compared; the checks here include the stored outputs' rules.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

import nbformat

from tools.prose import comparative_problems, figure_problems, glossary_problems, long_markdown_problems

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
IGNORE = "nbval-ignore-output"
SECTIONS = ("## What you will learn", "## Time and hardware", "## Summary")
# Sources that print wall-clock times or per-run numbers: their cells must not be compared.
VARYING = re.compile(r"\bmeasure\(|EpochTimer\(|printbar\(|LiveTrainingView\(|describe_runtime\(|time\.perf_counter")
MACHINE_PATH = re.compile(r"/(tmp|root|work|home|Users)/[A-Za-z0-9_.-]+/")
# Colab and Kaggle open a notebook on the runtime its metadata asks for: a T4 GPU (chapter 5: a TPU, below).
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
    "accelerator": "GPU",
    "colab": {"gpuType": "T4", "provenance": []},
    "kaggle": {"accelerator": "nvidiaTeslaT4", "isGpuEnabled": True, "isInternetEnabled": True,
               "language": "python", "sourceType": "notebook"},
}
# Chapter 5 is the TPU chapter: Colab opens it on its TPU v5e-1 runtime, Kaggle on its TPU v5e-8.
TPU_CHAPTERS = ("05_tpu.ipynb",)
TPU_METADATA = {**METADATA, "accelerator": "TPU", "colab": {"gpuType": "V5E1", "provenance": []},
                "kaggle": {**METADATA["kaggle"], "accelerator": "tpuV5e8", "isGpuEnabled": False}}


def tpu_chapter(nb) -> bool:
    """Whether `nb` is a TPU chapter: its badges (first cell) name its file."""
    return any(f"/{name})" in nb.cells[0].source for name in TPU_CHAPTERS)


def metadata_for(nb) -> dict:
    return TPU_METADATA if tpu_chapter(nb) else METADATA


# The setup cell is plumbing: Colab shows its title as a form, JupyterLab folds its code (a click shows it).
SETUP_CELL_VIEW = {"cellView": "form", "jupyter": {"source_hidden": True}}


def project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def repository() -> str:
    return project()["urls"]["Repository"].rstrip("/")


def badges(path: Path) -> str:
    """The Colab and Kaggle badges for the notebook at `path`: its own file at the release tag of this version, whose
    setup cell installs that release (`make release` moves them)."""
    repo = repository()
    owner_name = repo.removeprefix("https://github.com/")
    rel = f"v{version()}/notebooks/{path.name}"
    colab = f"https://colab.research.google.com/github/{owner_name}/blob/{rel}"
    kaggle = f"https://kaggle.com/kernels/welcome?src={repo}/blob/{rel}"
    return (
        f"[![Open in Colab](https://colab.research.google.com/assets/colab-badge.svg)]({colab}) "
        f"[![Open in Kaggle](https://kaggle.com/static/images/open-in-kaggle.svg)]({kaggle})"
    )


def version() -> str:
    """The course's version: helpers/__init__.py's __version__, the one place it is set."""
    return re.search(r'^__version__ = "([^"]+)"', (ROOT / "helpers" / "__init__.py").read_text(), re.MULTILINE)[1]



def setup_source(version: str, backend: str = "tensorflow") -> str:
    """The setup cell every notebook starts with: the clone's helpers, else the course's release `version` installed
    with pip (from PyPI, or COURSE_SOURCE: another package index's URL, or git+URL@tag), once per runtime; pip's
    failure told apart as no network, no such version, or pip's own reason. Only the backend (chapter 9: "jax")
    differs between notebooks. helpers.setup(version=...) asks for a restart when other helpers were imported."""
    backend_argument = ', backend="jax"' if backend == "jax" else ""  # chapter 9 runs Keras on JAX
    name = project()["name"]
    return f'''# @title Setup: the course's helpers (this clone's, else release VERSION); not TensorFlow
import importlib.metadata, os, re, subprocess, sys  # noqa: E401, I001

VERSION, SOURCE = "{version}", os.environ.get("COURSE_SOURCE", "")  # SOURCE: an index, or git+URL@tag
if os.path.isfile("../helpers/course.py"):  # inside a clone of the course: its own helpers
    sys.path.insert(0, os.path.abspath(".."))
elif VERSION not in [d.version for d in importlib.metadata.distributions(name="{name}")]:
    index = ["-i", SOURCE, "--trusted-host", SOURCE.split("/")[2]] if SOURCE else []
    where = [SOURCE] if "git+" in SOURCE else ["{name}==" + VERSION, *index]
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", *where],
                         capture_output=True, text=True)
    if pip.returncode:
        why = "no such version" if re.search("No matching|did not match", pip.stderr) else "failed"
        if re.search("Connection|NameResolution|resolve host|look up|versions: none", pip.stderr):
            why = "cannot reach it or find {name} (offline? Kaggle: Settings, Internet)"
        raise RuntimeError(f"pip install {name}=={{VERSION}} from {{SOURCE or 'PyPI'}}: {{why}}\\n"
                           + pip.stderr[-800:])
import helpers

course = helpers.setup(  # AttributeError: rename your helpers.py
    fast=FAST, devices=DEVICES, version=VERSION{backend_argument})'''


PARAMETERS_TEMPLATE = '''# Parameters: papermill can set them, and Colab shows them as a form.
# FAST: "fast" = small data and few epochs (workshops); "full" = full size, even on a CPU;
# "auto" = full size with a GPU or a TPU this chapter's backend can use, fast sizes without
# (the environment variable COURSE_FAST=1/0 decides instead when it is set).
FAST = "auto"  # @param ["auto", "fast", "full"]
# DEVICES: {devices}; None reads COURSE_DEVICES.
# A new value needs a restart of the runtime.
DEVICES = None  # @param {type:"raw"}'''
# On JAX, chapter 9's DEVICES makes virtual CPU devices for its meshes (no mesh there uses a GPU); chapter 5's makes
# the CPU devices that stand in for TPU chips where the runtime has no accelerator.
DEVICES_MEANING = {
    "tpu": "how many CPU devices stand in for TPU chips without a TPU or GPU (default 8, as on\n# Kaggle's "
           "v5e-8); real chips are used as is",
    "tensorflow": "how many logical devices to split one GPU (or the CPU) into (default 1);\n# several real GPUs "
                  "are used as they are",
    "jax": "how many virtual CPU devices JAX makes for this chapter's meshes (default 4);\n# no mesh here uses "
           "a GPU",
}


def parameters_for(backend: str, tpu: bool = False) -> str:
    return PARAMETERS_TEMPLATE.replace("{devices}", DEVICES_MEANING["tpu" if tpu else backend])


def backend_of(nb) -> str:
    """The Keras backend `nb` runs on: "jax" where its setup cell says so."""
    return "jax" if len(nb.cells) > 2 and 'backend="jax"' in nb.cells[2].source else "tensorflow"


def problems(path: Path) -> list[str]:
    """Everything about `path` that breaks the template or the stored-outputs rule."""
    nb = nbformat.read(path, as_version=4)
    found = []
    cells = nb.cells
    if len(cells) < 4:
        return [f"{path.name}: too few cells for the template"]
    header = cells[0].source
    if cells[0].cell_type != "markdown" or not header.startswith("# "):
        found.append("first cell must be the markdown title (# ...)")
    if badges(path) not in header:
        found.append("badges missing or not pointing at this notebook (run `make template`)")
    for section in SECTIONS[:2]:
        if section not in header:
            found.append(f"header lacks '{section}'")
    backend = backend_of(nb)
    parameters = parameters_for(backend, tpu_chapter(nb))
    if cells[1].source != parameters or "parameters" not in cells[1].metadata.get("tags", []):
        found.append("second cell must be the papermill parameters cell (tag 'parameters')")
    if cells[2].source != setup_source(version(), backend):
        found.append("third cell must be the setup cell of this version, identical to tools/template.py (run "
                     "`make template`)")
    if {key: nb.metadata.get(key) for key in METADATA} != metadata_for(nb):
        found.append("notebook metadata must ask for the course's kernel and a T4 GPU, or for chapter 5 a TPU (run "
                     "`make outputs`)")
    text = "\n".join(c.source for c in cells if c.cell_type == "markdown")
    if "## Summary" not in text:
        found.append("no '## Summary' section")
    if "Pitfall" not in text:
        found.append("no pitfall box ('> **Pitfall ...')")
    if "exercises.check(" not in "\n".join(c.source for c in cells if c.cell_type == "code"):
        found.append("no exercise checked with helpers.exercises.check")
    found += figure_problems(nb)
    found += comparative_problems(nb)
    found += long_markdown_problems(nb)
    found += glossary_problems(nb)
    found += [f"{path.name}: {p}" for p in output_problems(nb)]
    return found


def output_problems(nb) -> list[str]:
    found = []
    code = [c for c in nb.cells if c.cell_type == "code"]
    for i, cell in enumerate(code, start=1):
        where = f"code cell {i} ({cell.source.splitlines()[0][:40] if cell.source else 'empty'!r})"
        if cell.execution_count != i:
            found.append(f"{where}: not executed in order (run `make outputs`)")
        for out in cell.outputs:
            if out.output_type == "error":
                found.append(f"{where}: holds an error output")
            if MACHINE_PATH.search(str(out)):
                found.append(f"{where}: output holds an absolute path of this machine")
        if VARYING.search(cell.source) and cell.outputs and IGNORE not in cell.metadata.get("tags", []):
            found.append(f"{where}: prints timings/varying values but lacks the '{IGNORE}' tag")
    if "widgets" in nb.metadata:
        found.append("notebook metadata holds widget state (run `make outputs`)")
    for i, cell in enumerate(nb.cells):
        shows_figure = cell.cell_type == "code" and any(key.startswith("image/") for out in cell.outputs
                                                        for key in out.get("data", {}))
        following = nb.cells[i + 1].source if i + 1 < len(nb.cells) else ""
        if shows_figure and not following.startswith("*Figure:"):
            found.append(f"cell {i} draws a figure without a caption (a markdown cell '*Figure: ... Look at ...*' "
                         "right after it)")
    return found


def fix(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    header = nb.cells[0].source
    lines = [line for line in header.splitlines() if "Open in Colab" not in line]
    lines.insert(1, "\n" + badges(path))
    nb.cells[0].source = re.sub(r"\n{3,}", "\n\n", "\n".join(lines))
    backend = backend_of(nb)
    nb.cells[1].source = parameters_for(backend, tpu_chapter(nb))
    nb.cells[2].source = setup_source(version(), backend)
    nb.cells[1].metadata["tags"] = ["parameters"]
    nb.cells[2].metadata["tags"] = [IGNORE]
    nb.cells[2].metadata.update(SETUP_CELL_VIEW)
    nb.metadata.update(metadata_for(nb))
    nbformat.write(nb, path)


def readme_badges() -> str:
    """The README's badge line: chapter 0's badges, at the release tag as the notebooks' are."""
    return badges(NOTEBOOKS / "00_runtime_and_accelerators.ipynb")


def fix_readme() -> None:
    readme = ROOT / "README.md"
    lines = readme.read_text().split("\n")
    readme.write_text("\n".join(readme_badges() if line.startswith("[![Open in Colab]") else line for line in lines))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fix", action="store_true")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    paths = args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb"))
    if args.fix:
        fix_readme()
    for path in paths:
        if args.fix:
            fix(path)
    bad = {p.name: problems(p) for p in paths}
    for name, found in bad.items():
        for problem in found:
            print(f"{name}: {problem}")
    return 1 if any(bad.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
