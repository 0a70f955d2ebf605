"""Chapter 8: profile a few `fit` steps, read the trace with XProf's own converters, fix what it blames
(`python -m helpers.bench profile`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import keras

from helpers.chapters.ch08_profiling import (
    STEP_PARTS,
    breakdown_figure,
    fixed_pipeline,
    naive_pipeline,
    profile_fit,
    small_convnet,
    step_breakdown,
    verdict,
)
from helpers.images import default_root, list_image_folder, make_image_folder
from helpers.results import Result


def profile(fast: bool) -> Result:
    """Step-time breakdown of the same model fed by chapter 6's naive and fixed pipelines, and the speed-up."""
    root = default_root()
    if not root.is_dir():
        make_image_folder(root)
    paths, labels, class_names = list_image_folder(root)
    breakdowns = {}
    with tempfile.TemporaryDirectory() as logdir:
        for name, pipeline in (("naive", naive_pipeline), ("fixed", fixed_pipeline)):
            keras.utils.set_random_seed(0)
            profile_fit(small_convnet(len(class_names)), pipeline(paths, labels, class_names), Path(logdir) / name,
                        last=8 if fast else 20)
            breakdowns[name] = step_breakdown(Path(logdir) / name)
    rows = [[name, b["steps"], round(b["step ms"], 1), *(round(b[p], 1) for p in STEP_PARTS), verdict(b)]
            for name, b in breakdowns.items()]
    speedup = breakdowns["naive"]["step ms"] / breakdowns["fixed"]["step ms"]
    return Result("profile", ["pipeline", "steps", "step_ms", *(p.replace(" ", "_") + "_ms" for p in STEP_PARTS),
                              "verdict"], rows, breakdown_figure(breakdowns), {"speedup": round(speedup, 2)})
