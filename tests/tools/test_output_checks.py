"""tools/output_checks.py: what an executed notebook's outputs show that is wrong (nbclient's runs and JupyterLab's)."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools import output_checks

CHECK = "helpers.exercises.check('ch1.embedding_params', None)"


def notebook(*cells):
    return new_notebook(cells=list(cells))


def ran(source, *outputs, count=1):
    return new_code_cell(source, execution_count=count, outputs=list(outputs))


def stdout(text):
    return new_output("stream", name="stdout", text=text)


def stderr(text):
    return new_output("stream", name="stderr", text=text)


def stored_as_run(executed):
    """The stored notebook: the same cells, without outputs."""
    return notebook(*(new_code_cell(c.source) if c.cell_type == "code" else c for c in executed.cells))


def test_a_clean_run_has_no_problems():
    figure = new_output("display_data", data={"text/plain": "<Figure size 640x480 with 1 Axes>", "image/png": "iVBOR"})
    executed = notebook(new_markdown_cell("# Title"), ran("print('hello')", stdout("hello\n")), ran("  \n", count=None),
                        ran(CHECK, stdout("[ch1.embedding_params] Not answered yet: replace the ...\n"), count=2),
                        ran("plot()", figure, count=3))
    assert output_checks.problems(executed, stored_as_run(executed)) == []


def test_a_traceback_and_the_cells_it_stopped_are_named():
    error = new_output("error", ename="ZeroDivisionError", evalue="division by zero", traceback=["..."])
    executed = notebook(ran("x = 1"), ran("1 / 0", error, count=2), ran("print(x)", count=None))
    assert output_checks.problems(executed, stored_as_run(executed)) == [
        "cell 2: raised ZeroDivisionError: division by zero",
        "cell 3: did not run: the run stopped before it",
    ]


def test_stderr_is_a_problem_unless_the_stored_cell_shows_it_too():
    log = "WARNING: All log messages before absl::InitializeLog() is called ...\nI0000 ...\n"
    executed = notebook(ran("import tensorflow", stderr(log)), ran("decode(files)", stderr("E0000 Premature end\n")))
    stored = stored_as_run(executed)
    stored.cells[1].outputs = [stderr("E0000 Premature end of JPEG data.\n")]
    assert output_checks.problems(executed, stored) == [
        "cell 1: shows log lines on stderr (red in JupyterLab): WARNING: All log messages before absl::InitializeLog() "
        "is called ..."]


def test_a_missing_verdict_and_a_figure_shown_as_text_are_problems():
    executed = notebook(ran(CHECK, stdout("42\n")),
                        ran("plot()", new_output("execute_result", data={"text/plain": "<Figure size 640x480 with 1 "
                                                                                       "Axes>"}, execution_count=2)))
    assert output_checks.problems(executed, stored_as_run(executed)) == [
        "cell 1: an exercise check shows no verdict",
        "cell 2: a figure shown as text (<Figure size ...>) instead of a picture",
    ]


def test_another_notebook_is_named_and_files_as_saved_are_read(tmp_path):
    executed = notebook(ran("1"))
    assert output_checks.problems(executed, notebook(new_code_cell("1"), new_code_cell("2"))) == [
        "the run has 1 cells, the notebook 2: not the same notebook?"]
    nbformat.write(executed, tmp_path / "saved.ipynb")  # read back from a file, as tools/browser.py reads its copy
    assert output_checks.problems(nbformat.read(tmp_path / "saved.ipynb", as_version=4), executed) == []


def test_a_calculator_that_built_no_widgets_is_named():
    view = new_output("display_data", data={output_checks.WIDGET_VIEW: {"model_id": "1"}, "text/plain": "VBox()"})
    calculator = "controls = calculator.show(INPUTS, predict, measure_here)"
    assert output_checks.widget_problems(notebook(ran(calculator, view), ran("x = 1"))) == []
    assert output_checks.widget_problems(notebook(ran("x = 1"), ran(calculator, stdout("a table")))) == [
        "cell 2: the calculator built no widgets"]
