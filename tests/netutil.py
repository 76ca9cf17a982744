"""Loopback helpers shared by the tests that start servers (SMTP sinks, titanpost serve)."""

from __future__ import annotations

import os
import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def process_group_gone(group: int) -> bool:
    """Whether no process of process group ``group`` is left (a deployment script stopped
    everything it started)."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return True
    return False
