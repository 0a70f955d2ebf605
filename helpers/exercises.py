"""'Your turn' cells: the learner writes an answer, the next cell checks it and prints a verdict.

Each exercise is a checker registered under a name: it gets the learner's answer and returns
None when the answer is right, or a hint saying what is still wrong. `check` never raises, so an
unanswered exercise does not stop "Run all".
"""

from __future__ import annotations

import math
import numbers

import keras

_CHECKS = {}


def exercise(name: str):
    """Register a checker: `@exercise("ch1.embedding_params") def _(answer): ...`."""
    def register(fn):
        _CHECKS[name] = fn
        return fn
    return register


def check(name: str, answer) -> None:
    """Print a pass mark or a hint for exercise `name` (nothing is returned, so a notebook cell
    shows only the verdict)."""
    if not isinstance(name, str) or name not in _CHECKS:
        known = ", ".join(sorted(_CHECKS))
        print(f"No exercise called {name!r}. Known exercises: {known}.")
        return
    if answer is None or answer is ...:
        print(f"[{name}] Not answered yet: replace the ... / None in the cell above, run it, then this one.")
        return
    try:
        hint = _CHECKS[name](answer)
    except Exception as err:  # a wrong type of answer gets a hint, not a traceback
        hint = f"could not check this answer ({type(err).__name__}: {err})"
    if hint:
        print(f"[{name}] Not yet: {hint}")
    else:
        print(f"[{name}] Correct. Well done.")


def _close(answer, expected, rel=0.01) -> bool:
    return isinstance(answer, numbers.Real) and math.isclose(float(answer), expected, rel_tol=rel)


@exercise("ch0.input_share")
def _input_share(answer):
    # 0.8 s preparing input + 0.2 s updating parameters per step: input is 80% of the step.
    if _close(answer, 0.8):
        return None
    if _close(answer, 80):
        return "give a fraction between 0 and 1, not a percentage."
    return "share = input time / (input time + compute time) per step."


@exercise("ch1.embedding_params")
def _embedding_params(answer):
    if answer == 30982 * 7:
        return None
    if answer == 30982 * 7 + 7:
        return "an Embedding layer has no bias: only one vector per word."
    return "an Embedding stores one vector of output_dim numbers for every word index (vocab_size of them)."


@exercise("ch1.logits_model")
def _logits_model(answer):
    model, loss = answer
    activation = getattr(model.layers[-1], "activation", None)
    if getattr(activation, "__name__", "") == "softmax":
        return "the last Dense layer still applies softmax: make it linear (activation=None)."
    if not isinstance(loss, keras.losses.SparseCategoricalCrossentropy):
        return "the labels are topic numbers (0..45): use keras.losses.SparseCategoricalCrossentropy."
    if not getattr(loss, "from_logits", False):
        return "a linear last layer outputs logits: build the loss with from_logits=True."
    return None


@exercise("ch2.global_batch")
def _global_batch(answer):
    if answer == 512:
        return None
    if answer == 128:
        return "128 is each GPU's share; the dataset must produce all four shares at once."
    if answer == 32:
        return "32 is 128 / 4: multiply the per-GPU batch by the number of GPUs, do not divide it."
    return "global batch = examples per replica x number of replicas."


@exercise("ch3.survivors")
def _survivors(answer):
    names = {answer} if isinstance(answer, str) else set(answer)
    if names == {"bfloat16", "float32"}:
        return None
    if "float16" in names:
        return "float16's smallest value is about 6e-8: 1e-9 underflows to 0 (try np.float16(1e-9))."
    return "check the exponent range, not the resolution: ml_dtypes.finfo(dtype).tiny for each."


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


@exercise("ch5.shuffle_buffer_mb")
def _shuffle_buffer_mb(answer):
    # 3000 images x 224 x 224 x 3 float32 values x 4 bytes.
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 1e6):
        return None
    if _close(answer, 3000 * 224 * 224 * 3 / 1e6):
        return "the images were divided by 255: they are float32, 4 bytes per value."
    if _close(answer, 3000 * 224 * 224 * 3 * 4 / 2**20):
        return "use 1 MB = 10^6 bytes here (you divided by 2^20)."
    return "bytes = images x height x width x channels x bytes per value; then divide by 10^6."


@exercise("ch6.global_batch")
def _ch6_global_batch(answer):
    if answer == 3 * 2 * 32:
        return None
    if answer == 3 * 32:
        return "each worker has 2 GPUs, and each GPU is a replica: count replicas, not machines."
    if answer == 2 * 32:
        return "that is one machine's share: all three machines take part in every step."
    return "global batch = examples per replica x replicas (machines x GPUs per machine)."
