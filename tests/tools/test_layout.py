"""The package's layout beyond what lint-imports checks (its contracts are in pyproject.toml, `make lint` runs them):
the package's code imports plumbing plainly, so that the import graph lint-imports reads is the whole story, and the
benchmarks' dispatcher only dispatches."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HELPERS = ROOT / "helpers"
PACKAGE = sorted(HELPERS.rglob("*.py"))


@pytest.mark.parametrize("path", PACKAGE, ids=lambda p: str(p.relative_to(HELPERS)))
def test_package_code_imports_plumbing_plainly(path):
    # helpers.__getattr__ loads modules lazily for notebooks; the package's own code imports what it uses, so that
    # lint-imports sees every import. `helpers.data.x` is fine after `import helpers.data` (notebook-cell blocks keep
    # the notebooks' spelling).
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


def test_bench_only_dispatches_to_chapter_modules():
    from helpers import bench

    for name, (module, _) in bench.BENCHMARKS.items():
        assert (HELPERS / "bench" / f"{module}.py").is_file(), name
        assert callable(bench.chapter_function(name)), name
    init = (HELPERS / "bench" / "__init__.py").read_text()
    defined = [n.name for n in ast.parse(init).body if isinstance(n, ast.FunctionDef)]
    assert defined == ["chapter_function", "main"]
