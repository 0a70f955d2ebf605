"""Chapter 0's exercise checkers: the right answers pass, the starting code and every shortcut found are refused."""

import re

import numpy as np
import pytest

from helpers.exercises import check


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.rstrip("\n")


def word_dropout(row, rng, rate=0.1):  # the notebook's per-token word dropout
    return np.array([2 if rng.random() < rate else token for token in row], dtype=np.int32)


def starting_code(batch, rng, rate=0.1):  # the exercise cell as the learner gets it
    return np.stack([word_dropout(row, rng, rate) for row in batch])


def solution(batch, rng, rate=0.1):  # the folded solution
    return np.where(rng.random(batch.shape) < rate, 2, batch).astype(np.int32)


def test_the_solution_is_accepted(capsys):
    assert verdict(capsys, "ch0.vectorized_dropout", solution) == "[ch0.vectorized_dropout] Correct. Well done."


def test_the_starting_code_is_refused_with_the_measured_ratio_and_its_noise(capsys):
    out = verdict(capsys, "ch0.vectorized_dropout", starting_code)
    assert re.fullmatch(r"\[ch0.vectorized_dropout\] Not yet: it is \d+\.\dx as fast as the per-token loop \(the loop "
                        r"timed against itself varied \d+\.\d\dx\); aim for 10x: .*np\.where\.", out), out


def every_tenth_token(batch, rng, rate=0.1):  # vectorised and exactly 10%, but the same tokens every time
    out = batch.copy()
    out[:, ::10] = 2
    return out


def ignores_rate(batch, rng, rate=0.1):  # random, but always 10%
    return np.where(rng.random(batch.shape) < 0.1, 2, batch).astype(np.int32)


def first_tokens_by_rate(batch, rng, rate=0.1):  # follows rate, but no randomness at all
    out = batch.copy()
    out[:, :round(rate * batch.shape[1])] = 2
    return out


def global_random(batch, rng, rate=0.1):  # ignores the rng it is given: not reproducible
    return np.where(np.random.random(batch.shape) < rate, 2, batch).astype(np.int32)


def in_place(batch, rng, rate=0.1):  # fast, but overwrites the training data the batch is a view of
    batch[rng.random(batch.shape) < rate] = 2
    return batch


@pytest.mark.parametrize("answer, hint", [
    (every_tenth_token, r"with rate=0\.3 about 30% of the tokens should become 2; 10\.0% did"),
    (ignores_rate, r"with rate=0\.3 about 30% of the tokens should become 2; 1\d\.\d% did"),
    (first_tokens_by_rate, r"two different random generators dropped exactly the same tokens"),
    (global_random, r"the same seed gave different masks"),
    (in_place, r"it changed the batch it was given"),
    (lambda batch, rng, rate=0.1: batch, r"with rate=0\.1 about 10% of the tokens should become 2; 0\.0% did"),
    (lambda batch, rng, rate=0.1: batch[:, :10], r"return an array of the batch's shape"),
    (lambda batch, rng, rate=0.1: np.where(rng.random(batch.shape) < rate, 0, batch), r"replace dropped tokens with 2"),
], ids=["deterministic mask", "ignores rate", "deterministic mask following rate", "global random", "in place",
        "nothing dropped", "wrong shape", "wrong token"])
def test_each_shortcut_is_refused(capsys, answer, hint):
    out = verdict(capsys, "ch0.vectorized_dropout", answer)
    assert re.match(rf"\[ch0.vectorized_dropout\] Not yet: {hint}", out), out


@pytest.mark.parametrize("answer, hint", [
    (0.8, None), (80, "give a fraction between 0 and 1"), (0.2, "share = input time"),
])
def test_input_share(capsys, answer, hint):
    out = verdict(capsys, "ch0.input_share", answer)
    assert out == "[ch0.input_share] Correct. Well done." if hint is None else hint in out
