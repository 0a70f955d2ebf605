"""Chapter 7's workers: free local ports, and run_workers, which starts multiworker.py as a two-worker cluster."""

import json
import re
import socket
import sys
import time

import numpy as np
import pytest
from conftest import running

from helpers import CourseError, cluster, processes
from helpers.chapters.ch07_beyond_one_machine import RESTART_CODE, run_workers
from helpers.processes import run_watched
from helpers.programs import multiworker, program

MULTIWORKER = program("multiworker")


def test_free_ports_are_distinct_and_bindable():
    ports = cluster.free_ports(3)
    assert len(set(ports)) == 3
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
    hosts = cluster.local_hosts(2)
    assert all(re.fullmatch(r"127\.0\.0\.1:\d+", host) for host in hosts) and hosts[0] != hosts[1]


def test_free_ports_rejects_bad_counts():
    with pytest.raises(CourseError, match=r"free_ports\(0\)"):
        cluster.free_ports(0)


def workers_of(job_dir) -> list[int]:
    """The worker processes of this test's job (other tests may run jobs at the same time)."""
    return running(re.escape(f"{MULTIWORKER} --out {job_dir}"))


def same_weights(a_dir, b_dir):
    with np.load(a_dir / "worker-0.npz") as a, np.load(b_dir / "worker-0.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])


STEPS = 40  # room for a preemption notice that lands several steps late on a busy machine


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted job: the folder holding its final weights, and what each worker printed."""
    out = tmp_path_factory.mktemp("reference")
    return out, run_workers(MULTIWORKER, "--out", out, "--steps", STEPS)


def test_two_workers_train_in_sync_and_only_the_chief_keeps_a_checkpoint(reference):
    out, results = reference
    assert [r.returncode for r in results] == [0, 0]
    assert all("done" in r.lines for r in results), [r.lines[-3:] for r in results]  # the chief may exit first
    losses = [[line for line in r.lines if line.startswith("step")] for r in results]
    assert losses[0] == losses[1] and len(losses[0]) == STEPS  # one synchronous job: the same loss on both
    # Seeded with their own index, the workers still start from the chief's initial weights (broadcast).
    sums = [next(line for line in r.lines if "sum of its initial weights" in line).split()[-1] for r in results]
    assert sums[0] == sums[1]
    with np.load(out / "worker-0.npz") as a, np.load(out / "worker-1.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])
    assert sorted(p.name for p in out.iterdir()) == ["checkpoint", "worker-0.npz", "worker-1.npz"]
    assert workers_of(out) == []


def test_a_killed_worker_stops_the_job_and_a_restart_resumes_from_the_chiefs_checkpoint(reference, tmp_path):
    start = time.monotonic()
    # Killed at step 6: a kill lands a little late on a busy machine, and the next save (step 10) is 4 steps away.
    with pytest.raises(CourseError, match=r"^worker 1 was killed on purpose \(last line: 'step 6 loss .*'\); the "
                                          r"others were stopped\.$"):
        run_workers(MULTIWORKER, "--out", tmp_path, "--steps", STEPS,
                    kill_when=lambda i, line: i == 1 and line.startswith("step 6 "))
    assert time.monotonic() - start < 60
    assert workers_of(tmp_path) == []
    resumed = run_workers(MULTIWORKER, "--out", tmp_path, "--steps", STEPS)
    for worker in resumed:
        steps = [line for line in worker.lines if line.startswith(("resumed", "step"))]
        assert steps[:2] == ["resumed after step 5", "step 6" + steps[1][6:]] and len(steps) == 1 + STEPS - 5
    same_weights(reference[0], tmp_path)


def test_a_preemption_notice_saves_on_every_worker_and_the_restart_resumes_there(reference, tmp_path):
    stopped = run_workers(MULTIWORKER, "--out", tmp_path, "--steps", STEPS,
                          preempt_when=lambda i, line: i == 1 and line.startswith("step 4 "))
    assert [r.returncode for r in stopped] == [RESTART_CODE] * 2, [r.lines[-3:] for r in stopped]
    assert stopped[1].notified
    saved = [next(filter(None, (re.fullmatch(r"preempted: checkpoint saved after step (\d+); exiting with code 42",
                                             line) for line in r.lines)), None) for r in stopped]
    assert all(saved) and saved[0].group(1) == saved[1].group(1), [r.lines[-3:] for r in stopped]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]  # the workers' temporary copies gone
    resumed = run_workers(MULTIWORKER, "--out", tmp_path, "--steps", STEPS)
    assert f"resumed after step {saved[0].group(1)}" in resumed[0].lines
    same_weights(reference[0], tmp_path)
    assert workers_of(tmp_path) == []


def test_a_worker_whose_peer_never_comes_times_out_cleanly(tmp_path):
    # Worker 1 cannot start (a bad argument): worker 0 would wait for it forever without the launcher.
    start = time.monotonic()
    with pytest.raises(CourseError, match=r"worker \d (exited with code 2|did not finish within 30 s)"):
        run_workers(MULTIWORKER, "--out", tmp_path, "--steps", "x", timeout_s=30)
    assert time.monotonic() - start < 40
    assert workers_of(tmp_path) == []


def test_only_the_chief_writes_to_the_real_checkpoint_path():
    assert multiworker.checkpoint_dir("/out", 0) == "/out/checkpoint"
    assert multiworker.checkpoint_dir("/out", 3) == "/out/workertemp_3/checkpoint"  # PreemptionCheckpointHandler's


def test_a_stalled_worker_turns_into_a_timeout_with_a_collective_timeout(tmp_path):
    start = time.monotonic()
    with pytest.raises(CourseError, match=r"worker 0 exited with code 1 \(last line: 'worker 0: an all-reduce "
                                          r"waited more than 2 s for a peer; giving up'\); the others were stopped"):
        run_workers(MULTIWORKER, "--out", tmp_path, "--steps", 10, "--hang-at", 3, "--collective-timeout", 2,
                    timeout_s=110)
    assert time.monotonic() - start < 100
    assert workers_of(tmp_path) == []


def test_worker_without_tf_config_says_how_to_start_it(monkeypatch, tmp_path):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    finished = run_watched([sys.executable, MULTIWORKER, "--out", tmp_path], timeout_s=120)
    assert finished.returncode == 2
    assert "TF_CONFIG is not set" in finished.lines[-1]


def test_a_worker_that_cannot_bind_its_port_stops_the_job_clearly(tmp_path, monkeypatch):
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))  # TensorFlow's server binds every interface: hold the port the same way
        taken.listen()
        port = taken.getsockname()[1]
        free = cluster.free_ports(1)[0]
        monkeypatch.setattr(cluster, "local_hosts", lambda n: [f"127.0.0.1:{free}", f"127.0.0.1:{port}"])
        start = time.monotonic()
        with pytest.raises(CourseError, match=r"worker \d (exited with code|did not finish)"):
            run_workers(MULTIWORKER, "--out", tmp_path, "--steps", 4, timeout_s=60)
        assert time.monotonic() - start < 61
    assert workers_of(tmp_path) == []


def test_each_worker_gets_its_tf_config_and_no_gpu_and_the_command_is_shown(monkeypatch, capsys):
    started = []
    monkeypatch.setattr(cluster, "local_hosts", lambda n: ["127.0.0.1:1001", "127.0.0.1:1002"][:n])
    monkeypatch.setattr(processes.Group, "start", lambda self, command, env: started.append((command, env)))
    monkeypatch.setattr(processes.Group, "watch", lambda self, **kwargs: kwargs)
    watched = run_workers(MULTIWORKER, "--steps", 3, show_commands=True)
    assert watched["ok_returncodes"] == (0, RESTART_CODE) and watched["name"] == "worker"
    assert [command for command, _ in started] == [[sys.executable, str(MULTIWORKER), "--steps", "3"]] * 2
    for index, (_, env) in enumerate(started):
        assert json.loads(env["TF_CONFIG"]) == {"cluster": {"worker": ["127.0.0.1:1001", "127.0.0.1:1002"]},
                                                "task": {"type": "worker", "index": index}}
        # On a one-GPU runtime the notebook's kernel holds the card; workers of this demo run on the CPU.
        assert env["CUDA_VISIBLE_DEVICES"] == ""
        # PreemptionCheckpointHandler switches itself off for CPU workers on Google Cloud: they are told they are not.
        assert env["GCE_METADATA_IP"] == "127.0.0.1:9"
    shown = capsys.readouterr().out.splitlines()
    assert shown[1] == (f"""worker 1: TF_CONFIG='{started[1][1]["TF_CONFIG"]}' """
                        f"python {MULTIWORKER} --steps 3")
