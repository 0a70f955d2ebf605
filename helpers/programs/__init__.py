"""Programs that run as their own processes (chapters 3, 5 and 7): `python helpers/programs/NAME.py --help`.

Each file is complete and uses only TensorFlow, Keras and NumPy: its notebook writes the same text to a file with
%%writefile and launches it (`make export` keeps the two identical).
"""

from pathlib import Path

NAMES = ("multiworker", "parameter_server", "resumable", "train_multi_gpu", "train_multi_gpu_jax", "fit_jax_processes",
         "tpu_strategy_fit")


def program(name: str) -> Path:
    """The file of program `name`, to start with python: [sys.executable, program(name), ...]."""
    if name not in NAMES:
        from helpers.errors import CourseError

        raise CourseError(f"program({name!r}): the course's programs are {', '.join(NAMES)}.")
    return Path(__file__).with_name(f"{name}.py")
