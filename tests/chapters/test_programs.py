"""The programs chapter 7 starts as processes (helpers/programs): what they report when run on their own."""

import ast
import re
import sys

import pytest

from helpers.processes import run_watched
from helpers.programs import program

CHAPTER_7 = ("multiworker", "parameter_server", "resumable", "fit_jax_processes")


def reported(name, *args):
    finished = run_watched([sys.executable, program(name), *args], timeout_s=120)
    assert finished.returncode == 0, finished.lines[-10:]
    return [line for line in finished.lines if not re.match(r"^(W0000|I0000|E0000|WARNING: All log)", line)]


@pytest.mark.parametrize("name", CHAPTER_7)
def test_a_program_imports_only_the_standard_library_and_the_frameworks(name):
    # The notebook writes each program with %%writefile (in parts) and starts it from ch7_programs/: the course's
    # package is not there to import.
    tree = ast.parse(program(name).read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= set(sys.stdlib_module_names) | {"jax", "keras", "numpy", "tensorflow"}, imported


def test_parameter_server_holds_the_variables_and_the_workers_train():
    lines = reported("parameter_server", "--steps", 30)
    assert lines[0] == "variables live on /job:ps/replica:0/task:0/device:CPU:0"
    first, last = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+)", lines[1]).groups())
    assert last < first / 10
