"""The exercises as the notebooks give them: the cell that checks an exercise (the learner's starting code) and the
folded solution after it. Every call reads the notebook again, so the tests follow the notebooks as they are edited:
a solution changed to a wrong one fails the test that runs it."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SOLUTION = "<details><summary>Solution</summary>"


def cells(chapter: str) -> list[dict]:
    """The cells of chapter `chapter`'s notebook ("ch3", or an exercise name such as "ch3.global_batch"), each with
    its source as one string."""
    number = int(re.match(r"ch(\d+)", chapter).group(1))
    [path] = NOTEBOOKS.glob(f"{number:02d}_*.ipynb")
    found = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [{**cell, "source": "".join(cell["source"])} for cell in found]


def code_cell(chapter: str, containing: str) -> str:
    """The source of the one code cell of the chapter that contains `containing`."""
    found = [c["source"] for c in cells(chapter) if c["cell_type"] == "code" and containing in c["source"]]
    assert len(found) == 1, f"{len(found)} code cells of {chapter} contain {containing!r}"
    return found[0]


def _exercise_at(name: str) -> tuple[list[dict], int]:
    nb = cells(name)
    checks = re.compile(rf'check\(\s*"{re.escape(name)}"')
    found = [i for i, c in enumerate(nb) if c["cell_type"] == "code" and checks.search(c["source"])]
    assert len(found) == 1, f"{len(found)} code cells check {name}"
    return nb, found[0]


def exercise_cell(name: str) -> str:
    """The source of the cell that checks exercise `name`: the starting code, then the check."""
    nb, at = _exercise_at(name)
    return nb[at]["source"]


def starting_code(name: str) -> str:
    """Exercise `name`'s cell without its call of check(...): the code the learner gets."""
    source = exercise_cell(name)
    lines = source.splitlines(keepends=True)
    for statement in reversed(ast.parse(source).body):
        call = statement.value if isinstance(statement, ast.Expr) else None
        if isinstance(call, ast.Call) and ast.unparse(call.func) in ("check", "helpers.exercises.check"):
            del lines[statement.lineno - 1:statement.end_lineno]
    return "".join(lines)


def solution_text(name: str) -> str:
    """The markdown of the folded Solution cell right after the cell that checks exercise `name`."""
    nb, at = _exercise_at(name)
    text = nb[at + 1]["source"]
    assert nb[at + 1]["cell_type"] == "markdown" and text.startswith(SOLUTION), f"no folded solution after {name}"
    return text


def inline_code(name: str) -> list[str]:
    """Every `inline code` of exercise `name`'s folded solution, in order."""
    return re.findall(r"(?<!`)`([^`]+)`(?!`)", re.sub(r"```.*?```", "", solution_text(name), flags=re.DOTALL))


def folded_solution(name: str) -> str:
    """The code of exercise `name`'s folded solution: its first ```python block or, where the solution names the
    change in the text, its inline code that assigns (`x = ...`), one a line."""
    blocks = re.findall(r"```python\n(.*?)```", solution_text(name), re.DOTALL)
    if blocks:
        return blocks[0]
    assignments = [code for code in inline_code(name) if _assigns(code)]
    assert assignments, f"the solution of {name} has no code block and no inline assignment"
    return "\n".join(assignments)


def _assigns(code: str) -> bool:
    try:
        return all(isinstance(statement, ast.Assign) for statement in ast.parse(code).body)
    except SyntaxError:
        return False


def with_solution(code: str, solution: str) -> str:
    """`code` with each `name = value` of `solution` put in place of the value `code` gives `name`, in an assignment
    or as a keyword argument: the starting code as the solution's text says to change it."""
    for change in ast.parse(solution).body:
        [target] = change.targets
        name, new = ast.unparse(target), ast.get_source_segment(solution, change.value)
        olds = [node.value for node in ast.walk(ast.parse(code))
                if isinstance(node, ast.Assign) and name in map(ast.unparse, node.targets)
                or isinstance(node, ast.keyword) and node.arg == name]
        assert len(olds) == 1, f"{len(olds)} places give {name} a value in:\n{code}"
        lines = code.encode().splitlines(keepends=True)  # ast counts columns in UTF-8 bytes
        start = sum(map(len, lines[:olds[0].lineno - 1])) + olds[0].col_offset
        end = sum(map(len, lines[:olds[0].end_lineno - 1])) + olds[0].end_col_offset
        code = (b"".join(lines)[:start] + new.encode() + b"".join(lines)[end:]).decode()
    return code


def definition(code: str, name: str) -> str:
    """The source of the top-level function or class `name` that `code` defines."""
    [found] = [s for s in ast.parse(code).body if isinstance(s, ast.FunctionDef | ast.ClassDef) and s.name == name]
    return ast.get_source_segment(code, found)


def run(code: str, *names: str, **scope):
    """Run `code`'s statements in a namespace holding `scope` (what the notebook has defined before the cell) until
    it has defined each of `names`, and return their values (one value for one name). What it prints is dropped."""
    namespace = dict(scope)
    with contextlib.redirect_stdout(io.StringIO()):
        for statement in ast.parse(code).body:
            if all(name in namespace for name in names):
                break
            exec(compile(ast.Module([statement], type_ignores=[]), "<notebook>", "exec"), namespace)
    values = tuple(namespace[name] for name in names)
    return values[0] if len(values) == 1 else values
