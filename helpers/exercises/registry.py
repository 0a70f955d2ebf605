"""The exercise registry and what checks share: `exercise` registers a checker, `check` runs one and prints its
verdict, `timed_speedup` times a learner's code against the starting code by the course's one rule (helpers.readings).
The chapters' checker modules (`chN.py`) import from here, and `helpers/exercises/__init__.py` imports them."""

from __future__ import annotations

import dataclasses
import math
import numbers

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
        print(f"[{name}] Not answered yet: replace the ... / None in this cell and run it again.")
        return
    try:
        hint = _CHECKS[name](answer)
    except Exception as err:  # a wrong type of answer gets a hint, not a traceback
        hint = f"could not check this answer ({type(err).__name__}: {err})"
    if hint:
        print(f"[{name}] Not yet: {hint}")
    else:
        print(f"[{name}] Correct. Well done.")


def number_hint(answer, right, mistakes: dict, otherwise: str) -> str | None:
    """A number exercise: None for the `right` answer, the hint of a known mistake (mistakes: {wrong answer: hint}),
    else `otherwise`."""
    if answer == right:
        return None
    return next((hint for wrong, hint in mistakes.items() if answer == wrong), otherwise)


def dataset_op_types(dataset) -> set[str]:
    """The op types in a tf.data pipeline's graph (its functions included)."""
    import tensorflow as tf

    graph = tf.raw_ops.DatasetToGraphV2(input_dataset=dataset._variant_tensor, external_state_policy=1)  # 1: ignore
    graph_def = tf.compat.v1.GraphDef.FromString(graph.numpy())
    return {node.op for node in graph_def.node} | {
        node.op for function in graph_def.library.function for node in function.node_def}


def repeats_with_no_known_end(dataset) -> bool:
    """A .repeat() whose length TensorFlow cannot tell (`.repeat().filter(...)`): reading it may wait forever for a
    first element, so checks refuse it from its graph before reading anything."""
    import tensorflow as tf

    return (dataset.cardinality() == tf.data.UNKNOWN_CARDINALITY
            and any(op.startswith("RepeatDataset") for op in dataset_op_types(dataset)))


def _close(answer, expected, rel=0.01) -> bool:
    return isinstance(answer, numbers.Real) and math.isclose(float(answer), expected, rel_tol=rel)


@dataclasses.dataclass(frozen=True)
class Speedup:
    """A timed comparison for a check (helpers.readings' rule): `ratio` = the starting code's median time / the
    learner's; `noise` = the A/A band, how far the starting code strayed from itself (1.08: ±8%); `verdict` =
    "below" when the learner's code takes less time than the starting code outside that noise."""
    ratio: float
    noise: float
    verdict: str
    baseline_s: tuple
    candidate_s: tuple

    def reaches(self, goal: float) -> bool:
        return self.ratio >= goal and self.verdict == "below"

    def __str__(self) -> str:
        side = {"below": "time below the starting code's, outside the noise",
                "above": "time above the starting code's, outside the noise"}.get(self.verdict, "within noise")
        return (f"{self.ratio:.1f}x as fast as the starting code ({side}; A/A band ±{self.noise - 1:.0%}, 1.5 times "
                "how far the starting code strayed from itself)")


def timed_speedup(baseline, candidate, repeats: int = 5) -> Speedup:
    """Time `baseline()` and `candidate()` (each does its work and returns when it is done) in `repeats` rounds of
    rotating order, the baseline twice per round (helpers.readings.compare), so that a machine that slows down or
    speeds up mid-check favours neither and the starting code's own spread is known."""
    from helpers.readings import compare

    reading = compare("check", {"starting code": baseline, "yours": candidate}, rounds=repeats, warmup=0,
                      record_as=False).readings[0]
    return Speedup(1 / reading.ratio, reading.band, reading.verdict, reading.baseline_values, reading.values)
