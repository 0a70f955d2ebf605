"""The course's one notebook executor: `make run` (into build/, with a report) and `make outputs` (in place).

    python -m tools.run_notebooks [--build DIR] [--jobs N] [NOTEBOOK ...]   # into build/, then build/report.md
    python -m tools.run_notebooks --in-place NOTEBOOK ...                    # refresh the stored outputs

Each notebook runs top to bottom in a fresh kernel, in its own folder, with the environment the caller sets
(COURSE_FAST, COURSE_DEVICES, COURSE_WIDGETS), and is cleaned as the repository stores notebooks (clean()). A
notebook fails on anything tools/output_checks.py finds in its outputs (an error, stray stderr, a cell not run, a
missing verdict). Into build/: notebooks note their key figures with helpers.report.record(); they land in the
report's last column. In place: a notebook is written back unless an error stopped its run.
nbval (`make test`) compares stored outputs; tools.fast_mode_minutes and tools.verdicts call run_one().
"""

from __future__ import annotations

import argparse
import copy
import functools
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

from helpers import report
from helpers.errors import flag_from_env
from tools import output_checks
from tools.template import NOTEBOOKS, ROOT, metadata_for

BUILD = ROOT / "build"
PRINTBAR_TIME = re.compile(r"^(={80})\d\d:\d\d:\d\d\.\d{3}(?: [^\s]+)?", re.MULTILINE)


@dataclass
class Run:
    notebook: nbformat.NotebookNode  # executed and cleaned
    problems: list[str]  # [] when the notebook passed
    finished: bool  # ran to the end without an error stopping it
    seconds: float
    slowest: str  # the slowest cells, where a slow run spent its time


def execute(path: Path, timeout: int = 600) -> Run:
    """Run `path` top to bottom in a fresh kernel, in its own folder; check and clean what it shows."""
    stored = nbformat.read(path, as_version=4)
    nb = copy.deepcopy(stored)
    for cell in nb.cells:  # a cell the run never reaches shows no output, as in JupyterLab
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    start, error = time.perf_counter(), ""
    try:
        NotebookClient(nb, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
    except Exception as err:  # a failing notebook is reported, the others still run
        error = f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:120] if str(err).strip() else ''}"
    seconds = time.perf_counter() - start
    widgets = output_checks.widget_problems(nb) if flag_from_env("COURSE_WIDGETS", default=True) else []
    slowest = slowest_cells(nb)  # before clean(), which drops the timing metadata
    clean(nb)  # drops the widget views
    found = output_checks.problems(nb, stored) + widgets or ([error] if error else [])
    return Run(nb, found, not error, seconds, slowest)


def clean(nb) -> None:
    """Drop what differs between machines and runs but says nothing: widget state, timings, and the wall-clock time
    printbar() prints (the stored line shows where it goes, HH:MM:SS.mmm TZ, so a re-run changes no stored text)."""
    nb.metadata.pop("widgets", None)
    nb.metadata.pop("papermill", None)
    nb.metadata.update(metadata_for(nb))
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = [o for o in cell.outputs if output_checks.WIDGET_VIEW not in o.get("data", {})]
            for o in cell.outputs:
                if o.output_type == "stream":
                    o.text = PRINTBAR_TIME.sub(r"\1HH:MM:SS.mmm TZ", o.text)


def status(problems: list[str]) -> str:
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"FAILED: {'; '.join(problems[:3])}{more}" if problems else "OK"


def run_one(path: Path, build: Path | None = None) -> dict:
    """Execute `path` into `build` (the notebook, its HTML page, its recorded figures); the report's row."""
    build = build or BUILD
    figures_file = build / f"{path.stem}.figures.jsonl"
    figures_file.unlink(missing_ok=True)
    os.environ[report.REPORT_FILE_VAR] = str(figures_file)
    run = execute(path)
    nbformat.write(run.notebook, build / path.name)
    html, _ = HTMLExporter().from_notebook_node(run.notebook)
    (build / f"{path.stem}.html").write_text(html, encoding="utf-8")
    figures = "; ".join(f"{f['key']}: {f['value']}{(' ' + f['unit']) if f['unit'] else ''}"
                        f"{(' (' + f['verdict'] + ')') if f.get('verdict') else ''}"
                        for f in report.read(str(figures_file)))
    print(f"{path.name}: {status(run.problems)} in {run.seconds:.0f} s (slowest cells: {run.slowest})", flush=True)
    return {"notebook": path.name, "status": status(run.problems), "seconds": run.seconds, "figures": figures or "-"}


def run_in_place(path: Path) -> dict:
    """Execute `path` and store the outputs in it unless an error stopped the run; the report's row. Other problems
    are stored and reported (a stored stderr line is expected there from then on: read them before committing)."""
    os.environ.pop(report.REPORT_FILE_VAR, None)
    run = execute(path)
    if run.finished:
        nbformat.write(run.notebook, path)
    kept = "" if run.finished else "; an error stopped it, so its stored outputs are left as they were"
    print(f"{path.name}: {status(run.problems)} in {run.seconds:.0f} s{kept}", flush=True)
    return {"notebook": path.name, "status": status(run.problems), "seconds": run.seconds, "figures": "-"}


def slowest_cells(nb, count: int = 3) -> str:
    """The `count` cells that took longest, from nbclient's timing metadata: where a slow run spent its time."""
    took = []
    for number, cell in enumerate(nb.cells, 1):
        times = cell.metadata.get("execution", {})
        if "iopub.execute_input" in times and "shell.execute_reply" in times:
            start, end = (datetime.fromisoformat(times[key].replace("Z", "+00:00"))
                          for key in ("iopub.execute_input", "shell.execute_reply"))
            took.append(((end - start).total_seconds(), number))
    return ", ".join(f"cell {number} {seconds:.0f} s" for seconds, number in sorted(took, reverse=True)[:count])


def write_report(rows: list[dict], build: Path | None = None) -> Path:
    mode = "fast" if os.environ.get("COURSE_FAST", "0") not in ("0", "") else "full"
    lines = [
        "# Course run report", "",
        f"Mode: {mode}; COURSE_DEVICES={os.environ.get('COURSE_DEVICES', '1')}; "
        f"{os.cpu_count()} CPU cores visible.", "",
        "| notebook | status | wall time | key figures |", "| --- | --- | --- | --- |",
    ]
    lines += [f"| {r['notebook']} | {r['status']} | {r['seconds']:.0f} s | {r['figures']} |" for r in rows]
    out = (build or BUILD) / "report.md"
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=BUILD, help="where executed notebooks and the report go")
    parser.add_argument("--in-place", action="store_true",
                        help="store the outputs in the notebooks (unless an error stopped the run); no report")
    parser.add_argument("--jobs", type=int, default=1, help="notebooks executed at once, each in its own kernel")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    build = args.build.resolve()
    run = run_in_place if args.in_place else functools.partial(run_one, build=build)
    if not args.in_place:
        build.mkdir(parents=True, exist_ok=True)
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(run, paths))
    else:
        rows = [run(path) for path in paths]
    if not args.in_place:
        print(f"report: {write_report(rows, build)}")
    return 0 if all(r["status"] == "OK" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
