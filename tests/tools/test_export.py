"""tools/export.py: the notebooks are the source of the code they teach; the package's copies must follow them."""

import ast
import shutil
from pathlib import Path

import nbformat
import pytest

from tools import export

ROOT = Path(__file__).resolve().parents[2]
CH6 = ROOT / "notebooks" / "06_input_pipelines.ipynb"


def test_the_generated_files_are_current():
    assert export.stale() == [], "edit the notebooks, not the generated files, then run `make export`"


def test_every_chapter_module_and_program_is_generated_from_a_notebook():
    on_disk = {str(p.relative_to(ROOT)) for folder in ("chapters", "programs")
               for p in (ROOT / "helpers" / folder).glob("[!_]*.py")}
    assert set(export.generated_files()) == on_disk


def test_each_cell_is_named_in_its_module_by_its_section_not_its_number():
    text = export.generated_files([CH6])["helpers/chapters/ch06_input_pipelines.py"]
    for _, section, _, code, _ in export.exported_cells(CH6):
        assert f"# notebooks/06_input_pipelines.ipynb, in {section[:100]}\n{code}\n" in text
    assert "cell " not in text.split('"""')[2].split("\n# notebooks/")[0]  # no cell numbers, which go stale
    assert text.startswith('"""Chapter 6\'s code, generated from notebooks/06_input_pipelines.ipynb by `make export`')
    ast.parse(text)


def edited_copy(tmp_path, edit) -> Path:
    copy = tmp_path / CH6.name
    nb = nbformat.read(CH6, as_version=4)
    index = export.exported_cells(CH6)[0][0]
    nb.cells[index].source = edit(nb.cells[index].source)
    nbformat.write(nb, copy)
    return copy


def test_an_edited_cell_makes_its_module_stale_until_exported(tmp_path):
    module = tmp_path / "helpers" / "chapters" / "ch06_input_pipelines.py"
    module.parent.mkdir(parents=True)
    shutil.copy(ROOT / "helpers" / "chapters" / module.name, module)
    assert export.stale([CH6], root=tmp_path) == []
    copy = edited_copy(tmp_path, lambda source: source + "\nEDITED = True")
    assert export.stale([copy], root=tmp_path) == ["helpers/chapters/ch06_input_pipelines.py"]
    module.write_text(export.generated_files([copy])["helpers/chapters/ch06_input_pipelines.py"])
    assert export.stale([copy], root=tmp_path) == []
    assert "EDITED = True" in module.read_text()


def notebook(path: Path, *cells: str) -> Path:
    """A notebook at `path` of these cells: markdown where the text starts with '#' or prose, else code."""
    code = ("#|", "%%", "NOT")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) if c.startswith(code)
                                         else nbformat.v4.new_markdown_cell(c) for c in cells])
    nbformat.write(nb, path)
    return path


def test_the_marker_is_short_and_only_a_first_line_marks_a_cell(tmp_path):
    assert len(export.MARKER) <= 12
    path = notebook(tmp_path / "06_input_pipelines.ipynb", "## 1. A section", "#|export\nTAUGHT = 1",
                    "NOT = 2\n#|export",  # the marker must be the first line
                    "#|exported\nNOT_EITHER = 3")
    assert export.exported_cells(path) == [(1, "1. A section", "helpers/chapters/ch06_input_pipelines.py",
                                            "TAUGHT = 1", False)]


def test_a_writefile_cell_is_a_program_of_its_own(tmp_path):
    path = notebook(tmp_path / "07_beyond_one_machine.ipynb",
                    "%%writefile ch7_programs/worker.py\n#|export\nprint('hi')")
    [(target, text)] = export.generated_files([path]).items()
    assert target == "helpers/programs/worker.py"  # named by %%writefile, not by the marker
    assert text.startswith("# Generated from notebooks/07_beyond_one_machine.ipynb by `make export`")
    assert text.endswith("(tools/export.py).\nprint('hi')\n") and "cell 0" not in text


def test_writefile_a_cells_continue_the_program_a_writefile_cell_started(tmp_path):
    first = "%%writefile ch7_programs/worker.py\n#|export\ndef main():\n    pass"
    rest = ("## 2. Next", "%%writefile -a ch7_programs/worker.py\n#|export\nmain()")
    [(target, text)] = export.generated_files([notebook(tmp_path / "07_a.ipynb", first, *rest)]).items()
    assert target == "helpers/programs/worker.py"
    assert text.endswith("(tools/export.py).\ndef main():\n    pass\n\n\nmain()\n")
    with pytest.raises(SystemExit, match="before a `%%writefile` cell wrote it"):  # no cell started the program
        export.generated_files([notebook(tmp_path / "07_b.ipynb", *rest)])


def test_a_comment_in_a_markdown_code_block_is_not_a_section(tmp_path):
    path = notebook(tmp_path / "06_input_pipelines.ipynb", "## 2. The worker",
                    "Run it:\n```python\n# on each machine\nmain()\n```", "#|export\nTAUGHT = 1")
    assert export.exported_cells(path)[0][1] == "2. The worker"


def test_check_reports_stale_files_and_exits_1(monkeypatch, capsys):
    monkeypatch.setattr(export, "stale", lambda: ["helpers/chapters/ch06_input_pipelines.py"])
    assert export.main(["--check"]) == 1
    assert "helpers/chapters/ch06_input_pipelines.py is stale: run `make export`" in capsys.readouterr().out
