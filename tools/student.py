"""The student copy of the notebooks: every chapter without its folded solutions (`make student`).

    python -m tools.student                       # writes build/student/notebooks/NN_*.ipynb
    python -m tools.student --out /tmp/handout    # writes /tmp/handout/notebooks/NN_*.ipynb

The course folds each solution into a markdown block, `<details><summary>Solution</summary> ... </details>`, after
the exercise's check cell. The copy cuts those blocks out (a cell left empty goes too) and replaces the Colab and
Kaggle badges, which open the release's full notebook with its solutions, with a line naming the copy. Everything
else is kept as it is, stored outputs included: a check cell's output is the verdict the starting code gets, which a
learner sees anyway when running it. A solution marker found anywhere else, or a stored verdict that says an exercise
is solved, stops the copy before anything is written: that notebook holds a solution this tool cannot cut out.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
# A folded solution's start, also as <details open> or <summary><b>Solution</b>: a missed marker would leak it.
MARKER = r"<details\b[^>]*>\s*<summary>(?:\s|<[^>]*>)*Solution"
SOLUTION = re.compile(MARKER, re.IGNORECASE)
# One folded solution, up to the first </details> after it (with the spaces and newline around it).
BLOCK = re.compile(rf"[ \t]*{MARKER}.*?</details>[ \t]*\n?", re.IGNORECASE | re.DOTALL)
BADGE = re.compile(r"!\[Open in (Colab|Kaggle)\]")
NOTE = "*Student copy: the exercises' solutions are left out.*"
SOLVED = "Correct. Well done."  # helpers.exercises.check's verdict on a right answer


class SolutionError(ValueError):
    """A notebook holds a solution that cannot be cut out cleanly."""


def cut_solutions(source: str, where: str) -> str:
    """`source` (a markdown cell's) without its folded solutions; SolutionError if one is not a closed block."""
    for block in BLOCK.findall(source):
        if block.count("<details") > 1:  # nested: the first </details> closes the inner block, not the solution
            raise SolutionError(f"{where}: a <details> inside a folded solution; keep solutions flat")
    kept = BLOCK.sub("", source)
    if SOLUTION.search(kept):
        raise SolutionError(f"{where}: a folded solution without its closing </details>")
    return re.sub(r"\n{3,}", "\n\n", kept).strip("\n")  # no gap left where a block was


def without_badges(header: str) -> str:
    """The title cell with its badge line(s) replaced by NOTE."""
    lines = header.split("\n")
    badges = [i for i, line in enumerate(lines) if BADGE.search(line)]
    if badges:
        lines[badges[0]] = NOTE
    return "\n".join(line for i, line in enumerate(lines) if i not in badges[1:])


def refuse_hidden_solutions(cell, where: str) -> None:
    """SolutionError where a code or raw cell, or a stored output, shows a solution."""
    if cell.cell_type != "markdown" and SOLUTION.search(cell.source):
        raise SolutionError(f"{where}: a folded solution in a {cell.cell_type} cell; fold it in a markdown cell")
    for output in cell.get("outputs", []):
        text = str(output.get("text", "")) + str(output.get("data", ""))
        if SOLUTION.search(text):
            raise SolutionError(f"{where}: a folded solution in the stored output")
        if SOLVED in text:
            raise SolutionError(f"{where}: the stored output says an exercise is solved, so the cell holds its "
                                "solution: put the starting code back and run it again (`make outputs`)")


def student_copy(nb, name: str = "notebook"):
    """A copy of `nb` (nbformat v4) without its solutions and badges; `name` goes into error messages."""
    nb = nbformat.from_dict(nb)  # a deep copy: the caller's notebook stays whole
    cells = []
    for i, cell in enumerate(nb.cells):
        where = f"{name}, cell {i}"
        refuse_hidden_solutions(cell, where)
        if cell.cell_type == "markdown" and SOLUTION.search(cell.source):
            cell.source = cut_solutions(cell.source, where)
            if not cell.source.strip():
                continue
        cells.append(cell)
    if cells and cells[0].cell_type == "markdown":
        cells[0].source = without_badges(cells[0].source)
    nb.cells = cells
    return nb


def write_copies(sources: list[Path], out: Path) -> list[Path]:
    """Each of `sources` copied into out/notebooks/ without solutions: all checked first, then written."""
    folder = out / "notebooks"
    if folder.resolve() == NOTEBOOKS.resolve():
        raise SystemExit(f"--out {out}: that would overwrite the course's own notebooks; choose another folder")
    copies = {path.name: student_copy(nbformat.read(path, as_version=4), path.name) for path in sources}
    folder.mkdir(parents=True, exist_ok=True)
    for stale in set(p.name for p in folder.glob("*.ipynb")) - set(copies):  # a chapter renamed or removed since
        (folder / stale).unlink()
    for name, nb in copies.items():
        nbformat.write(nb, folder / name)
    return [folder / name for name in copies]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "student",
                        help="the copies go to OUT/notebooks/ (default: build/student)")
    args = parser.parse_args(argv)
    sources = sorted(NOTEBOOKS.glob("*.ipynb"))
    if not sources:
        raise SystemExit(f"make student: no notebooks in {NOTEBOOKS}")
    try:
        written = write_copies(sources, args.out)
    except SolutionError as err:
        print(f"make student: nothing written. {err}", file=sys.stderr)
        return 1
    print(f"{len(written)} student notebooks in {written[0].parent}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
