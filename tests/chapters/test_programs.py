"""The programs chapter 7 starts as processes (helpers/programs): what they report when run on their own."""

import re
import sys

from helpers.processes import run_watched
from helpers.programs import program


def reported(name, *args):
    finished = run_watched([sys.executable, program(name), *args], timeout_s=120)
    assert finished.returncode == 0, finished.lines[-10:]
    return [line for line in finished.lines if not re.match(r"^(W0000|I0000|E0000|WARNING: All log)", line)]


def test_parameter_server_holds_the_variables_and_the_workers_train():
    lines = reported("parameter_server", "--steps", 30)
    assert lines[0] == "variables live on /job:ps/replica:0/task:0/device:CPU:0"
    first, last = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+)", lines[1]).groups())
    assert last < first / 10

