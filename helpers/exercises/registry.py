"""The exercise registry and what checks share: `exercise` registers a checker, `check` runs one and prints its
verdict, `timed_speedup` times a learner's code against the starting code. A leaf of the package: the chapters' checker
modules (`chN.py`) import from here, and `helpers/exercises/__init__.py` imports them."""

from __future__ import annotations

import dataclasses
import math
import numbers
import statistics
import time

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


def number_hint(answer, right, mistakes: dict, otherwise: str) -> str | None:
    """A number exercise: None for the `right` answer, the hint of a known mistake (mistakes: {wrong answer: hint}),
    else `otherwise`."""
    if answer == right:
        return None
    return next((hint for wrong, hint in mistakes.items() if answer == wrong), otherwise)


def _close(answer, expected, rel=0.01) -> bool:
    return isinstance(answer, numbers.Real) and math.isclose(float(answer), expected, rel_tol=rel)


@dataclasses.dataclass(frozen=True)
class Speedup:
    """A timed comparison for a check: `ratio` = the starting code's median time / the learner's; `noise` = the
    starting code timed against itself (an A/A comparison: its second-slowest run / its second-fastest, so that one
    run disturbed by another program, either way, does not decide it): a ratio inside it is not a measured
    difference."""
    ratio: float
    noise: float
    baseline_s: list
    candidate_s: list

    def reaches(self, goal: float) -> bool:
        return self.ratio >= goal and self.ratio > self.noise

    def __str__(self) -> str:
        return f"{self.ratio:.1f}x (the starting code against itself varied {self.noise:.2f}x)"


def timed_speedup(baseline, candidate, repeats: int = 5) -> Speedup:
    """Time `baseline()` and `candidate()` (each does its work and returns when it is done) `repeats` times each, in
    alternating order (AB, BA, AB, ...), so that a machine that slows down or speeds up mid-check favours neither."""
    times = ([], [])
    for i in range(repeats):
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            start = time.perf_counter()
            (baseline, candidate)[which]()
            times[which].append(time.perf_counter() - start)
    base, mine = times
    ordered = sorted(base)
    trimmed = ordered[1:-1] if len(ordered) >= 4 else ordered
    return Speedup(statistics.median(base) / statistics.median(mine), trimmed[-1] / trimmed[0], base, mine)
