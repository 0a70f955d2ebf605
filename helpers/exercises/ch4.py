"""Chapter 4's exercises (TPUs): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import _close, exercise


@exercise("ch4.scaled_lr")
def _scaled_lr(answer):
    # 0.1 at batch 256; 128 per core x 8 cores = 1024 = 4x the batch -> 4x the learning rate.
    if _close(answer, 0.4):
        return None
    if _close(answer, 0.025):
        return "the batch grew 4x, so the learning rate grows 4x too: multiply, do not divide."
    if _close(answer, 0.1):
        return "with 4x the examples per step there are 4x fewer steps: scale the rate with the batch."
    if _close(answer, 0.05):
        return "128 is each core's share; the global batch is 128 x 8 cores."
    return "linear rule: new rate = old rate x (new global batch / old batch)."


@exercise("ch4.static_batches")
def _static_batches(answer):
    # Observed: one epoch of the learner's dataset; a TPU wants every batch the same shape.
    dataset, global_batch = answer
    sizes = [int(features.shape[0]) for features, _ in dataset]
    static = dataset.element_spec[0].shape[0]
    if static is None or any(size != global_batch for size in sizes):
        return (f"batch sizes {sorted(set(sizes))} (static size {static}): every batch must hold {global_batch}, "
                "known before the first step; drop the last, partial batch when batching.")
    return None
