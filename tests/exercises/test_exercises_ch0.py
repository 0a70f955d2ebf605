"""Chapter 0's exercise checkers: the right answers pass, the starting code and every shortcut found are refused.
The solution and the starting code are the notebook's, read for each test (solutions.py)."""

import inspect
import re

import numpy as np
import pytest
from solutions import code_cell, definition, folded_solution, run, starting_code

from helpers.exercises import check

DROPOUT = "ch0.vectorized_dropout"
NOTEBOOK = {}  # the notebook's starting code and solution, read again for each test (fixture below)


@pytest.fixture(autouse=True)
def notebook_code():
    word_dropout = run(definition(code_cell("ch0", "def word_dropout("), "word_dropout"), "word_dropout", np=np)
    NOTEBOOK["starting code"] = run(starting_code(DROPOUT), "batch_word_dropout", np=np, word_dropout=word_dropout)
    NOTEBOOK["solution"] = run(folded_solution(DROPOUT), "batch_word_dropout", np=np)


def verdict(capsys, name, answer):
    assert check(name, answer) is None
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return out.rstrip("\n")


def test_the_solution_is_accepted(capsys):
    assert verdict(capsys, DROPOUT, NOTEBOOK["solution"]) == "[ch0.vectorized_dropout] Correct. Well done."


def test_the_starting_code_is_refused_with_the_measured_ratio_and_its_noise(capsys):
    out = verdict(capsys, DROPOUT, NOTEBOOK["starting code"])
    assert re.fullmatch(r"\[ch0.vectorized_dropout\] Not yet: it ran \d+\.\dx as fast as the starting code \("
                        r"(within noise|time (below|above) the starting code's, outside the noise); A/A band ±\d+%, "
                        r"1\.5 times how far the starting code strayed from itself\); aim for 10x, outside the "
                        r"noise: .*np\.where\.", out), out


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


def block_mask(batch, rng, rate=0.1):  # C0-X2: seed-dependent and the right share, but runs of 2s, not independent
    positions = (np.arange(batch.size) + rng.integers(1000)) % 1000 < rate * 1000
    return np.where(positions.reshape(batch.shape), 2, batch).astype(np.int32)


def same_row_mask(batch, rng, rate=0.1):  # one random pattern of exactly `rate` of the columns, on every row
    row = np.zeros(batch.shape[1], bool)
    row[rng.permutation(batch.shape[1])[:round(rate * batch.shape[1])]] = True
    return np.where(row, 2, batch).astype(np.int32)


def whole_rows(batch, rng, rate=0.1):  # drops exactly `rate` of the wires, whole: neighbours go together
    rows = np.zeros((batch.shape[0], 1), bool)
    rows[rng.permutation(batch.shape[0])[:round(rate * batch.shape[0])]] = True
    return np.where(rows, 2, batch).astype(np.int32)


_memo = {}


def memoised(batch, rng, rate=0.1):  # C0-X3: the per-token loop, remembered per (generator, batch, rate)
    key = (id(rng), batch.tobytes(), rate)
    if key not in _memo:
        _memo[key] = NOTEBOOK["starting code"](batch, rng, rate), rng  # held: its id is not reused
    return _memo[key][0]


def _timed():
    return any(frame.function == "timed_speedup" for frame in inspect.stack())


def unchanged_while_timed(batch, rng, rate=0.1):  # C0-X3: the right mask, except while the check times it
    return batch.copy() if _timed() else NOTEBOOK["solution"](batch, rng, rate)


def memoised_while_timed(batch, rng, rate=0.1):  # the right mask, remembered per rows only while timed
    if not _timed():
        return NOTEBOOK["solution"](batch, rng, rate)
    key = batch.tobytes()
    if key not in _memo:
        _memo[key] = NOTEBOOK["solution"](batch, rng, rate)
    return _memo[key]


@pytest.mark.parametrize("answer, hint", [
    (block_mask, r"the dropped tokens are not independent \(after a dropped token, the next one was dropped "
                 r"(9\d|100)%"),
    (same_row_mask, r"the dropped tokens are not independent"),
    (whole_rows, r"the dropped tokens are not independent \(after a dropped token, the next one was dropped 100%"),
    (memoised, r"two calls with the same generator dropped the same tokens"),
    (unchanged_while_timed, r"in the timed calls it did not drop tokens: with rate=0\.1 about 10% .*; 0\.0% did"),
    (memoised_while_timed, r"in the timed calls it returned the same mask for the same rows twice"),
], ids=["block mask", "same mask on every row", "whole rows", "memoised per rng and batch",
        "batch unchanged while timed", "memoised while timed"])
def test_each_dependence_and_timing_shortcut_is_refused(capsys, answer, hint):
    _memo.clear()
    out = verdict(capsys, "ch0.vectorized_dropout", answer)
    assert re.match(rf"\[ch0.vectorized_dropout\] Not yet: {hint}", out), out


# The folded solution is accepted in test_exercises.py (RIGHT_ANSWERS).
@pytest.mark.parametrize("answer, hint", [
    ([0.8201, 0.7999], None),  # within 1%
    ((0.1, 0.08), "the accelerator speeds up only the update"),
    ((82, 80), "give seconds, not percentages"),
    ((1.0, 0.8), "one after the other, a step costs input + update"),
    ((0.82, 0.82), "overlapped, input and update run at the same time"),
    ((0.82, 0.02), "overlapped, input and update run at the same time"),
    (0.8, "give two numbers in seconds"),
    (("0.82", "0.8"), "give two numbers in seconds"),
], ids=["close", "input sped up too", "percentages", "sequential not sped up", "overlapped as a sum",
        "overlapped as the update", "one number (the old input share)", "strings"])
def test_faster_accelerator(capsys, answer, hint):
    out = verdict(capsys, "ch0.faster_accelerator", answer)
    assert out == "[ch0.faster_accelerator] Correct. Well done." if hint is None else hint in out, out
