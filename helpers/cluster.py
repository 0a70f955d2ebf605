"""Addresses for a cluster of local processes (chapter 7): free ports on 127.0.0.1."""

from __future__ import annotations

import socket
from contextlib import ExitStack

from helpers.errors import whole_number


def free_ports(n: int, host: str = "127.0.0.1") -> list[int]:
    """n ports nobody listens on right now (held open together, so they differ)."""
    whole_number("free_ports(", n)
    with ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in sockets:
            s.bind((host, 0))
        return [s.getsockname()[1] for s in sockets]


def local_hosts(n: int) -> list[str]:
    """"127.0.0.1:PORT" for n tasks of a cluster on this machine, each on a port that is free now."""
    return [f"127.0.0.1:{port}" for port in free_ports(n)]
