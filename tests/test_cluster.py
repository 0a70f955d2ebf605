import json
import re
import time

import numpy as np
import pytest

from helpers import CourseError, cluster, processes
from helpers.processes import python_command, run_watched, running
from helpers.programs import multiworker, program

MULTIWORKER = program("multiworker")


def test_free_ports_are_distinct_and_bindable():
    import socket

    ports = cluster.free_ports(3)
    assert len(set(ports)) == 3
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_tf_config_for_each_task_of_a_cluster():
    hosts = ["10.0.0.1:2222", "10.0.0.2:2222"]
    assert cluster.tf_config(hosts, "worker", 1) == {"cluster": {"worker": hosts},
                                                     "task": {"type": "worker", "index": 1}}
    with_ps = cluster.tf_config(hosts, "ps", 0, ps=["10.0.0.9:2222"], chief=["10.0.0.8:2222"])
    assert with_ps["cluster"]["ps"] == ["10.0.0.9:2222"] and with_ps["task"] == {"type": "ps", "index": 0}
    json.dumps(with_ps)  # TF_CONFIG is JSON


@pytest.mark.parametrize("kwargs, message", [
    ({"workers": ["10.0.0.1"]}, r"'10.0.0.1' in job 'worker' is not 'host:port'"),
    ({"workers": ["a:1"], "index": 1},
     r"tf_config\(index=1\): use a whole number from 0 to 0 \(the tasks of job 'worker'\)"),
    ({"workers": ["a:1"], "task_type": "chief"}, r"the cluster has jobs \['worker'\]"),
    ({"workers": ["a:1"], "master": ["b:2"]}, r"unknown job 'master'"),
])
def test_tf_config_rejects_what_tensorflow_would_choke_on(kwargs, message):
    with pytest.raises(CourseError, match=message):
        cluster.tf_config(**kwargs)


def test_free_ports_rejects_bad_counts():
    with pytest.raises(CourseError, match=r"free_ports\(0\)"):
        cluster.free_ports(0)


def workers_of(job_dir) -> list[int]:
    """The worker processes of this test's job (other tests may run jobs at the same time)."""
    return running(re.escape(f"{MULTIWORKER} --out {job_dir}"))


def test_two_workers_train_in_sync_and_only_the_chief_keeps_a_checkpoint(tmp_path):
    results = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path, "--steps", 6, timeout_s=120)
    assert all("done" in r.lines for r in results), [r.lines[-3:] for r in results]  # the chief may exit first
    losses = [[line for line in r.lines if line.startswith("step")] for r in results]
    assert losses[0] == losses[1] and len(losses[0]) == 6  # one synchronous job: the same loss on both
    # Seeded with their own index, the workers still start from the chief's initial weights (broadcast).
    sums = [next(line for line in r.lines if "sum of its initial weights" in line).split()[-1] for r in results]
    assert sums[0] == sums[1]
    with np.load(tmp_path / "worker-0.npz") as a, np.load(tmp_path / "worker-1.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint", "worker-0.npz", "worker-1.npz"]
    assert workers_of(tmp_path) == []


def test_a_dead_worker_stops_the_job_with_a_clear_error_and_no_orphans(tmp_path):
    start = time.monotonic()
    with pytest.raises(CourseError, match=r"worker 1 was killed on purpose \(last line: 'step 3 loss .*'\); "
                                          r"the other worker\(s\) were stopped\. Start all workers again"):
        cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path, "--steps", 50, timeout_s=120,
                                  kill_when=lambda i, line: i == 1 and line.startswith("step 3 "))
    assert time.monotonic() - start < 60
    assert workers_of(tmp_path) == []


def test_a_worker_whose_peer_never_comes_times_out_cleanly(tmp_path, monkeypatch):
    # Worker 1 cannot start (a bad argument): worker 0 would wait for it forever without the launcher.
    start = time.monotonic()
    with pytest.raises(CourseError, match=r"worker \d (exited with code 2|did not finish within 30 s)"):
        cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path, "--steps", "x", timeout_s=30)
    assert time.monotonic() - start < 40
    assert workers_of(tmp_path) == []


def test_only_the_chief_writes_to_the_real_checkpoint_path():
    assert multiworker.checkpoint_dir("/out", 0) == "/out/checkpoint"
    assert multiworker.checkpoint_dir("/out", 3) == "/out/workertemp_3/checkpoint"  # PreemptionCheckpointHandler's


def test_a_stalled_worker_turns_into_a_timeout_with_a_collective_timeout(tmp_path):
    start = time.monotonic()
    with pytest.raises(CourseError, match=r"worker 0 exited with code 1 \(last line: 'worker 0: an all-reduce "
                                          r"waited more than 2 s for a peer; giving up'\); the other worker\(s\) "
                                          r"were stopped"):
        cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path, "--steps", 10, "--hang-at", 3,
                                  "--collective-timeout", 2, timeout_s=110)
    assert time.monotonic() - start < 100
    assert workers_of(tmp_path) == []


def test_a_preemption_notice_saves_on_every_worker_and_the_restart_resumes_there(tmp_path):
    reference = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path / "ref", "--steps", 40)
    # "done" need not be the last line: a worker's preemption watcher can log the chief's exit after it.
    assert all("done" in r.lines for r in reference), [r.lines[-3:] for r in reference]
    stopped = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path / "run", "--steps", 40,
                                        preempt_when=lambda i, line: i == 1 and line.startswith("step 4 "))
    # 36 steps of margin: on a busy machine the notice can land several steps after the line that triggered it.
    assert [r.returncode for r in stopped] == [cluster.RESTART_CODE] * 2, [r.lines[-3:] for r in stopped]
    assert stopped[1].notified
    saved = [next(filter(None, (re.fullmatch(r"preempted: checkpoint saved after step (\d+); exiting with code 42",
                                             line) for line in r.lines)), None) for r in stopped]
    assert all(saved) and saved[0].group(1) == saved[1].group(1), [r.lines[-3:] for r in stopped]
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["checkpoint"]  # the workers' temporary copies gone
    resumed = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path / "run", "--steps", 40)
    assert f"resumed after step {saved[0].group(1)}" in resumed[0].lines
    with np.load(tmp_path / "ref" / "worker-0.npz") as a, np.load(tmp_path / "run" / "worker-0.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])
    assert workers_of(tmp_path) == []


def test_worker_without_tf_config_says_how_to_start_it(monkeypatch, tmp_path):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    finished = run_watched(python_command(MULTIWORKER, "--out", tmp_path), timeout_s=120)
    assert finished.returncode == 2
    assert "TF_CONFIG is not set" in finished.lines[-1]


def test_restarting_both_workers_resumes_from_the_chiefs_checkpoint(tmp_path):
    reference = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path / "ref", "--steps", 12)
    assert all("done" in r.lines for r in reference), [r.lines[-3:] for r in reference]
    # Killed at step 6: a kill lands a little late on a busy machine, and the next save (step 10) is 4 steps away.
    with pytest.raises(CourseError, match="worker 1 was killed on purpose"):
        cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path / "run", "--steps", 12,
                                  kill_when=lambda i, line: i == 1 and line.startswith("step 6 "))
    resumed = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path / "run", "--steps", 12)
    for worker in resumed:
        steps = [line for line in worker.lines if line.startswith(("resumed", "step"))]
        assert steps[:2] == ["resumed after step 5", "step 6" + steps[1][6:]] and len(steps) == 1 + 7
    with np.load(tmp_path / "ref" / "worker-0.npz") as a, np.load(tmp_path / "run" / "worker-0.npz") as b:
        for key in a.files:
            np.testing.assert_array_equal(a[key], b[key])
    assert workers_of(tmp_path) == []


needs_namespaces = pytest.mark.skipif(not cluster.private_network_available(),
                                      reason="network namespaces need Linux, root and unshare/nsenter")


@needs_namespaces
def test_private_network_has_its_own_loopback_unreachable_from_outside():
    import subprocess
    import sys

    listen = ("import socket, sys, time; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen();"
              "print(s.getsockname()[1], flush=True); time.sleep(20)")
    with cluster.private_network() as prefix:
        inside = subprocess.Popen([*prefix, sys.executable, "-c", listen], stdout=subprocess.PIPE, text=True)
        try:
            port = int(inside.stdout.readline())
            reach = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=2); print('reached')"
            assert subprocess.run([*prefix, sys.executable, "-c", reach], capture_output=True,
                                  text=True).stdout.strip() == "reached"
            outside = subprocess.run([sys.executable, "-c", reach], capture_output=True, text=True)
            assert outside.returncode != 0 and "reached" not in outside.stdout
        finally:
            inside.kill()
            inside.wait()
    holder = int(prefix[1].split("/")[2])  # --net=/proc/PID/ns/net
    assert not __import__("os").path.exists(f"/proc/{holder}"), "the namespace holder must be gone"


@needs_namespaces
def test_workers_in_a_private_network_train_in_sync(tmp_path):
    results = cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path, "--steps", 4, private=True,
                                        timeout_s=90)
    # Not the last line: a worker may log the chief's closed socket after its own "done" (chapter 6, section 3).
    assert all("done" in r.lines for r in results), [r.lines[-3:] for r in results]
    assert workers_of(tmp_path) == []


def test_a_worker_that_cannot_bind_its_port_stops_the_job_clearly(tmp_path, monkeypatch):
    import socket

    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))  # TensorFlow's server binds every interface: hold the port the same way
        taken.listen()
        port = taken.getsockname()[1]
        real = cluster.free_ports
        monkeypatch.setattr(cluster, "free_ports", lambda n: [real(1)[0], port])
        start = time.monotonic()
        with pytest.raises(CourseError, match=r"worker \d (exited with code|did not finish)"):
            cluster.run_local_workers(2, MULTIWORKER, "--out", tmp_path, "--steps", 4, private=False,
                                      timeout_s=60)
        assert time.monotonic() - start < 61
    assert workers_of(tmp_path) == []


def test_local_workers_see_no_gpu_so_they_never_compete_with_the_kernel_for_one(monkeypatch):
    # On a one-GPU runtime the notebook's kernel holds the card; workers of this demo run on the CPU.
    seen = {}

    def fake_run_group(cmds, envs, **kwargs):
        seen["envs"] = envs
        return [processes.Finished(returncode=0) for _ in cmds]

    monkeypatch.setattr(cluster, "run_group", fake_run_group)
    cluster.run_local_workers(2, MULTIWORKER, private=False)
    assert [env["CUDA_VISIBLE_DEVICES"] for env in seen["envs"]] == ["", ""]
    # PreemptionCheckpointHandler switches itself off for CPU workers on Google Cloud: the workers are told they are not
    assert all(env["GCE_METADATA_IP"] == cluster.NOT_ON_GOOGLE_CLOUD["GCE_METADATA_IP"] for env in seen["envs"])
    assert [json.loads(env["TF_CONFIG"])["task"]["index"] for env in seen["envs"]] == [0, 1]
