"""Chapter 2's exercise checks against the shortcuts of the 2026-11-28 review (C2-X2, X-9): a table of the public
cases' answers is refused (each check adds one case drawn at random), and a formula that calls the checker's own
measuring functions is accepted on purpose (the check runs in the learner's kernel, which can see them: X-10).
The starting code and the named mistakes are tested in tests/chapters/test_ch02_numbers_behind_speed.py."""

import numpy as np
import pytest

from helpers.exercises import ch2 as checker
from helpers.exercises import check


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    return capsys.readouterr().out.strip()


def test_fresh_cases_are_never_public_ones():
    for _ in range(50):
        assert checker._fresh(((1, 2),), lambda rng: (rng.randint(1, 2), 2)) == (2, 2)


def test_dense_training_flops_refuses_a_lookup_table_of_the_public_shapes(capsys):
    table = {shape: 6 * shape[0] * shape[1] * shape[2] for shape in checker.SHAPES}
    out = verdict(capsys, "ch2.dense_training_flops", lambda b, i, o: table.get((b, i, o), 0))
    assert "your formula gives 0" in out


def test_dense_training_flops_accepts_the_checkers_own_count_on_purpose(capsys):
    out = verdict(capsys, "ch2.dense_training_flops", checker._dense_matmul_flops)
    assert out.endswith("Correct. Well done.")


def test_adam_bytes_refuses_a_lookup_table_of_the_public_cases(capsys):
    table = {(1, "float32"): 12, (4, "float32"): 16, (1, "mixed_float16"): 12, (4, "mixed_bfloat16"): 16}
    out = verdict(capsys, "ch2.adam_bytes_per_parameter", lambda s, p: table.get((s, p), 0))
    assert "your answer is 0" in out


def test_adam_bytes_accepts_the_checkers_own_measurement_on_purpose(capsys):
    out = verdict(capsys, "ch2.adam_bytes_per_parameter", checker._adam_variable_bytes_per_parameter)
    assert out.endswith("Correct. Well done.")


def test_ring_bytes_refuses_a_lookup_table_of_the_public_cases(capsys):
    table = {(4 * e, n): 2 * (n - 1) / n * 4 * e for n in (1, 2, 3, 4, 8) for e in (24, 96)}
    out = verdict(capsys, "ch2.ring_bytes_per_device", lambda nbytes, n: table.get((nbytes, n), 0))
    assert "each replica of the ring sent" in out


def test_ring_bytes_accepts_the_checkers_own_ring_on_purpose(capsys):
    def by_running_it(nbytes, n):
        return checker.ring_all_reduce_sent_bytes([np.zeros(nbytes // 4, "float32")] * n)[1][0]

    assert verdict(capsys, "ch2.ring_bytes_per_device", by_running_it).endswith("Correct. Well done.")


@pytest.mark.parametrize("repeat", range(3))
def test_ring_bytes_accepts_the_solution_on_any_fresh_case(capsys, repeat):
    out = verdict(capsys, "ch2.ring_bytes_per_device", lambda nbytes, n: 2 * (n - 1) / n * nbytes)
    assert out.endswith("Correct. Well done.")
