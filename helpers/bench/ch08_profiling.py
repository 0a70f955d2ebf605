"""Chapter 8: profile a few `fit` steps, read the trace with XProf's own converters, fix what it blames
(`python -m helpers.bench profile`)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import keras

from helpers.chapters.ch08_profiling import (
    STEP_PARTS,
    fixed_pipeline,
    naive_pipeline,
    profile_fit,
    small_convnet,
    step_breakdown,
    verdict,
)
from helpers.images import default_root, list_image_folder, make_image_folder
from helpers.plots import stacked_bars
from helpers.results import Result

# XProf reads the traces (it is also TensorBoard's Profile tab). 2.22.2 is the release the course was run with; its
# requirements (its package metadata) replace nothing on Colab or Kaggle. Later releases' metadata asks for
# pyOpenSSL>=26.1.0 (2.22.3; Kaggle: 24.2.1), absl-py>=2.1 and urllib3>=2.7 (2.23.0; Colab and Kaggle: 1.4.0, 2.5.0).
# The same pins are pyproject.toml's `profile` extra (a test keeps them equal).
PROFILE_REQUIREMENTS = ("xprof==2.22.2", "tensorboard>=2.20")


def profile_both(logdir, fast: bool, root=None) -> dict:
    """{"naive": breakdown, "fixed": breakdown} of the same model trained on each pipeline."""
    root = root or default_root()
    if not root.is_dir():
        make_image_folder(root)
    paths, labels, class_names = list_image_folder(root)
    last = 8 if fast else 20
    breakdowns = {}
    for name, pipeline in (("naive", naive_pipeline), ("fixed", fixed_pipeline)):
        keras.utils.set_random_seed(0)
        profile_fit(small_convnet(len(class_names)), pipeline(paths, labels, class_names), Path(logdir) / name,
                    last=last)
        breakdowns[name] = step_breakdown(Path(logdir) / name)
    return breakdowns


def breakdown_figure(breakdowns: dict):
    """Each pipeline's average step, split into its parts."""
    return stacked_bars({name: {part: b[part] for part in STEP_PARTS} for name, b in breakdowns.items()},
                        xlabel="ms per step (average of the profiled steps)",
                        title="Where a training step's time goes, read from the profile")


def profile(fast: bool) -> Result:
    """Step-time breakdown of the same model fed by chapter 6's naive and fixed pipelines, and the speed-up."""
    with tempfile.TemporaryDirectory() as logdir:
        breakdowns = profile_both(logdir, fast)
    rows = [[name, b["steps"], round(b["step ms"], 1), *(round(b[p], 1) for p in STEP_PARTS), verdict(b)]
            for name, b in breakdowns.items()]
    speedup = breakdowns["naive"]["step ms"] / breakdowns["fixed"]["step ms"]
    return Result("profile", ["pipeline", "steps", "step_ms", *(p.replace(" ", "_") + "_ms" for p in STEP_PARTS),
                              "verdict"], rows, breakdown_figure(breakdowns), {"speedup": round(speedup, 2)})
