"""Addresses for a cluster of local processes (chapter 7): free ports on this machine, picked by portpicker."""

from __future__ import annotations

import portpicker

from helpers.errors import whole_number


def free_ports(n: int) -> list[int]:
    """n ports nobody listens on right now (TCP and UDP); portpicker never hands one out twice in a process."""
    whole_number("free_ports(", n)
    return [portpicker.pick_unused_port() for _ in range(n)]


def local_hosts(n: int) -> list[str]:
    """"127.0.0.1:PORT" for n tasks of a cluster on this machine, each on a port that is free now."""
    return [f"127.0.0.1:{port}" for port in free_ports(n)]
