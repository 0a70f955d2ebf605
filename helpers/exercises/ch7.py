"""Chapter 7's exercises (profiling): each checker gets the learner's answer, returns None or a hint."""

from __future__ import annotations

from helpers.exercises import exercise


@exercise("ch7.not_input_bound")
def _not_input_bound(answer):
    # Measured: the answer is the step breakdown read from the learner's own profile (chapter 7's step_breakdown).
    if not isinstance(answer, dict) or not {"steps", "step ms", "input"} <= set(answer):
        return "pass the dict that step_breakdown(...) returns for your profile."
    if not answer["steps"]:
        return ("the profile has no marked steps, so it cannot say what the step waits for: profile with "
                "profile_fit (its ProfileSteps callback marks them).")
    waiting = 100 * answer["input"] / answer["step ms"]
    if waiting <= 20:
        return None
    return (f"{waiting:.0f}% of the step still waits for data; the goal is 20% or less. Read several files at once "
            "(file_dataset's parallel and io_threads), let them arrive in any order, and prefetch.")
