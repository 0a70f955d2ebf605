"""Chapter 2's exercises (the numbers behind speed): each checker measures or counts, then compares."""

from __future__ import annotations

import math
import numbers
import random

import numpy as np

from helpers.exercises.registry import exercise

SHAPES = ((32, 64, 16), (8, 128, 96), (64, 48, 200))  # (batch, d_in, d_out): the check's Dense layers


def _fresh(public, draw):
    """One case drawn at random and not among the `public` ones: a table of the public cases' answers fails it
    (C2-X2). A formula that calls the checker's own measuring functions still passes: the check runs in the
    learner's kernel, which can see them (accepted on purpose, tests/exercises/test_exercises_ch2.py)."""
    rng = random.Random()
    while (case := draw(rng)) in public:
        pass
    return case


def _dense_matmul_flops(batch, d_in, d_out):
    """The profiler's count of the matrix products of one Dense(d_out, use_bias=False) layer inside a network,
    in one training step (forward, and the gradients for its weights and for its input)."""
    import keras

    from helpers.chapters.ch02_numbers_behind_speed import step_profile

    model = keras.Sequential([keras.Input((d_in,)), keras.layers.Dense(d_in, name="first"),
                              keras.layers.Dense(d_out, use_bias=False, name="inner")])
    model.compile(optimizer="sgd", loss="mse")
    profile = step_profile(model, np.ones((batch, d_in), "float32"), np.ones((batch, d_out), "float32"))
    return sum(node.total_float_ops for node in profile.children
               if "/inner" in node.name and node.name.rsplit("/", 1)[-1].startswith("MatMul"))


def _number(answer) -> float | None:
    return float(answer) if isinstance(answer, numbers.Real) and not isinstance(answer, bool) else None


@exercise("ch2.dense_training_flops")
def _dense_training_flops(answer):
    fresh = _fresh(SHAPES, lambda rng: (rng.randint(2, 40), rng.randint(2, 40), rng.randint(2, 40)))
    for batch, d_in, d_out in (*SHAPES, fresh):
        counted = _dense_matmul_flops(batch, d_in, d_out)
        given = answer(batch, d_in, d_out)
        if _number(given) is None or not math.isclose(_number(given), counted, rel_tol=1e-9):
            if given == 2 * batch * d_in * d_out:
                return "that is the forward pass only: the backward pass adds two products of the same size."
            if given == 4 * batch * d_in * d_out:
                return ("inside a network the backward pass needs two products: the gradient for the weights and the "
                        "gradient for the layer's input (to pass on to the layer before).")
            return (f"for batch={batch}, d_in={d_in}, d_out={d_out} your formula gives {given}, the profiler "
                    f"counted {counted} FLOPs in that layer's matrix products.")
    return None


def _adam_variable_bytes_per_parameter(accumulation_steps, policy):
    """Measured: the bytes of a Keras model's and its Adam's variables, per trainable parameter (the optimizer's
    few scalar variables, such as its step counter, left out)."""
    import keras

    from helpers.chapters.ch02_numbers_behind_speed import variable_bytes

    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(64, dtype=policy)])
    optimizer = keras.optimizers.Adam(gradient_accumulation_steps=accumulation_steps if accumulation_steps > 1
                                      else None)
    model.compile(optimizer=optimizer, loss="mse")
    model.optimizer.build(model.trainable_variables)
    scalars = sum(np.dtype(v.dtype).itemsize for v in model.optimizer.variables if len(v.shape) == 0)
    return (variable_bytes(model) - scalars) / model.count_params()


@exercise("ch2.adam_bytes_per_parameter")
def _adam_bytes_per_parameter(answer):
    public = ((1, "float32"), (4, "float32"), (1, "mixed_float16"), (4, "mixed_bfloat16"))
    fresh = _fresh(public, lambda rng: (rng.randint(2, 9), rng.choice(("float32", "mixed_float16", "mixed_bfloat16"))))
    for steps, policy in (*public, fresh):
        measured = _adam_variable_bytes_per_parameter(steps, policy)
        given = answer(steps, policy)
        if _number(given) is not None and math.isclose(_number(given), measured, rel_tol=1e-9):
            continue
        if policy != "float32" and _number(given) is not None and _number(given) < measured:
            return (f"with policy={policy!r} your answer is {given}, measured {measured:g}: Keras keeps variables in "
                    "float32 under mixed policies (only the computation is 16-bit).")
        if steps > 1 and given == measured - 4:
            return (f"with accumulation_steps={steps} the optimizer keeps one more float32 buffer per parameter: "
                    "the gradients summed so far.")
        if given == measured + 4:
            return "the gradient exists only during a step: it is not a variable."
        return (f"for accumulation_steps={steps}, policy={policy!r} your answer is {given}, the measured variables "
                f"hold {measured:g} bytes per parameter (weight, Adam's two moments, ...).")
    return None


def ring_all_reduce_sent_bytes(buffers: list[np.ndarray]) -> tuple[list[np.ndarray], list[int]]:
    """A ring all-reduce run in NumPy over len(buffers) replicas: returns every replica's result and the bytes each
    replica sent (reduce-scatter, then all-gather, one chunk per step to the next replica)."""
    n = len(buffers)
    chunks = [np.array_split(b.copy(), n) for b in buffers]
    sent = [0] * n
    for phase in ("reduce-scatter", "all-gather"):
        for step in range(n - 1):
            outgoing = []
            for r in range(n):
                index = (r - step + (0 if phase == "reduce-scatter" else 1)) % n
                outgoing.append((r, index, chunks[r][index].copy()))
                sent[r] += chunks[r][index].nbytes
            for r, index, data in outgoing:
                to = (r + 1) % n
                chunks[to][index] = chunks[to][index] + data if phase == "reduce-scatter" else data
    return [np.concatenate(c) for c in chunks], sent


@exercise("ch2.ring_bytes_per_device")
def _ring_bytes_per_device(answer):
    public = tuple((n, e) for n in (1, 2, 3, 4, 8) for e in (24, 96))
    fresh = _fresh(public, lambda rng: (n := rng.randint(5, 7), n * rng.randint(3, 30)))  # chunks of one size
    for n, elements in (*public, fresh):
        buffers = [np.full(elements, r + 1.0, "float32") for r in range(n)]
        results, sent = ring_all_reduce_sent_bytes(buffers)
        assert all(np.allclose(r, n * (n + 1) / 2) for r in results)  # the ring really summed
        nbytes = buffers[0].nbytes
        given = answer(nbytes, n)
        if _number(given) is None or not math.isclose(_number(given), sent[0], rel_tol=1e-9, abs_tol=1e-9):
            return (f"with {n} replica(s) and a {nbytes}-byte buffer your formula gives {given}; each replica of "
                    f"the ring sent {sent[0]} bytes (count the chunks: how many steps, how big is a chunk?).")
    return None
