"""The repository's layout: plumbing apart from chapter code and programs, no import cycle, small modules that import
plumbing plainly, and CONTRIBUTING.md's map of the tree."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPERS = ROOT / "helpers"
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
    chapter_code = ("helpers.chapters", "helpers.bench", "helpers.programs")
    wrong = {m for m in imported_modules(path) if m.startswith(chapter_code)}
    assert not wrong, f"{path.name} imports {wrong}: plumbing must not depend on chapter code"


MAX_LINES = 250
MAX_GENERATED_LINES = 330
PACKAGE = sorted(HELPERS.rglob("*.py"))
LEAVES = ("errors.py",)  # what any module may import: it imports nothing of the course


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE}


def course_imports(path: Path) -> set[str]:
    """The package's modules that `path` imports, at module level or inside a function: `import helpers.data` and
    `from helpers.data import x` give helpers.data, `from helpers.exercises import ch0` helpers.exercises.ch0,
    `from helpers.exercises import name` the package helpers.exercises itself (its __init__ runs)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in MODULES}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from . import x, from .x import y
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in MODULES else base)
    return {name for name in found if name in MODULES} - {module_name(path)}


def import_graph() -> dict[str, set[str]]:
    return {name: course_imports(path) for name, path in MODULES.items()}


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle, as a path that ends where it starts, for each import that closes one (depth first)."""
    cycles, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":
                cycles.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


def test_find_cycles_names_each_cycle():
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []
    assert find_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"a"}}) == [["a", "a"]]


def test_course_imports_reads_function_level_and_package_imports(tmp_path):
    path = HELPERS / "course.py"
    assert {"helpers.errors", "helpers.devices", "helpers.versions"} <= course_imports(path)  # devices: in setup()
    assert "helpers.exercises.ch0" in course_imports(HELPERS / "exercises" / "__init__.py")


def test_the_package_has_no_import_cycle():
    cycles = [" -> ".join(cycle) for cycle in find_cycles(import_graph())]
    assert not cycles, "import cycles: " + "; ".join(cycles)


@pytest.mark.parametrize("name", LEAVES)
def test_leaf_modules_import_nothing_of_the_course(name):
    assert not {m for m in imported_modules(HELPERS / name) if m.split(".")[0] == "helpers"}


@pytest.mark.parametrize("path", PACKAGE, ids=lambda p: str(p.relative_to(HELPERS)))
def test_no_module_is_over_the_line_limit(path):
    lines = len(path.read_text().splitlines())
    # A chapter's generated module gathers every cell it exports (chapter 2's: the ceilings, the roofline, the
    # gradient exchange); it splits with the export layout, not by hand.
    limit = MAX_GENERATED_LINES if path.parent.name == "chapters" else MAX_LINES
    assert lines <= limit, f"{path.relative_to(ROOT)} has {lines} lines (at most {limit}): split out a part"


@pytest.mark.parametrize("path", PACKAGE, ids=lambda p: str(p.relative_to(HELPERS)))
def test_package_code_imports_plumbing_plainly(path):
    # helpers.__getattr__ loads modules lazily for notebooks; the package's own code imports what it uses, so that
    # the import graph above is the whole story. `helpers.data.x` is fine after `import helpers.data` (notebook-cell
    # blocks keep the notebooks' spelling).
    tree = ast.parse(path.read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert "helpers" not in imported, "`import helpers` then `helpers.x.y` goes through helpers.__getattr__"
    from_package = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == "helpers" and not node.level for alias in node.names]
    assert not from_package, f"`from helpers import {', '.join(from_package)}`: import from the module itself"
    lazy = sorted({ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                   and isinstance(node.value, ast.Attribute) and isinstance(node.value.value, ast.Name)
                   and node.value.value.id == "helpers" and f"helpers.{node.value.attr}" not in imported})
    assert not lazy, f"{lazy} without `import helpers.<module>`: they go through helpers.__getattr__"


@pytest.mark.parametrize("path", sorted((HELPERS / "programs").glob("[!_]*.py")), ids=lambda p: p.name)
def test_programs_are_standalone(path):
    # The notebook writes each program to a file and runs it: it must not need the course's package.
    assert not {m for m in imported_modules(path) if m.split(".")[0] == "helpers"}


def test_bench_only_dispatches_to_chapter_modules():
    from helpers import bench

    for name, (module, _) in bench.BENCHMARKS.items():
        assert (HELPERS / "bench" / f"{module}.py").is_file(), name
        assert callable(bench.chapter_function(name)), name
    init = (HELPERS / "bench" / "__init__.py").read_text()
    defined = [n.name for n in ast.parse(init).body if isinstance(n, ast.FunctionDef)]
    assert defined == ["chapter_function", "main"]


def test_pip_installs_every_subpackage():
    # Colab and Kaggle get the helpers with `pip install git+...`: a package missing here is missing there.
    import tomllib

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    on_disk = [".".join(p.parent.relative_to(ROOT).parts) for p in HELPERS.rglob("__init__.py")]
    assert sorted(listed) == sorted(on_disk)
