"""Killing a training run with SIGKILL and starting it again resumes it from its last backup."""

import argparse
import sys

import numpy as np
import pytest

from helpers.processes import run_watched
from helpers.programs import program, resumable

EPOCHS, STEPS = 4, 12


def train(tmp_path, name, save_freq="epoch", kill_at=None):
    out = tmp_path / f"{name}.npz"
    cmd = [sys.executable, program("resumable"), "--backup-dir", tmp_path / f"{name}-backup", "--out", out,
           "--epochs", EPOCHS, "--steps", STEPS, "--save-freq", save_freq, *(["--die-at", kill_at] if kill_at else [])]
    return run_watched(cmd, timeout_s=240), out


def first_epoch(finished):
    return next(line for line in finished.lines if line.startswith("start epoch"))


def weights(path):
    with np.load(path) as arrays:
        return [arrays[k] for k in sorted(arrays.files)]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    finished, out = train(tmp_path_factory.mktemp("ref"), "ref")
    assert finished.returncode == 0 and finished.lines[-1] == "done", finished.lines[-5:]
    return weights(out)


@pytest.mark.parametrize("kill_at, resumes_at", [
    ("step 2 6", "start epoch 2"),     # in the middle of an epoch: that epoch is done again
    ("start epoch 2", "start epoch 2"),  # at an epoch boundary, just after epoch 1's backup
    ("step 0 7", "start epoch 0"),     # during the first epoch, before any backup exists
])
def test_killed_run_resumes_and_ends_with_the_same_weights(tmp_path, uninterrupted, kill_at, resumes_at):
    killed, out = train(tmp_path, "run", kill_at=kill_at)
    killed.check("the run to kill", returncode=-9)
    assert killed.lines[-1] == kill_at and not out.exists()
    resumed, out = train(tmp_path, "run")
    resumed.check("the restarted run")
    assert resumed.lines[-1] == "done"
    assert first_epoch(resumed) == resumes_at
    for a, b in zip(uninterrupted, weights(out)):
        np.testing.assert_array_equal(a, b)


def test_step_backups_lose_less_work_but_keras_restarts_the_epoch(tmp_path, uninterrupted):
    # Keras 3.15's BackupAndRestore(save_freq=N) saves every N steps but, on restore, restarts the epoch from
    # its first batch with the weights saved mid-epoch: those batches are seen twice. If this test fails,
    # Keras now resumes mid-epoch: update chapter 7's pitfall box.
    train(tmp_path, "steps", save_freq="4", kill_at="step 2 6")[0].check("the run to kill", returncode=-9)
    resumed, out = train(tmp_path, "steps", save_freq="4")
    resumed.check("the restarted run")
    assert first_epoch(resumed) == "start epoch 2"
    assert any(not np.array_equal(a, b) for a, b in zip(uninterrupted, weights(out)))


@pytest.mark.parametrize("bad", ["0", "-3", "often", "2.5"])
def test_a_bad_save_freq_is_refused(bad):
    with pytest.raises(argparse.ArgumentTypeError, match="neither \"epoch\" nor a positive number of steps"):
        resumable.save_frequency(bad)


def test_save_freq_takes_epoch_or_steps():
    assert resumable.save_frequency("epoch") == "epoch"
    assert resumable.save_frequency("4") == 4


def test_the_program_refuses_a_bad_save_freq_with_a_usage_message(tmp_path):
    finished = run_watched([sys.executable, program("resumable"), "--backup-dir", tmp_path, "--out", tmp_path / "o.npz",
                            "--save-freq", "often"], timeout_s=120)
    assert finished.returncode == 2
    assert "neither \"epoch\" nor a positive number of steps" in finished.lines[-1]


def test_a_truncated_backup_falls_back_to_the_previous_one(tmp_path, uninterrupted):
    # A kill in the middle of save_weights leaves a truncated .h5; double_checkpoint=True keeps the one before.
    train(tmp_path, "run", kill_at="step 2 6")[0].check("the run to kill", returncode=-9)
    weights_file = tmp_path / "run-backup" / "latest.weights.h5"
    weights_file.write_bytes(weights_file.read_bytes()[: weights_file.stat().st_size // 2])
    resumed, out = train(tmp_path, "run")
    resumed.check("the run restarted from a truncated backup")
    assert first_epoch(resumed) == "start epoch 1"  # from the previous backup, written at the end of epoch 0
    for a, b in zip(uninterrupted, weights(out)):
        np.testing.assert_array_equal(a, b)
