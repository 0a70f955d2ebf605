"""Chapter 7's Keras-on-JAX program (helpers/programs/fit_jax_processes.py): two processes on 127.0.0.1 join one
mesh and train one model; a process whose peer never arrives is stopped with a clear error."""

import os
import sys

import pytest

from helpers import CourseError
from helpers.cluster import local_hosts
from helpers.processes import run_group
from helpers.programs import program

ENV = {**os.environ, "JAX_PLATFORMS": "cpu"}


def commands(processes, started, coordinator):
    return [[sys.executable, str(program("fit_jax_processes")), "--coordinator", coordinator,
             "--num-processes", str(processes), "--process-id", str(i), "--epochs", "2"] for i in range(started)]


def test_two_processes_join_one_mesh_and_print_the_same_losses():
    finished = run_group(commands(2, 2, local_hosts(1)[0]), envs=[ENV, ENV], timeout_s=240, name="process")
    lines = [[line for line in run.lines if line.startswith("process ")] for run in finished]
    assert [run[0] for run in lines] == ["process 0 of 2: 1 local, 2 global device(s)",
                                         "process 1 of 2: 1 local, 2 global device(s)"]
    losses = [run[-1].split("losses ")[1].split() for run in lines]
    assert len(losses[0]) == 2 and losses[0] == losses[1]


def test_a_peer_that_never_arrives_ends_in_a_clear_error_within_the_time_limit():
    with pytest.raises(CourseError, match=r"process 0 did not finish within 15 s .*the others were stopped"):
        run_group(commands(2, 1, local_hosts(1)[0]), envs=[ENV], timeout_s=15, name="process")
