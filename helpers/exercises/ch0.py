"""Chapter 0's exercises (the runtime): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises.registry import _close, exercise, timed_speedup


@exercise("ch0.input_share")
def _input_share(answer):
    # 0.8 s preparing input + 0.2 s updating parameters per step: input is 80% of the step.
    if _close(answer, 0.8):
        return None
    if _close(answer, 80):
        return "give a fraction between 0 and 1, not a percentage."
    return "share = input time / (input time + compute time) per step."


def per_token_dropout(batch, rng, rate=0.1):
    """The starting code: word dropout one token at a time, in Python (chapter 0's word_dropout on every row)."""
    import numpy as np

    return np.stack([np.array([2 if rng.random() < rate else t for t in row], dtype=np.int32) for row in batch])


DROPOUT_RATES = (0.1, 0.3)  # the check calls the answer with each: the share of 2s must follow `rate`
DROPOUT_TOLERANCE = 0.03  # on 9,600 tokens the share's standard deviation is at most 0.005: 6 of them


@exercise("ch0.vectorized_dropout")
def _vectorized_dropout(answer):
    # Observed: what the learner's whole-batch word dropout returns for several rates and random generators;
    # measured: its speed against the per-token Python loop it replaces.
    import numpy as np

    batch = np.random.default_rng(1).integers(3, 30982, size=(32, 300)).astype(np.int32)  # no 2 in it yet

    def drop(seed, rate):
        given = batch.copy()
        out = np.asarray(answer(given, np.random.default_rng(seed), rate))
        if not np.array_equal(given, batch):
            raise ValueError("changed in place")
        return out

    try:
        out = drop(0, 0.1)
    except ValueError:
        return ("it changed the batch it was given (in python_batches that is a view of the training data): "
                "return a new array, e.g. with np.where.")
    if out.shape != batch.shape:
        return f"return an array of the batch's shape {batch.shape}, not {out.shape}."
    dropped = out != batch
    if not np.all(out[dropped] == 2):
        return "replace dropped tokens with 2 (the unknown word) and leave the others as they are."
    for rate in DROPOUT_RATES:
        share = float(np.mean(drop(0, rate) != batch))
        if abs(share - rate) > DROPOUT_TOLERANCE:
            return (f"with rate={rate} about {rate:.0%} of the tokens should become 2; {share:.1%} did: compare the "
                    "random numbers with the `rate` argument, not a fixed number.")
    if np.array_equal(drop(0, 0.1), drop(1, 0.1)):
        return ("two different random generators dropped exactly the same tokens: draw the mask from `rng` "
                "(rng.random(batch.shape) < rate), so that every batch and every epoch drops other words.")
    if not np.array_equal(drop(0, 0.1), drop(0, 0.1)):
        return "the same seed gave different masks: draw the random numbers from the `rng` argument, not np.random."

    batches = [batch[i::4] for i in range(4)]  # 4 x 8 rows per timed call: enough work to time on a busy machine

    def run(fn):
        rng = np.random.default_rng(0)
        return lambda: [fn(b, rng, 0.1) for b in batches]

    speedup = timed_speedup(run(per_token_dropout), run(answer), repeats=5)
    if speedup.reaches(10):
        return None
    return (f"it is {speedup.ratio:.1f}x as fast as the per-token loop (the loop timed against itself varied "
            f"{speedup.noise:.2f}x); aim for 10x: draw one random mask for the whole batch "
            "(rng.random(batch.shape) < rate) and apply it with np.where.")
