"""Chapter 0's exercises (the runtime): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

import numbers

from helpers.exercises.registry import _close, exercise, timed_speedup

# The step of the exercise: 0.8 s preparing input, 0.2 s updating parameters; the accelerator is 10x faster.
INPUT_S, COMPUTE_S, FASTER = 0.8, 0.2, 10


@exercise("ch0.faster_accelerator")
def _faster_accelerator(answer):
    # Amdahl's law: only the update shrinks. One after the other: 0.8 + 0.2/10 = 0.82 s; overlapped: the larger part,
    # max(0.8, 0.02) = 0.8 s.
    if not (isinstance(answer, (tuple, list)) and len(answer) == 2
            and all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in answer)):
        return "give two numbers in seconds, (one after the other, overlapped), e.g. (1.0, 0.9)."
    sequential, overlapped = answer
    sequential_ok = _close(sequential, INPUT_S + COMPUTE_S / FASTER)
    overlapped_ok = _close(overlapped, max(INPUT_S, COMPUTE_S / FASTER))
    if sequential_ok and overlapped_ok:
        return None
    if _close(sequential, (INPUT_S + COMPUTE_S) / FASTER) or _close(overlapped, INPUT_S / FASTER):
        return "the accelerator speeds up only the update (0.2 s); preparing the input still takes 0.8 s."
    if _close(sequential, 82) or _close(overlapped, 80):
        return "give seconds, not percentages."
    if not sequential_ok:
        return "one after the other, a step costs input + update: 0.8 s + the update, 10x faster."
    return ("overlapped, input and update run at the same time: a step costs the larger of the two, "
            "not their sum.")


def per_token_dropout(batch, rng, rate=0.1):
    """The starting code: word dropout one token at a time, in Python (chapter 0's word_dropout on every row)."""
    import numpy as np

    return np.stack([np.array([2 if rng.random() < rate else t for t in row], dtype=np.int32) for row in batch])


DROPOUT_RATES = (0.1, 0.3)  # the check calls the answer with each: the share of 2s must follow `rate`
DROPOUT_TOLERANCE = 0.03  # on 9,600 tokens the share's standard deviation is at most 0.005: 6 of them
# Independent tokens: given a dropped token, its right-hand neighbour is dropped with probability `rate`. On 32 x 300
# tokens at rate 0.3 that share has a standard deviation of about 0.009; a mask of runs or whole rows gives near 1.
NEIGHBOUR_TOLERANCE = 0.06
TIMED_TOLERANCE = 0.05  # a timed call's 8 x 300 tokens: the share of 2s has a standard deviation of 0.006


def _mask_hint(out, batch, rate, where):
    """None if `out` is `batch` with tokens turned into 2 at about `rate`, else a hint."""
    import numpy as np

    where = f"{where} " if where else ""
    if out.shape != batch.shape:
        return f"{where}return an array of the batch's shape {batch.shape}, not {out.shape}."
    dropped = out != batch
    if not np.all(out[dropped] == 2):
        return f"{where}replace dropped tokens with 2 (the unknown word) and leave the others as they are."
    share = float(np.mean(dropped))
    if abs(share - rate) > (TIMED_TOLERANCE if where else DROPOUT_TOLERANCE):
        return (f"{where}with rate={rate} about {rate:.0%} of the tokens should become 2; {share:.1%} did: compare "
                "the random numbers with the `rate` argument, not a fixed number.")
    return None


@exercise("ch0.vectorized_dropout")
def _vectorized_dropout(answer):
    # Observed: what the learner's whole-batch word dropout returns for several rates and random generators, and what
    # it returned in the timed calls; measured: its speed against the per-token Python loop it replaces.
    import numpy as np

    batch = np.random.default_rng(1).integers(3, 30982, size=(32, 300)).astype(np.int32)  # no 2 in it yet

    def drop(seed, rate, rng=None):
        given = batch.copy()
        out = np.asarray(answer(given, rng or np.random.default_rng(seed), rate))
        if not np.array_equal(given, batch):
            raise ValueError("changed in place")
        return out

    try:
        out = drop(0, 0.1)
    except ValueError:
        return ("it changed the batch it was given (in python_batches that is a view of the training data): "
                "return a new array, e.g. with np.where.")
    if hint := _mask_hint(out, batch, 0.1, ""):
        return hint
    for rate in DROPOUT_RATES:
        if hint := _mask_hint(drop(0, rate), batch, rate, ""):
            return hint
    if np.array_equal(drop(0, 0.1), drop(1, 0.1)):
        return ("two different random generators dropped exactly the same tokens: draw the mask from `rng` "
                "(rng.random(batch.shape) < rate), so that every batch and every epoch drops other words.")
    if not np.array_equal(drop(0, 0.1), drop(0, 0.1)):
        return "the same seed gave different masks: draw the random numbers from the `rng` argument, not np.random."
    rng = np.random.default_rng(0)
    if np.array_equal(drop(0, 0.1, rng), drop(0, 0.1, rng)):  # a real dropout advances its generator
        return ("two calls with the same generator dropped the same tokens: each call must draw new random numbers "
                "from `rng` (no remembered masks), or every epoch drops the same words.")
    # Independence: each token is dropped on its own, not in runs, whole rows or the same pattern in every row.
    mask = drop(2, 0.3) != batch
    neighbour = float(mask[:, 1:][mask[:, :-1]].mean())
    if abs(neighbour - 0.3) > NEIGHBOUR_TOLERANCE or all(np.array_equal(mask[0], row) for row in mask[1:]):
        return (f"the dropped tokens are not independent (after a dropped token, the next one was dropped "
                f"{neighbour:.0%} of the time, not about 30%): draw one random number per token, "
                "rng.random(batch.shape) < rate.")

    batches = [batch[i::4] for i in range(4)]  # 4 x 8 rows per timed call: enough work to time on a busy machine
    outputs = []  # what the learner's timed calls returned: checked after the timing, so the timed work is real

    def run(fn, keep):
        rng = np.random.default_rng(0)
        return lambda: (outputs if keep else []).append([fn(b, rng, 0.1) for b in batches])

    speedup = timed_speedup(run(per_token_dropout, False), run(answer, True), repeats=5)
    for call in outputs:
        for out, given in zip(call, batches):
            if hint := _mask_hint(np.asarray(out), given, 0.1, "in the timed calls it did not drop tokens:"):
                return hint
    firsts = [np.asarray(call[0]) for call in outputs]
    if any(np.array_equal(a, b) for a, b in zip(firsts, firsts[1:])):
        return ("in the timed calls it returned the same mask for the same rows twice: each call must draw new "
                "random numbers from `rng`, not reuse a remembered result.")
    if speedup.reaches(10):
        return None
    return (f"it ran {speedup}; aim for 10x, outside the noise: draw one random mask for the whole batch "
            "(rng.random(batch.shape) < rate) and apply it with np.where.")
