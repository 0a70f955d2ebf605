"""The course's measurements outside a notebook: `python -m helpers.bench NAME [--json]`.

Each benchmark prints a table (or, with --json, one JSON object on stdout) and writes a PNG.
Fast mode (COURSE_FAST=1) shrinks the work; COURSE_DEVICES splits the device as in the notebooks.
This module only dispatches: each benchmark is a function of its chapter's module in helpers/experiments/.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import sys

from helpers.errors import CourseError

# name -> (chapter module, function): each function takes `fast` and returns a helpers.results.Result. Those in
# JAX_BENCHMARKS run Keras on JAX, as their chapter does; the others on TensorFlow.
BENCHMARKS = {
    "matmul": ("ch00_runtime", "matmul"),
    "epoch-time": ("ch00_runtime", "epoch_time"),
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
    return getattr(importlib.import_module(f"helpers.experiments.{module}"), function)


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


if __name__ == "__main__":
    status = main()
    gc.freeze()  # spare the garbage collector's last pass over TensorFlow's objects at exit (about 2 s)
    sys.exit(status)
