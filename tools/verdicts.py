"""Run notebooks N times and list every recorded verdict per run: does any reading flip between runs?

Each run executes the notebooks as `make run` does (tools.run_notebooks, fast mode unless FAST=0) into
build/verdicts/run-K/; each comparison a notebook makes through helpers.readings is recorded with its verdict
("above", "below", "within noise"). The table marks a key that says "above" in one run and "below" in another (a
flip: a defect) and a key missing from some runs. Exit status 1 on either.

    python -m tools.verdicts --runs 3 [--write docs/verdicts.md] [NOTEBOOK ...]
    python -m tools.verdicts --table-only --runs 3   # the table again, from the runs already in build/verdicts
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

from helpers import report
from tools.run_notebooks import run_one
from tools.template import NOTEBOOKS, ROOT

BUILD = ROOT / "build" / "verdicts"


def verdicts(run_dir: Path, stems: list[str]) -> dict:
    """{(notebook stem, key): (value, verdict)} of the readings one run recorded."""
    found = {}
    for stem in stems:
        for figure in report.read(str(run_dir / f"{stem}.figures.jsonl")):
            if figure.get("verdict"):
                found[(stem, figure["key"])] = (figure["value"], figure["verdict"])
    return found


def table(runs: list[dict]) -> tuple[list[str], int]:
    """Markdown rows, one per key, and the number of defects (flips plus keys missing from a run)."""
    keys = sorted(set().union(*runs))
    rows = ["| notebook | reading | " + " | ".join(f"run {i + 1}" for i in range(len(runs))) + " | |",
            "| --- | --- | " + "--- | " * len(runs) + "--- |"]
    defects = 0
    for key in keys:
        seen = [run.get(key) for run in runs]
        said = {verdict for _, verdict in filter(None, seen)}
        problem = ("FLIPS" if {"above", "below"} <= said else "missing in a run" if None in seen else "")
        defects += bool(problem)
        cells = [f"{value:.2f}x {verdict}" if value is not None else "-" for value, verdict in
                 (s or (None, None) for s in seen)]
        rows.append(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + f" | {problem} |")
    return rows, defects


def machine() -> str:
    """The machine a table was measured on: CPU model and the flags that change results, cores, versions."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("", platform.machine(), platform.processor()):
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    wanted = [f for f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile") if f in flags]
    versions = []
    from importlib.metadata import PackageNotFoundError, version
    for name in ("tensorflow", "tensorflow-cpu", "keras", "jax"):
        try:
            versions.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            pass
    return (f"{model}; {os.cpu_count()} cores; flags {' '.join(wanted) or 'none of avx2/avx512/amx'}; Python "
            f"{platform.python_version()}; {', '.join(versions)}; COURSE_DEVICES="
            f"{os.environ.get('COURSE_DEVICES', '1')}; fast mode {os.environ.get('COURSE_FAST', '0') != '0'}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--build", type=Path, default=BUILD)
    parser.add_argument("--write", type=Path, help="also write the table, with the machine, to this markdown file")
    parser.add_argument("--table-only", action="store_true", help="read the runs already in --build")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    stems = [p.stem for p in paths]
    run_dirs = [args.build.resolve() / f"run-{i + 1}" for i in range(args.runs)]
    for run_dir in run_dirs if not args.table_only else []:
        run_dir.mkdir(parents=True, exist_ok=True)
        for path in paths:
            run_one(path, run_dir)
    rows, defects = table([verdicts(run_dir, stems) for run_dir in run_dirs])
    text = "\n".join(rows)
    print(text)
    print(f"{defects} defect(s): a FLIPS row says above in one run and below in another" if defects
          else "no reading flips between runs, and every run recorded the same readings")
    if args.write:
        args.write.write_text(
            f"# Verdicts over {args.runs} runs\n\nWritten by `python -m tools.verdicts --runs {args.runs} --write "
            f"{args.write}` on {datetime.date.today().isoformat()}.\n\nMachine: {machine()}.\n\nEach cell is the "
            "reading's ratio and its verdict (helpers/readings.py). A flip (above in one run, below in another) is a "
            "defect; \"within noise\" beside \"above\" is not.\n\n" + text + "\n", encoding="utf-8")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
