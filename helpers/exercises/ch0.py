"""Chapter 0's exercises (the runtime): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import _close, exercise


@exercise("ch0.input_share")
def _input_share(answer):
    # 0.8 s preparing input + 0.2 s updating parameters per step: input is 80% of the step.
    if _close(answer, 0.8):
        return None
    if _close(answer, 80):
        return "give a fraction between 0 and 1, not a percentage."
    return "share = input time / (input time + compute time) per step."


@exercise("ch0.vectorized_dropout")
def _vectorized_dropout(answer):
    # Measured: the learner's whole-batch word dropout against the per-token Python loop it replaces.
    import time

    import numpy as np

    def per_token(batch, rng, rate=0.1):
        return np.stack([np.array([2 if rng.random() < rate else t for t in row], dtype=np.int32) for row in batch])

    batch = np.random.default_rng(1).integers(3, 30982, size=(32, 300)).astype(np.int32)
    out = np.asarray(answer(batch, np.random.default_rng(0)))
    if out.shape != batch.shape:
        return f"return an array of the batch's shape {batch.shape}, not {out.shape}."
    dropped = out != batch
    if not np.all(out[dropped] == 2):
        return "replace dropped tokens with 2 (the unknown word) and leave the others as they are."
    if not 0.07 <= dropped.mean() <= 0.13:
        return f"about 10% of the tokens should become 2; {dropped.mean():.0%} did."

    def seconds(fn):
        start = time.perf_counter()
        for _ in range(5):
            fn(batch, np.random.default_rng(0))
        return time.perf_counter() - start

    speedup = seconds(per_token) / seconds(answer)
    if speedup >= 10:
        return None
    return (f"it is {speedup:.1f}x as fast as the per-token loop; aim for 10x: draw one random mask for the whole "
            "batch (rng.random(batch.shape) < rate) and apply it with np.where.")
