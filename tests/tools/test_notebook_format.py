"""tools/notebook_format.py: ruff format for the code cells a learner may edit, nbformat's JSON for the file, and the
generated cells left exactly as tools/template.py wants them."""

import json

import nbformat

from tools import notebook_format

UNFORMATTED = "x = [1,\n     2]\ny=dict(a = 1)"
FORMATTED = "x = [1, 2]\ny = dict(a=1)"


def notebook(tmp_path, *, indent=1):
    exported = nbformat.v4.new_code_cell("#|export\n" + UNFORMATTED)
    cells = [nbformat.v4.new_markdown_cell("# Title\n\nx  =  1"), nbformat.v4.new_code_cell(UNFORMATTED),
             nbformat.v4.new_code_cell(UNFORMATTED), nbformat.v4.new_code_cell(UNFORMATTED), exported,
             nbformat.v4.new_code_cell("%%writefile a.py\nz=(1,\n 2)")]
    path = tmp_path / "00_x.ipynb"
    text = json.dumps(nbformat.v4.new_notebook(cells=cells), indent=indent)  # indent=2: as Colab saves a notebook
    path.write_text(text)
    return path


def test_only_the_code_cells_the_formatter_owns_are_formatted(tmp_path):
    path = notebook(tmp_path)
    assert notebook_format.main([str(path)]) == 0
    sources = [cell.source for cell in nbformat.read(path, as_version=4).cells]
    assert sources == ["# Title\n\nx  =  1", UNFORMATTED, UNFORMATTED, FORMATTED,
                       "#|export\n" + FORMATTED,
                       "%%writefile a.py\nz=(1,\n 2)"]
    assert path.read_text() == nbformat.writes(nbformat.read(path, as_version=4)) + "\n"


def test_check_names_an_unformatted_notebook_and_changes_nothing(tmp_path, capsys):
    path = notebook(tmp_path)
    before = path.read_text()
    assert notebook_format.main(["--check", str(path)]) == 1
    assert path.read_text() == before
    assert "would reformat" in capsys.readouterr().out
    notebook_format.main([str(path)])
    assert notebook_format.main(["--check", str(path)]) == 0


def test_check_catches_a_notebook_saved_in_another_json_layout(tmp_path):
    path = notebook(tmp_path)
    notebook_format.main([str(path)])
    formatted = nbformat.read(path, as_version=4)
    path.write_text(json.dumps(formatted, indent=2))  # same cells, Colab's layout
    assert notebook_format.main(["--check", str(path)]) == 1
    notebook_format.main([str(path)])
    assert nbformat.read(path, as_version=4) == formatted
    assert notebook_format.main(["--check", str(path)]) == 0
