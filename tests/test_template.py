"""Every notebook follows the template (tools/template.py) and stores clean, in-order outputs."""

import nbformat
import pytest

from tools import template

NOTEBOOKS = sorted(template.NOTEBOOKS.glob("*.ipynb"))


def test_there_are_notebooks_named_by_chapter():
    assert NOTEBOOKS, "no notebooks found"
    for path in NOTEBOOKS:
        assert path.stem[:2].isdigit() and path.stem[2] == "_", f"{path.name}: name it NN_short_name.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_follows_template(path):
    assert template.problems(path) == []


def test_setup_cell_is_identical_everywhere():
    sources = {nbformat.read(p, as_version=4).cells[2].source for p in NOTEBOOKS}
    assert sources == {template.setup_source()}


def test_badges_point_at_each_notebooks_own_path():
    for path in NOTEBOOKS:
        header = nbformat.read(path, as_version=4).cells[0].source
        own = f"/blob/main/notebooks/{path.name}"
        assert header.count(own) == 2, f"{path.name}: both badges must link to {own}"


def test_setup_cell_installs_from_the_repository_without_tensorflow():
    source = template.setup_source()
    assert f"git+{template.repository()}" in source
    assert "tensorflow" not in source.split("import helpers")[0].replace("TensorFlow", "")


def test_check_catches_a_broken_notebook(tmp_path):
    nb = nbformat.read(NOTEBOOKS[0], as_version=4)
    nb.cells[2].source += "\nprint('edited')"
    timing = nbformat.v4.new_code_cell("measure(lambda: 1)", execution_count=99)
    timing.outputs = [nbformat.v4.new_output("error", ename="E", evalue="x", traceback=[])]
    nb.cells.append(timing)
    broken = tmp_path / f"99_{NOTEBOOKS[0].name}"  # another name: its badges now point elsewhere
    nbformat.write(nb, broken)
    found = "\n".join(template.problems(broken))
    assert "setup cell" in found
    assert "badges" in found
    assert "error output" in found
    assert "not executed in order" in found
    assert "nbval-ignore-output" in found


def test_clean_drops_widget_state_and_timing_metadata():
    nb = nbformat.v4.new_notebook()
    nb.metadata["widgets"] = {"state": {}}
    cell = nbformat.v4.new_code_cell("1")
    cell.metadata["execution"] = {"iopub.status.busy": "now"}
    cell.outputs = [nbformat.v4.new_output("display_data", data={
        "application/vnd.jupyter.widget-view+json": {"model_id": "x"}, "text/plain": "Output()"})]
    nb.cells = [cell]
    template.clean(nb)
    assert "widgets" not in nb.metadata
    assert "execution" not in nb.cells[0].metadata
    assert nb.cells[0].outputs == []
