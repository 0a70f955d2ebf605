"""A private network for the course's own test runs: a fresh Linux network namespace with only a loopback interface.

TensorFlow's gRPC servers (chapter 7's workers, the parameter-server and tf.data service demos) listen on every
interface, without authentication. Run inside a namespace, whatever they open is reachable from nowhere else:

    python -m tools.sandbox COMMAND...   # e.g. python -m tools.sandbox make notebook NB=...

Needs Linux, root, util-linux's unshare and nsenter, and a kernel or container that allows new namespaces; where
that is missing the command runs as it is, and a line on stderr says so.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

from helpers.processes import die_with_parent

LOOPBACK_UP = """
import fcntl, socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH14s", fcntl.ioctl(s, 0x8913, struct.pack("16sH14s", b"lo", 0, b"")))[1]  # SIOCGIFFLAGS
fcntl.ioctl(s, 0x8914, struct.pack("16sH14s", b"lo", flags | 1, b""))  # SIOCSIFFLAGS with IFF_UP
"""


@functools.cache
def private_network_available() -> bool:
    """True where we may create network namespaces (tried once)."""
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
            raise RuntimeError("private_network(): could not bring up the loopback interface in a new namespace.")
        yield prefix
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.wait()


def main(command: list[str]) -> int:
    """Run `command` in a private network where possible, else as it is; its exit code."""
    if not command:
        print(__doc__, file=sys.stderr)
        return 2
    if not private_network_available():
        print("tools.sandbox: no private network here (needs Linux, root, unshare and nsenter); running as is.",
              file=sys.stderr)
        return subprocess.run(command).returncode
    with private_network() as prefix:
        return subprocess.run([*prefix, *command], preexec_fn=die_with_parent).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
