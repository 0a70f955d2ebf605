"""helpers/memory.py: the simulated device memory of chapter 9 and its exercises."""

import pytest

from helpers import memory
from helpers.errors import CourseError
from helpers.memory import ResourceExhaustedError, simulated_memory


def test_a_step_runs_below_the_memory_and_a_batch_past_it_is_out_of_memory():
    ran = []
    try_batch = simulated_memory(fixed=0.5e6, per_example=1e6, memory_mb=100.75, step=ran.append)
    try_batch(100)  # 100.5 MB
    with pytest.raises(ResourceExhaustedError, match=r"batch 101: 101.5 MB needed, 100.75 MB"):
        try_batch(101)
    assert ran == [100]


@pytest.mark.parametrize("memory_mb", [0, -1, True, "64"])
def test_the_memory_is_a_positive_number_of_mb(memory_mb):
    with pytest.raises(CourseError, match="memory_mb"):
        simulated_memory(0, 1, memory_mb)


def test_a_batch_is_a_whole_number():
    with pytest.raises(CourseError, match=r"try_batch\(2.5\)"):
        simulated_memory(0, 1, 10)(2.5)


def test_a_search_that_does_not_end_gets_an_error(monkeypatch):
    monkeypatch.setattr(memory, "MOST_TRIES", 5)
    try_batch = simulated_memory(0, 1e6, 10)
    for _ in range(5):
        try_batch(8)
    with pytest.raises(CourseError, match="the search does not end"):
        try_batch(8)
