"""'Your turn' cells: the learner writes an answer, the next cell checks it and prints a verdict.

Each exercise is a checker registered under a name: it gets the learner's answer and returns
None when the answer is right, or a hint saying what is still wrong. `check` never raises, so an
unanswered exercise does not stop "Run all". Each chapter's checkers live beside this file, in `chN.py`; the
registry, `check` and the shared tools are in `registry.py`.
"""

# Each chapter's checkers register themselves on import; notebooks call helpers.exercises.check.
from helpers.exercises import ch0, ch1, ch2, ch3, ch4, ch5, ch6, ch7, ch8, ch9  # noqa: F401
from helpers.exercises.registry import check  # noqa: F401
