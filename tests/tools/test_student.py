"""The student copy (tools/student.py, `make student`): no folded solution of any chapter survives in it, everything
else does. The solutions are found in the real notebooks by this file's own plain search, not the tool's regex."""

from __future__ import annotations

import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from tools import student

NOTEBOOKS = sorted(student.NOTEBOOKS.glob("*.ipynb"))
MARK = "<details><summary>Solution</summary>"
END = "</details>"
CHECK = "helpers.exercises.check("
BADGES = "[![Open in Colab](https://colab.badge)](https://colab/nb) [![Open in Kaggle](https://kaggle.badge)](https://k/nb)"


def folded(source: str) -> list[str]:
    """Each folded solution in `source`, from its marker to the first </details> after it."""
    blocks, start = [], source.find(MARK)
    while start != -1:
        end = source.index(END, start) + len(END)
        blocks.append(source[start:end])
        start = source.find(MARK, end)
    return blocks


def without(source: str, blocks) -> str:
    for block in blocks:
        source = source.replace(block, "")
    return source


def squeezed(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def shown(cell) -> str:
    """What a reader of the cell sees: its source and its stored text outputs."""
    outputs = cell.get("outputs", [])
    return "\n".join([cell.source, *(str(o.get("text", "")) for o in outputs),
                      *(str(v) for o in outputs for k, v in o.get("data", {}).items() if k.startswith("text/"))])


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    """{name: (the notebook, its student copy as written to disk)}."""
    out = tmp_path_factory.mktemp("student")
    student.write_copies(NOTEBOOKS, out)
    return {p.name: (nbformat.read(p, as_version=4), nbformat.read(out / "notebooks" / p.name, as_version=4))
            for p in NOTEBOOKS}


def solutions(nb) -> list[str]:
    return [block for cell in nb.cells if cell.cell_type == "markdown" for block in folded(cell.source)]


def test_the_chapters_fold_solutions_and_check_exercises():
    notebooks = [nbformat.read(p, as_version=4) for p in NOTEBOOKS]
    assert sum(len(solutions(nb)) for nb in notebooks) >= len(NOTEBOOKS)  # else the tests below prove nothing
    assert all(any(CHECK in c.source for c in nb.cells) for nb in notebooks)


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_no_line_of_any_solution_is_left(copies, name):
    nb, copy = copies[name]
    blocks = solutions(nb)
    rest = {line.strip() for cell in nb.cells for line in without(shown(cell), blocks).splitlines()}
    left = "\n".join(shown(cell) for cell in copy.cells)
    assert "<summary>Solution" not in left
    left_lines = {line.strip() for line in left.splitlines()}
    for block in blocks:
        # The solution's own lines: those that appear nowhere else in the chapter (a solution may repeat a line of
        # the starting code, which stays).
        own = {line.strip() for line in block.splitlines()} - rest - {"", MARK, END, "```", "```python"}
        assert own, f"{name}: a solution with no line of its own: {block[:80]!r}"
        assert not own & left_lines, name


@pytest.mark.parametrize("name", [p.name for p in NOTEBOOKS])
def test_every_other_cell_and_every_check_is_kept_unchanged(copies, name):
    nb, copy = copies[name]
    kept = {cell.id: cell for cell in copy.cells}
    expected_ids = []
    for i, cell in enumerate(nb.cells):
        blocks = folded(cell.source) if cell.cell_type == "markdown" else []
        if blocks:
            rest = without(cell.source, blocks)
            if rest.strip():
                expected_ids.append(cell.id)
                assert squeezed(kept[cell.id].source) == squeezed(rest), f"{name}, cell {i}"
            continue
        expected_ids.append(cell.id)
        if i == 0:  # the title cell: its badges give way to the note, every other line stays
            lines = kept[cell.id].source.split("\n")
            assert lines.count(student.NOTE) == 1 and "Open in Colab" not in kept[cell.id].source
            assert [x for x in lines if x != student.NOTE] == [x for x in cell.source.split("\n") if "Open in" not in x]
        else:
            assert kept[cell.id] == cell, f"{name}, cell {i}"
    assert [cell.id for cell in copy.cells] == expected_ids
    checks = [c for c in nb.cells if CHECK in c.source]
    assert checks and checks == [c for c in copy.cells if CHECK in c.source]


def test_the_copies_are_valid_notebooks(copies):
    for nb, copy in copies.values():
        nbformat.validate(copy)
        assert copy.metadata == nb.metadata


def md(text):
    return new_markdown_cell(text)


def check_cell(source, verdict):
    return new_code_cell(source, outputs=[new_output("stream", name="stdout", text=verdict + "\n")])


def title():
    return md(f"# Chapter X\n\n{BADGES}\n\nWhat you will learn.")


EXERCISE = [md("### Your turn: a number\n\nHow many?"),
            check_cell('answer = None\n\nhelpers.exercises.check("x.n", answer)', "[x.n] Not answered yet: ...")]


def test_a_solution_cell_goes_and_its_exercise_stays():
    nb = new_notebook(cells=[title(), *EXERCISE, md(f"{MARK}\n\n`answer = 6 * 7`, that is 42.\n{END}")])
    copy = student.student_copy(nb)
    assert [c.id for c in copy.cells] == [c.id for c in nb.cells[:3]]
    assert copy.cells[1:] == nb.cells[1:3] and "that is 42" not in str(copy)
    assert copy.cells[0].source == f"# Chapter X\n\n{student.NOTE}\n\nWhat you will learn."
    assert len(nb.cells) == 4 and BADGES in nb.cells[0].source  # the caller's notebook is left whole


def test_a_solution_inside_a_cell_is_cut_out_and_the_rest_kept():
    notes = "<details><summary>Version notes</summary>\n\nTF 2.3 did it differently.\n</details>"
    cell = md(f"Before.\n\n{MARK}\n\n```python\nanswer = 6 * 7\n```\n{END}\n\n## Next section\n\n{notes}\n\n"
              f"  <details open>\n<summary><b>Solution</b> (second part)</summary>\nanswer += 1\n</details>\nAfter.")
    copy = student.student_copy(new_notebook(cells=[title(), *EXERCISE, cell]))
    assert copy.cells[-1].source == f"Before.\n\n## Next section\n\n{notes}\n\nAfter."


@pytest.mark.parametrize("cell, reason", [
    (md(f"{MARK}\n\nanswer = 42"), "without its closing </details>"),
    (md(f"{MARK}\n<details><summary>Why</summary>\nbecause\n{END}\nanswer = 42\n{END}"), "inside a folded solution"),
    (new_code_cell(f"# {MARK}\n# answer = 42\n# {END}"), "in a code cell"),
    (check_cell("print(1)", f"{MARK} answer = 42 {END}"), "in the stored output"),
    (check_cell('answer = 42\n\nhelpers.exercises.check("x.n", answer)', "[x.n] Correct. Well done."),
     "says an exercise is solved"),
], ids=["unclosed", "nested", "code cell", "output", "solved verdict"])
def test_a_solution_that_cannot_be_cut_out_cleanly_is_refused_with_its_place(cell, reason):
    nb = new_notebook(cells=[title(), *EXERCISE, cell])
    with pytest.raises(student.SolutionError, match=f"^07_x.ipynb, cell 3: .*{re.escape(reason)}"):
        student.student_copy(nb, "07_x.ipynb")


def test_make_student_writes_every_copy_or_none(tmp_path, monkeypatch, capsys):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(new_notebook(cells=[title(), *EXERCISE, md(f"{MARK}\n42\n{END}")]), source / "00_a.ipynb")
    nbformat.write(new_notebook(cells=[title(), md(f"{MARK}\n42")]), source / "01_b.ipynb")
    monkeypatch.setattr(student, "NOTEBOOKS", source)
    out = tmp_path / "out"
    assert student.main(["--out", str(out)]) == 1
    assert not out.exists()
    assert "nothing written. 01_b.ipynb, cell 1: a folded solution without its closing" in capsys.readouterr().err

    (source / "01_b.ipynb").unlink()
    (out / "notebooks").mkdir(parents=True)
    (out / "notebooks" / "99_removed_chapter.ipynb").write_text("{}")
    assert student.main(["--out", str(out)]) == 0
    assert sorted(p.name for p in (out / "notebooks").iterdir()) == ["00_a.ipynb"]
    assert "1 student notebooks in" in capsys.readouterr().out


def test_the_copy_never_overwrites_the_course_notebooks():
    with pytest.raises(SystemExit, match="would overwrite the course's own notebooks"):
        student.write_copies(NOTEBOOKS, student.ROOT)
