"""TF_CONFIG for a cluster, free local ports, and a local two-process cluster that cannot hang (chapter 6)."""

from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import ExitStack, contextmanager, nullcontext

from helpers.errors import CourseError, whole_number
from helpers.processes import die_with_parent, python_command, run_group

TASK_TYPES = ("chief", "worker", "ps", "evaluator")
# What chapter 6's multiworker.py exits with after saving a checkpoint on a preemption notice: "restart me" (the
# default of TensorFlow's PreemptionCheckpointHandler off Google Cloud: BorgTerminationConfig in failure_handling.py).
RESTART_CODE = 42
# PreemptionCheckpointHandler asks Google's metadata server whether it runs on Google Cloud (failure_handling_util.py,
# on_gcp), and there, on a CPU, switches itself off. Notebook runtimes may be Google Cloud VMs: local CPU workers are
# told the server is at a closed port, so the demo behaves the same everywhere (and skips a lookup that may take 5 s).
NOT_ON_GOOGLE_CLOUD = {"GCE_METADATA_IP": "127.0.0.1:9"}


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """n ports nobody listens on right now (held open together, so they differ)."""
    whole_number("free_ports(", n)
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in sockets:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in sockets]


def tf_config(workers, task_type: str = "worker", index: int = 0, **other_jobs) -> dict:
    """The TF_CONFIG of one task: the whole cluster ("host:port" per task, the same list for every task)
    and which task this process is. Extra jobs go in as keyword lists, e.g. ps=["ps0:2222"]."""
    cluster = {"worker": list(workers), **{job: list(hosts) for job, hosts in other_jobs.items()}}
    for job, hosts in cluster.items():
        if job not in TASK_TYPES:
            raise CourseError(f"tf_config(): unknown job {job!r}; TensorFlow knows {', '.join(TASK_TYPES)}.")
        for host in hosts:
            name, _, port = str(host).rpartition(":")
            if not name or not port.isdigit():
                raise CourseError(f"tf_config(): {host!r} in job {job!r} is not 'host:port' (e.g. '10.0.0.2:2222').")
    if task_type not in cluster:
        raise CourseError(f"tf_config(task_type={task_type!r}): the cluster has jobs {sorted(cluster)}.")
    whole_number("tf_config(index=", index, 0, len(cluster[task_type]) - 1, hint=f" (the tasks of job {task_type!r})")
    return {"cluster": cluster, "task": {"type": task_type, "index": index}}


LOOPBACK_UP = """
import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, struct.pack("16sH14s", b"lo", 0, b"")))[1]  # SIOCGIFFLAGS
fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))  # SIOCSIFFLAGS with IFF_UP
"""


@functools.cache
def private_network_available() -> bool:
    """True where we may create network namespaces: Linux, root, util-linux's unshare and nsenter, and a
    kernel or container that allows it (tried once)."""
    if not (sys.platform.startswith("linux") and os.geteuid() == 0
            and shutil.which("unshare") and shutil.which("nsenter")):
        return False
    return subprocess.run(["unshare", "--net", "true"], capture_output=True).returncode == 0


@contextmanager
def private_network():
    """A fresh network namespace with only a loopback interface, held open by a sleeping process; yields the
    command prefix that runs a program inside it. Nothing outside can reach a port opened in there."""
    holder = subprocess.Popen(["unshare", "--net", "--fork", "--kill-child", "sleep", "infinity"],
                              start_new_session=True, preexec_fn=die_with_parent)
    try:
        prefix = ["nsenter", f"--net=/proc/{holder.pid}/ns/net", "--"]
        ours = os.readlink("/proc/self/ns/net")
        for _ in range(50):  # wait until unshare has really moved into its new namespace, then bring lo up
            try:
                moved = os.readlink(f"/proc/{holder.pid}/ns/net") != ours
            except OSError:
                moved = False
            if moved and subprocess.run([*prefix, sys.executable, "-c", LOOPBACK_UP],
                                        capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise CourseError("private_network(): could not bring up the loopback interface in a new namespace.")
        yield prefix
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()


def run_local_workers(n: int, program, *args, timeout_s: float = 120, kill_when=None, preempt_when=None, echo=None,
                      private: bool | None = None):
    """Start `python program args...` (a .py file) as n workers of one cluster on 127.0.0.1, each with its TF_CONFIG,
    and wait for all of them. If one fails, the others are stopped (they would wait for it forever) and a
    CourseError says which; nothing is left running, also on timeout or interruption.

    kill_when(index, line) -> True kills that worker with SIGKILL (a machine lost without notice);
    preempt_when(index, line) -> True sends it SIGTERM (a preemption notice). A worker that then exits with
    RESTART_CODE has saved a checkpoint: that is no failure, and its results are returned like a finished run's.

    private=True runs the workers in their own network namespace (Linux, as root), where TensorFlow's servers,
    which listen on every interface, are reachable from nowhere else; None does so where it is possible."""
    if private is None:
        private = private_network_available()
    ports = free_ports(n)
    hosts = [f"127.0.0.1:{port}" for port in ports]
    # CPU-only workers: the demo is about processes, and two workers on one GPU would fight for its memory
    # (and NCCL refuses two ranks on one card). On a real cluster each worker has its own accelerators.
    envs = [{**os.environ, "TF_CONFIG": json.dumps(tf_config(hosts, "worker", i)), "TF_CPP_MIN_LOG_LEVEL": "2",
             "CUDA_VISIBLE_DEVICES": "", **NOT_ON_GOOGLE_CLOUD} for i in range(n)]
    with private_network() if private else nullcontext([]) as prefix:
        results = run_group([[*prefix, *python_command(program, *args)]] * n, envs=envs, timeout_s=timeout_s,
                            kill_when=kill_when, notify_when=preempt_when, echo=echo,
                            ok_returncodes=(0, RESTART_CODE))
    failed = [i for i, r in enumerate(results)
              if r.returncode not in (0, RESTART_CODE) and r.killed != "a peer failed"]
    if failed:
        i = failed[0]
        how = {"on purpose": "was killed on purpose", "timeout": f"did not finish within {timeout_s:g} s"}.get(
            results[i].killed, f"exited with code {results[i].returncode}")
        last = results[i].lines[-1] if results[i].lines else "(no output)"
        raise CourseError(f"worker {i} {how} (last line: {last!r}); the other worker(s) were stopped. Start all "
                          "workers again: a program that checkpoints (as chapter 6's multiworker.py does) resumes from "
                          "there.")
    return results
