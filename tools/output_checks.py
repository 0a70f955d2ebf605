"""What an executed notebook's outputs show a learner that is wrong, whoever ran it: nbclient (tools/run_notebooks.py,
for `make run` and `make replica`) or JupyterLab (tools/browser.py, on the copy JupyterLab saved after Run All).

    problems(executed, stored) -> ["cell 3: raised ZeroDivisionError: division by zero", ...]  # [] when all is well

An error, log lines on stderr (JupyterLab shows them in red) unless the stored notebook shows stderr in that cell on
purpose (chapter 6's JPEG decoder lines), a code cell not run, a figure shown as text, an exercise without a verdict.
"""

from __future__ import annotations

import re

VERDICT = re.compile(r"\[[\w.]+\] (Correct|Not yet|Not answered yet)")
FIGURE_AS_TEXT = re.compile(r"^<Figure size [^>]*>$", re.M)


def problems(executed, stored) -> list[str]:
    """`executed` and `stored`: the same notebook (nbformat nodes) after a run and as the repository stores it."""
    if [cell.cell_type for cell in executed.cells] != [cell.cell_type for cell in stored.cells]:
        return [f"the run has {len(executed.cells)} cells, the notebook {len(stored.cells)}: not the same notebook?"]
    found = []
    for number, (cell, original) in enumerate(zip(executed.cells, stored.cells), 1):
        if cell.cell_type == "code":
            found += [f"cell {number}: {problem}" for problem in cell_problems(cell, original)]
    return found


def cell_problems(cell, original) -> list[str]:
    outputs = cell.get("outputs", [])
    found = [f"raised {output.ename}: {output.evalue}"[:200] for output in outputs if output.output_type == "error"]
    if not any(output.get("name") == "stderr" for output in original.get("outputs", [])):
        found += [f"shows log lines on stderr (red in JupyterLab): {_first_line(output.text)}"
                  for output in outputs if output.get("name") == "stderr"]
    if cell.source.strip() and cell.get("execution_count") is None:
        found.append("did not run: the run stopped before it")
    if any(FIGURE_AS_TEXT.search(output.get("data", {}).get("text/plain", "")) and "image/png" not in output.data
           for output in outputs if "data" in output):
        found.append("a figure shown as text (<Figure size ...>) instead of a picture")
    if "exercises.check(" in cell.source and not VERDICT.search(stream_text(cell)):
        found.append("an exercise check shows no verdict")
    return found


def stream_text(cell) -> str:
    """All a code cell printed (stdout and stderr), in order."""
    return "".join(output.text for output in cell.get("outputs", []) if output.output_type == "stream")


def _first_line(text: str) -> str:
    return next((line[:200] for line in text.splitlines() if line.strip()), "")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def widget_problems(executed) -> list[str]:
    """For a run with widgets on (`make replica P=colab`: Colab's ipywidgets 7.7.1): a cell that shows chapter 2's
    calculator must have built its widgets. Call before run_notebooks.clean(), which drops widget views from stored
    outputs."""
    return [f"cell {number}: the calculator built no widgets" for number, cell in enumerate(executed.cells, 1)
            if cell.cell_type == "code" and "calculator.show(" in cell.source
            and not any(WIDGET_VIEW in output.get("data", {}) for output in cell.get("outputs", []))]
