"""Chapter 9's exercise checkers, with the answers taken from the notebook itself: the folded solutions are accepted,
the starting code and each loophole rejected. The kernel exercise runs in a fresh interpreter, on the devices the
chapter's device cell makes by default (no DEVICES, no COURSE_DEVICES)."""

from __future__ import annotations

import ast
import itertools
import re

import pytest
from conftest import run_python
from solutions import code_cell, definition, exercise_cell, folded_solution, run, starting_code

from helpers.chapters.ch09_bigger_than_one_device import is_out_of_memory, largest_batch, needed_mb, simulated_device
from helpers.exercises import check
from helpers.memory import ResourceExhaustedError, simulated_memory

EXACT = "ch9.exact_largest_batch"
KERNEL_EXERCISE = "ch9.kernel_on_model_axis"


def function(source: str, name: str = "exact_largest_batch"):
    """The function `name` defined by `source`, with the chapter's largest_batch and is_out_of_memory in reach, as in
    the notebook."""
    return run(source, name, largest_batch=largest_batch, is_out_of_memory=is_out_of_memory)


def solution():
    """The folded solution of ch9.exact_largest_batch."""
    return function(folded_solution(EXACT))


def statements(code: str, *starts: str) -> str:
    """The top-level statements of `code` that start with one of `starts`, one after the other."""
    return "\n".join(segment for node in ast.parse(code).body
                     if (segment := ast.get_source_segment(code, node)).startswith(starts))


def verdict(capsys, answer, name="ch9.exact_largest_batch"):
    check(name, answer)
    return capsys.readouterr().out.strip()


def test_the_folded_search_is_accepted(capsys):
    assert verdict(capsys, solution()) == "[ch9.exact_largest_batch] Correct. Well done."


def test_the_folded_search_finds_the_exact_batch_on_the_chapter_device():
    keras = pytest.importorskip("keras")
    model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(5)])
    model.compile(optimizer="adam", loss="mse")
    device = simulated_device(model, None, memory_mb=needed_mb(model, 300) + 1e-9)
    assert largest_batch(device, 8, 1024) == 256 and solution()(device, 8, 1024) == 300


def test_the_starting_code_is_rejected(capsys):
    starting = function(starting_code(EXACT))
    assert "returned 64: the doubling stops at a power of two" in verdict(capsys, starting)


def test_a_constant_is_rejected(capsys):
    assert "the largest batch that fits is" in verdict(capsys, lambda try_batch, start=8, limit=4096: 777)


def test_trying_every_size_is_rejected(capsys):
    def one_by_one(try_batch, start=8, limit=4096):  # every size in turn, until one does not fit
        def fits(batch):
            try:
                try_batch(batch)
                return True
            except Exception as err:
                if is_out_of_memory(err):
                    return False
                raise

        return max(itertools.takewhile(fits, range(start, limit + 1)), default=None)

    assert re.search(r"right answer, but it tried \d+ sizes .* at most 23", verdict(capsys, one_by_one))


def test_taking_any_error_for_too_big_is_rejected(capsys):
    catch_all = function(folded_solution(EXACT).replace(
        "            if not is_out_of_memory(err):\n                raise  # a shape mistake is not \"too big\"\n", ""))
    assert "catch only out-of-memory errors" in verdict(capsys, catch_all)


def test_trying_past_the_limit_is_rejected(capsys):
    past = function(folded_solution(EXACT).replace("min(2 * fits, limit + 1)", "2 * fits"))
    assert "outside start..limit" in verdict(capsys, past)


def test_a_number_instead_of_the_function_is_rejected(capsys):
    assert "pass your function itself" in verdict(capsys, 128)


KERNEL = """
import contextlib, io, json, os, re
os.environ.pop("COURSE_DEVICES", None)  # the default runtime: no DEVICES, no COURSE_DEVICES
import helpers
DEVICES = None
course = helpers.setup(fast=True, devices=DEVICES, backend="jax", verbose=False)
exec(DEVICE_CELL)
devices = dist.list_devices("cpu")
exec(MESH_LINES)
exec(LAYOUT_OF)

def verdict(source):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(source, globals())
    return out.getvalue().strip().splitlines()[-1]

exec(SECTION_4_LAYOUT)  # section 4's model, mp_model: its last kernel is on the model axis already
dist.set_distribution(dist.ModelParallel(layout_map=layout_map, batch_dim_name="batch"))
keras.utils.set_random_seed(0)
from helpers.chapters.ch01_single_gpu import reuters_conv1d
mp_model = reuters_conv1d(output="logits")
dist.set_distribution(None)

print(json.dumps({"devices": len(devices), "mesh": dict(zip(mesh.axis_names, mesh.shape)),
                  "mp_model": [list(layout_of(mp_model.layers[-1].kernel)),
                               verdict("helpers.exercises.check('ch9.kernel_on_model_axis', mp_model)")],
                  "start": verdict(EXERCISE), "solution": verdict(SOLVED), "rows": verdict(ROWS)}))
"""


def with_layout_entry(entry: str) -> str:
    """The kernel exercise's cell with `entry` added to its LayoutMap, before the cell sets the ModelParallel
    distribution that lays out the model's weights."""
    cell = exercise_cell(KERNEL_EXERCISE)
    [at] = [node.lineno for node in ast.parse(cell).body if "ModelParallel(" in ast.get_source_segment(cell, node)]
    lines = cell.splitlines()
    return "\n".join([*lines[:at - 1], entry, *lines[at - 1:]])


@pytest.fixture(scope="module")
def kernel_run():
    """The kernel exercise's verdicts, from one fresh interpreter on the default runtime."""
    mp_cell, solution = code_cell("ch9", "MODEL_AXIS = "), folded_solution(KERNEL_EXERCISE)
    program = "\n".join(f"{name} = {value!r}" for name, value in {
        "DEVICE_CELL": code_cell("ch9", "CPU_DEVICES = "), "MESH_LINES": statements(mp_cell, "MODEL_AXIS", "mesh = "),
        "LAYOUT_OF": definition(mp_cell, "layout_of"), "SECTION_4_LAYOUT": statements(mp_cell, "layout_map"),
        "EXERCISE": exercise_cell(KERNEL_EXERCISE), "SOLVED": with_layout_entry(solution),
        "ROWS": with_layout_entry(solution.replace('(None, "model")', '("model", None)'))}.items())
    return run_python(program + KERNEL)


def test_the_kernel_exercise_on_the_default_runtime(kernel_run):
    found = kernel_run
    assert found["devices"] == 4 and found["mesh"] == {"batch": 2, "model": 2}
    assert found["solution"] == "[ch9.kernel_on_model_axis] Correct. Well done."
    assert found["start"].startswith("[ch9.kernel_on_model_axis] Not yet: the last Dense kernel")
    assert "split along its rows" in found["rows"]


def test_section_4s_model_already_on_the_model_axis_is_rejected(kernel_run):
    # mp_model's last kernel is (None, "model") from section 4's LayoutMap: passing it needs no entry of one's own.
    layout, verdict = kernel_run["mp_model"]
    assert layout == [None, "model"]
    assert verdict == ("[ch9.kernel_on_model_axis] Not yet: pass the model small that the exercise cell builds "
                       "(Dense 'hidden', 64 x 256, then Dense 'output', 256 x 46), not another model.")


def test_c9_x3_an_odd_device_count_is_refused_with_the_restart_hint():
    # C9-X3: with 3 devices the model axis has one device, and (None, "model") split nothing, yet passed.
    mp_cell = code_cell("ch9", "MODEL_AXIS = ")
    program = "\n".join(f"{name} = {value!r}" for name, value in {
        "DEVICE_CELL": code_cell("ch9", "CPU_DEVICES = "), "MESH_LINES": statements(mp_cell, "MODEL_AXIS", "mesh = "),
        "LAYOUT_OF": definition(mp_cell, "layout_of"),
        "SOLVED": with_layout_entry(folded_solution(KERNEL_EXERCISE))}.items()) + """
import contextlib, io, json
import helpers
DEVICES = 3  # the device cell sets KERAS_BACKEND and XLA_FLAGS itself; no setup needed for this check
exec(DEVICE_CELL)
devices = dist.list_devices("cpu")
exec(MESH_LINES)
exec(LAYOUT_OF)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    exec(SOLVED, globals())
print(json.dumps({"mesh": dict(zip(mesh.axis_names, mesh.shape)), "verdict": out.getvalue().strip().splitlines()[-1]}))
"""
    found = run_python(program)
    assert found["mesh"] == {"batch": 3, "model": 1}
    assert found["verdict"].startswith("[ch9.kernel_on_model_axis] Not yet: the mesh's model axis has one device")
    assert "set DEVICES = 2 or another even number" in found["verdict"]


def test_c1_x4_a_search_that_never_ends_gets_a_hint_not_a_hang(capsys):
    def endless(try_batch, start=8, limit=4096):
        while True:
            try:
                try_batch(start)
            except Exception as err:  # noqa: BLE001
                if not is_out_of_memory(err):
                    raise

    out = verdict(capsys, endless)
    assert out.startswith("[ch9.exact_largest_batch] Not yet: stopped after 200 tries") and "does not end" in out


def test_c1_x4_the_notebooks_own_call_on_the_simulated_device_ends_too():
    from helpers.errors import CourseError

    device = simulated_memory(0.5e6, 1e6, 100.75)
    with pytest.raises(CourseError, match="the search does not end"):
        while True:
            try:
                device(8)
            except ResourceExhaustedError:
                pass


def test_c9_x2_a_search_that_catches_only_its_backends_oom_class_is_pointed_to_is_out_of_memory(capsys):
    class JaxRuntimeError(RuntimeError):
        pass

    named = function(folded_solution(EXACT).replace(
        "except Exception as err:", "except JaxRuntimeError as err:"))
    named.__globals__["JaxRuntimeError"] = JaxRuntimeError
    named.__globals__["largest_batch"] = largest_batch
    out = verdict(capsys, named)
    assert out.startswith("[ch9.exact_largest_batch] Not yet: the simulated device's out-of-memory error") and (
        "test it with is_out_of_memory(err)" in out), out


def test_c9_x1_reading_the_answer_out_of_the_checks_closure_is_accepted_on_purpose(capsys):
    # C9-X1: the check runs in the learner's kernel, so try_batch's closure leads to the simulated device's sizes
    # and the answer follows with no try. Contrived, and accepted on purpose: the check cannot hide its own state.
    def from_the_closure(try_batch, start=8, limit=4096):
        def cells(fn):
            return dict(zip(fn.__code__.co_freevars, (c.cell_contents for c in fn.__closure__)))

        if "device" not in cells(try_batch):  # the check's last trial, a plain function: search it properly
            return solution()(try_batch, start, limit)
        memory = cells(cells(try_batch)["device"])
        fits = int((memory["memory_mb"] * 1e6 - memory["fixed"]) // memory["per_example"])
        return None if fits < start else min(fits, limit)

    assert verdict(capsys, from_the_closure) == "[ch9.exact_largest_batch] Correct. Well done."
