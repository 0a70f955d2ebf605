"""One formatter for the notebooks: `ruff format` (the project's ruff settings) for the code cells, and the file as
nbformat writes it (as JupyterLab saves it), so a notebook saved by Colab, Kaggle or another editor reads the same.

    python -m tools.notebook_format [NOTEBOOK ...]          # rewrite them (every notebook when none is named)
    python -m tools.notebook_format --check [NOTEBOOK ...]  # name those it would change and exit 1 (make lint)

Left as they are: the parameters and setup cells, which tools/template.py generates and compares exactly. Formatting
changes no output, so a formatted notebook needs no new run; after it, `make export` carries formatted exported cells
into helpers/chapters.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
GENERATED = (1, 2)  # the parameters cell and the setup cell (tools/template.py)


def formatted_cells(nb) -> list[int]:
    """The indices of the code cells the formatter owns: all but the generated ones."""
    return [i for i, cell in enumerate(nb.cells) if cell.cell_type == "code" and i not in GENERATED]


def ruff_format(sources: list[str], name: str) -> list[str]:
    """`sources` (code cells) as `ruff format` writes them, with the settings pyproject.toml gives notebooks/NAME."""
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    notebook = nbformat.writes(nbformat.v4.new_notebook(cells=cells))
    proc = subprocess.run([sys.executable, "-m", "ruff", "format", "--stdin-filename", f"notebooks/{name}", "-"],
                          input=notebook, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode:
        raise SystemExit(f"{name}: ruff format failed: {proc.stderr.strip()}")
    return ["".join(cell["source"]) for cell in json.loads(proc.stdout)["cells"]]


def formatted(text: str, name: str) -> str:
    """The notebook file `text` (named `name`) as the formatter writes it."""
    nb = nbformat.reads(text, as_version=4)
    owned = formatted_cells(nb)
    for i, source in zip(owned, ruff_format([nb.cells[i].source for i in owned], name)):
        nb.cells[i].source = source
    out = nbformat.writes(nb)
    return out if out.endswith("\n") else out + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a notebook would change")
    parser.add_argument("notebooks", nargs="*", type=Path)
    args = parser.parse_args(argv)
    unformatted = []
    for path in args.notebooks or sorted(NOTEBOOKS.glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        new = formatted(text, path.name)
        if new != text:
            unformatted.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    shown = [str(p.resolve().relative_to(ROOT) if p.resolve().is_relative_to(ROOT) else p) for p in unformatted]
    for name in shown:
        print(f"{'would reformat' if args.check else 'reformatted'} {name}")
    if args.check and unformatted:
        print("run: python -m tools.notebook_format " + " ".join(shown))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
