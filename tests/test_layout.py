"""The repository's layout: plumbing apart from chapter code and programs, notebook copies of package code, and the
README's map of the tree."""

import ast
import re
from pathlib import Path

import nbformat
import pytest

from tools import template

ROOT = Path(__file__).resolve().parents[1]
HELPERS = ROOT / "helpers"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
PLUMBING = sorted(p for p in HELPERS.glob("*.py") if p.name not in ("__init__.py", "bench.py"))


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


@pytest.mark.parametrize("path", PLUMBING, ids=lambda p: p.name)
def test_plumbing_never_imports_chapter_code_or_programs(path):
    chapter_code = ("helpers.chapters", "helpers.programs", "helpers.bench")
    wrong = {m for m in imported_modules(path) if m.startswith(chapter_code)}
    assert not wrong, f"{path.name} imports {wrong}: plumbing must not depend on chapter code"


@pytest.mark.parametrize("path", sorted((HELPERS / "programs").glob("[!_]*.py")), ids=lambda p: p.name)
def test_programs_are_standalone(path):
    # The notebook writes each program to a file and runs it: it must not need the course's package.
    assert not {m for m in imported_modules(path) if m.split(".")[0] == "helpers"}


def test_bench_only_dispatches_to_chapter_modules():
    from helpers import bench

    for name, (module, _) in bench.BENCHMARKS.items():
        assert (HELPERS / "chapters" / f"{module}.py").is_file(), name
        assert callable(bench.chapter_function(name)), name
    defined = [n.name for n in ast.parse((HELPERS / "bench.py").read_text()).body if isinstance(n, ast.FunctionDef)]
    assert defined == ["chapter_function", "main"]


def copy_cells():
    for path in NOTEBOOKS:
        for cell in nbformat.read(path, as_version=4).cells:
            if template.COPY_OF in cell.metadata:
                yield path, cell


def test_every_block_and_program_in_the_package_is_taught_in_a_notebook():
    blocks = {f"{p.relative_to(ROOT)}#{name}" for p in HELPERS.rglob("*.py")
              for name, _ in template.BLOCK.findall(p.read_text())}
    programs = {str(p.relative_to(ROOT)) for p in (HELPERS / "programs").glob("[!_]*.py")}
    copied = [cell.metadata[template.COPY_OF] for _, cell in copy_cells()]
    assert sorted(copied) == sorted(blocks | programs)  # each exactly once


def test_a_copy_cell_that_differs_from_the_package_is_reported(tmp_path):
    path, cell = next(copy_cells())
    nb = nbformat.read(path, as_version=4)
    ref = cell.metadata[template.COPY_OF]
    index = next(i for i, c in enumerate(nb.cells) if c.metadata.get(template.COPY_OF) == ref)
    nb.cells[index].source = nb.cells[index].source.replace("def ", "def edited_", 1)
    assert template.copy_problems(nb) == [
        f"cell {index} differs from its package copy {ref} (edit the package file, then `make template`)"]
    nb.cells[index].source = template.copied_source(nb.cells[index])  # what `make template` writes back
    assert template.copy_problems(nb) == []


def test_a_copy_cell_naming_a_missing_block_is_reported():
    cell = nbformat.v4.new_code_cell("x = 1", metadata={template.COPY_OF: "helpers/models.py#nope"})
    nb = nbformat.v4.new_notebook(cells=[cell])
    [problem] = template.copy_problems(nb)
    assert problem.startswith("cell 0: copy_of 'helpers/models.py#nope': helpers/models.py has no block")


def test_a_program_cell_keeps_its_writefile_line():
    cell = nbformat.v4.new_code_cell("%%writefile ch6_programs/resumable.py\nold text",
                                     metadata={template.COPY_OF: "helpers/programs/resumable.py"})
    program = (HELPERS / "programs" / "resumable.py").read_text().rstrip("\n")
    assert template.copied_source(cell) == "%%writefile ch6_programs/resumable.py\n" + program


def readme_tree() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## How the repository is organised", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"`(helpers/[\w/]+\.py)`", section))


def test_readme_names_every_python_file_of_the_package_and_no_other():
    on_disk = {str(p.relative_to(ROOT)) for p in HELPERS.rglob("*.py") if p.name != "__init__.py"}
    assert readme_tree() == on_disk


def test_pip_installs_every_subpackage():
    # Colab and Kaggle get the helpers with `pip install git+...`: a package missing here is missing there.
    import tomllib

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    on_disk = [".".join(p.parent.relative_to(ROOT).parts) for p in HELPERS.rglob("__init__.py")]
    assert sorted(listed) == sorted(on_disk)
