"""`make run`: execute every notebook into build/ (notebooks, HTML pages) and write build/report.md.

Fast mode unless FAST=0; COURSE_DEVICES as set. Notebooks note their key figures with
helpers.report.record(); they land in the report's last column. A notebook fails on anything
tools/output_checks.py finds in its outputs (an error, stray stderr, a cell not run, a missing verdict).

    python tools/run_notebooks.py [--build DIR] [--jobs N] [NOTEBOOK ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbconvert import HTMLExporter

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import report  # noqa: E402
from helpers.errors import flag_from_env  # noqa: E402
from tools import output_checks  # noqa: E402
from tools.template import NOTEBOOKS, ROOT, clean  # noqa: E402

BUILD = ROOT / "build"


def run_one(path: Path, build: Path | None = None) -> dict:
    build = build or BUILD
    figures_file = build / f"{path.stem}.figures.jsonl"
    figures_file.unlink(missing_ok=True)
    os.environ[report.REPORT_FILE_VAR] = str(figures_file)
    stored = nbformat.read(path, as_version=4)
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:  # a cell the run never reaches shows no output, as in JupyterLab
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    start, error = time.perf_counter(), ""
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
                       ).execute()
    except Exception as err:  # a failing notebook is reported, the others still run
        error = f"{type(err).__name__}: {str(err).strip().splitlines()[-1][:120] if str(err).strip() else ''}"
    widgets = output_checks.widget_problems(nb) if flag_from_env("COURSE_WIDGETS", default=True) else []
    slowest = slowest_cells(nb)  # before clean(), which drops the timing metadata
    clean(nb)  # drops the widget views
    found = output_checks.problems(nb, stored) + widgets or ([error] if error else [])
    more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
    status = f"FAILED: {'; '.join(found[:3])}{more}" if found else "OK"
    seconds = time.perf_counter() - start
    nbformat.write(nb, build / path.name)
    html, _ = HTMLExporter().from_notebook_node(nb)
    (build / f"{path.stem}.html").write_text(html, encoding="utf-8")
    figures = "; ".join(f"{f['key']}: {f['value']}{(' ' + f['unit']) if f['unit'] else ''}"
                        f"{(' (' + f['verdict'] + ')') if f.get('verdict') else ''}"
                        for f in report.read(str(figures_file)))
    print(f"{path.name}: {status} in {seconds:.0f} s (slowest cells: {slowest})", flush=True)
    return {"notebook": path.name, "status": status, "seconds": seconds, "figures": figures or "-"}


def slowest_cells(nb, count: int = 3) -> str:
    """The `count` cells that took longest, from nbclient's timing metadata: where a slow run spent its time."""
    from datetime import datetime

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
    parser.add_argument("--jobs", type=int, default=1, help="notebooks executed at once, each in its own kernel")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    args = parser.parse_args(argv)
    build = args.build.resolve()
    build.mkdir(parents=True, exist_ok=True)
    paths = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(run_one, paths, [build] * len(paths)))
    print(f"report: {write_report(rows, build)}")
    return 0 if all(r["status"] == "OK" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
