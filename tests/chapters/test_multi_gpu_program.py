"""Chapter 3's program (helpers/programs/train_multi_gpu.py): the batch and the rate it scales, the epochs it times."""

import re
import sys

from helpers.processes import run_watched
from helpers.programs import program


def reported(*args, name="train_multi_gpu"):
    finished = run_watched([sys.executable, program(name), *args], timeout_s=300)
    assert finished.returncode == 0, finished.lines[-10:]
    return [line for line in finished.lines if not re.match(r"^(W0000|I0000|E0000|WARNING: All log)", line)]


def test_two_logical_cpus_hold_two_replicas_and_the_batch_and_rate_scale_with_them():
    lines = reported("--examples", "64", "--epochs", "3", "--per-replica-batch", "8", "--cpus", "2")
    # 8 per replica x 2 replicas; Nadam's 1e-3 at batch 32 x sqrt(16 / 32).
    assert lines[0] == "2 replica(s), global batch 16, learning rate 0.000707"
    assert [line.split(":")[0] for line in lines[1:4]] == ["epoch 1", "epoch 2", "epoch 3"]
    steady = re.fullmatch(r"steady epoch ([\d.]+) s: ([\d,]+) examples/s on 2 replica\(s\)", lines[4])
    assert steady and float(steady.group(1)) > 0


def test_the_jax_program_puts_a_replica_on_each_of_two_host_devices_and_scales_the_same_way():
    lines = reported("--examples", "64", "--epochs", "3", "--per-replica-batch", "8", "--cpus", "2",
                     name="train_multi_gpu_jax")
    assert lines[0] == "2 replica(s) on cpu, global batch 16, learning rate 0.000707"
    assert [line.split(":")[0] for line in lines[1:4]] == ["epoch 1", "epoch 2", "epoch 3"]
    assert re.fullmatch(r"steady epoch [\d.]+ s: [\d,]+ examples/s on 2 replica\(s\)", lines[4]), lines[4]


def test_the_jax_program_refuses_a_single_epoch():
    finished = run_watched([sys.executable, program("train_multi_gpu_jax"), "--epochs", "1"], timeout_s=60)
    assert finished.returncode == 2 and any("--epochs: at least 2" in line for line in finished.lines)
