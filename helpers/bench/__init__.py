"""The course's benchmarks: `python -m helpers.bench NAME [--json]` reruns a chapter's measurement outside its
notebook, built on the code the chapter teaches (helpers/chapters, exported from the notebooks).

Each benchmark prints a table (or, with --json, one JSON object on stdout) and writes a PNG.
Fast mode (COURSE_FAST=1) shrinks the work; COURSE_DEVICES splits the device as in the notebooks.
One module per chapter (`chNN_<notebook name>.py`); notebooks and plumbing never import from here.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from helpers.errors import CourseError

# name -> (chapter module, function): each function takes `fast` and returns a helpers.results.Result. Those in
# JAX_BENCHMARKS run Keras on JAX, as their chapter does; the others on TensorFlow.
BENCHMARKS = {
    "matmul": ("ch01_single_gpu", "matmul"),
    "epoch-time": ("ch01_single_gpu", "epoch_time"),
    "ceilings": ("ch02_numbers_behind_speed", "ceilings"),
    "scaling": ("ch03_multi_gpu", "scaling"),
    "mixed-precision": ("ch04_mixed_precision", "mixed_precision"),
    "step-fusing": ("ch05_tpu", "step_fusing"),
    "pipeline": ("ch06_input_pipelines", "pipeline"),
    "multiworker": ("ch07_beyond_one_machine", "multiworker"),
    "profile": ("ch08_profiling", "profile"),
}

JAX_BENCHMARKS = ("step-fusing",)


def chapter_function(name: str):
    module, function = BENCHMARKS[name]
    return getattr(importlib.import_module(f"helpers.bench.{module}"), function)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m helpers.bench", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="one of: " + ", ".join(sorted(BENCHMARKS)))
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    parser.add_argument("--png", help="where to write the plot (default build/bench/NAME.png)")
    args = parser.parse_args(argv)
    if args.name not in BENCHMARKS:
        parser.error(f"unknown benchmark {args.name!r}; choose one of: {', '.join(sorted(BENCHMARKS))}")
    from helpers.course import setup

    try:
        course = setup(verbose=False, backend="jax" if args.name in JAX_BENCHMARKS else None)
        result = chapter_function(args.name)(course.fast)
    except CourseError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    png = args.png or os.path.join("build", "bench", f"{args.name}.png")
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    result.figure.savefig(png, dpi=100)
    if args.json:
        print(json.dumps({**result.as_json(png), "fast": course.fast}))
    else:
        print(result.table())
        print(f"plot: {png}")
    return 0

