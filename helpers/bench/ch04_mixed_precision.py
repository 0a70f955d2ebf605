"""Chapter 4's experiment: the Reuters model under each dtype policy, with and without XLA
(`python -m helpers.bench mixed-precision`)."""

from __future__ import annotations

from helpers.chapters.ch04_mixed_precision import train_with_policy
from helpers.data import load_reuters
from helpers.plots import bars
from helpers.results import Result

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")


def mixed_precision(fast: bool) -> Result:
    """float32 vs mixed_bfloat16 vs mixed_float16, each with and without XLA: steps/s and accuracy."""
    data = load_reuters()
    n = 2048 if fast else len(data.x_train)
    subset = data.head(n)
    batch = 64
    # Warm-up: the first training run in a process pays one-time costs that its first epoch does not absorb.
    train_with_policy("float32", False, subset, batch=batch, steps=8, epochs=2)
    runs = [train_with_policy(policy, xla, subset, batch=batch, steps=n // batch // (2 if fast else 1),
                              epochs=5 if fast else 6,
                              learning_rate=1e-2) for policy in POLICIES for xla in (False, True)]
    base = runs[0]["steps_per_s"]
    rows = [[r["policy"], r["xla"], round(r["steps_per_s"], 2), round(r["steps_per_s"] / base, 2),
             round(r["val_accuracy"], 3)] for r in runs]
    fig = bars([f"{r[0].removeprefix('mixed_')}{' +XLA' if r[1] else ''}" for r in rows],
               [r[2] for r in rows], ylabel="training steps/s (steady)",
               title=f"Reuters Conv1D, batch {batch}, per dtype policy")
    return Result("mixed-precision", ["policy", "xla", "steps_per_s", "vs_float32", "val_accuracy"], rows, fig)
