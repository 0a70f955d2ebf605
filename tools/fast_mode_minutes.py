"""Measure each notebook's wall time in fast mode on 2 CPU cores, for the instructor's page (docs/instructors.md).

    python -m tools.fast_mode_minutes --runs 3                          # every notebook, 3 runs each
    python -m tools.fast_mode_minutes --runs 1 notebooks/01_single_gpu.ipynb
    python -m tools.fast_mode_minutes --runs 1 --devices 4                # the same with 4 logical devices

Each notebook runs `--runs` times, as `make run` runs it (tools/run_notebooks.run_one: a fresh kernel, fast mode,
`--devices` logical devices (default 2), no widgets), in a process pinned to `--cores` CPU cores where the system
allows it. The min/median/max seconds and the machine (CPU model, cores, date, TensorFlow and Keras versions) go to
docs/fast_mode_minutes.json, from which `make site` writes the page's tables: 2 devices, as `make run`, in
"notebooks", other counts in "other_devices" (fast mode must stay within 90 s with 1 to 4). Notebooks measured now
replace their rows; rows measured on another machine (CPU model or cores) are dropped, so the table describes one
machine. A run that fails records nothing: its time would not be the notebook's.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import tempfile
from pathlib import Path

from tools import run_notebooks
from tools.template import NOTEBOOKS, ROOT

OUT = ROOT / "docs" / "fast_mode_minutes.json"
ENV = {"COURSE_FAST": "1", "COURSE_DEVICES": "2", "COURSE_WIDGETS": "0"}  # as `make run`; --devices sets the count


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def version(*names: str) -> str:
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "not installed"


def pin(cores: int) -> int:
    """Pin this process (and the kernels it starts) to its first `cores` CPUs where Linux allows; the count used."""
    if not hasattr(os, "sched_setaffinity"):
        return os.cpu_count() or 1
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < cores:
        raise SystemExit(f"--cores {cores}: only {len(allowed)} CPU core(s) are available to this process; "
                         f"use --cores {len(allowed)} or a bigger machine.")
    os.sched_setaffinity(0, allowed[:cores])
    return cores


def machine(cores: int) -> dict:
    return {"cpu": cpu_model(), "cores": cores, "date": datetime.date.today().isoformat(),
            "python": platform.python_version(), "tensorflow": version("tensorflow", "tensorflow-cpu"),
            "keras": version("keras")}


def measure(paths: list[Path], runs: int, run_one=run_notebooks.run_one, devices: int = 2) -> dict[str, dict]:
    """{notebook name: {"seconds": [...], "min_s", "median_s", "max_s"}}; SystemExit on the first failed run."""
    os.environ.update(ENV, COURSE_DEVICES=str(devices))
    rows = {}
    with tempfile.TemporaryDirectory(prefix="fast-minutes-") as build:
        for path in paths:
            seconds = []
            for i in range(runs):
                row = run_one(path, Path(build))
                if row["status"] != "OK":
                    raise SystemExit(f"{path.name}, run {i + 1} of {runs} ({devices} devices): {row['status']}. "
                                     "Nothing recorded for "
                                     f"it; fix the notebook (`make notebook NB=notebooks/{path.name}`) and measure "
                                     "again.")
                seconds.append(round(row["seconds"], 1))
            rows[path.name] = {"runs": runs, "seconds": seconds, "min_s": min(seconds),
                               "median_s": statistics.median(seconds), "max_s": max(seconds)}
    return rows


def merge(old: dict | None, rows: dict, about: dict, note: str = "", devices: int = 2) -> dict:
    """The JSON to write: `rows` (measured with `devices`) over the rows of `old` measured on the same machine."""
    same = old is not None and all(old["machine"].get(k) == about[k] for k in ("cpu", "cores"))
    tables = {"2": old["notebooks"], **old.get("other_devices", {})} if same else {}
    tables[str(devices)] = dict(sorted({**tables.get(str(devices), {}), **rows}.items()))
    merged = {"machine": about, "env": " ".join(f"{k}={v}" for k, v in ENV.items()),
              "note": (note or old.get("note", "")) if same else note, "notebooks": tables.pop("2", {})}
    if tables:
        merged["other_devices"] = dict(sorted(tables.items()))
    return merged


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per notebook (default 3)")
    parser.add_argument("--cores", type=int, default=2, help="CPU cores to pin the runs to (default 2)")
    parser.add_argument("--devices", type=int, default=2, help="logical devices, COURSE_DEVICES (default 2)")
    parser.add_argument("--out", type=Path, default=OUT, help="the JSON file (default docs/fast_mode_minutes.json)")
    parser.add_argument("--note", default="", help="a line shown under the table, e.g. how quiet the machine was")
    parser.add_argument("notebooks", nargs="*", type=Path, help="default: every notebook in notebooks/")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.cores < 1 or args.devices < 1:
        parser.error(f"--runs {args.runs} --cores {args.cores} --devices {args.devices}: each must be a whole "
                     "number >= 1")
    paths = [p.resolve() for p in args.notebooks] or sorted(NOTEBOOKS.glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    about = machine(pin(args.cores))
    rows = measure(paths, args.runs, devices=args.devices)
    old = json.loads(args.out.read_text()) if args.out.is_file() else None
    args.out.write_text(json.dumps(merge(old, rows, about, args.note, args.devices), indent=2) + "\n")
    for name, row in rows.items():
        print(f"{name} ({args.devices} devices): min {row['min_s']:.0f} s, median {row['median_s']:.0f} s, "
              f"max {row['max_s']:.0f} s")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
