"""Loopback helpers shared by the tests that start servers (SMTP sinks, titanpost serve)."""

from __future__ import annotations

import os
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest


class _Serving:
    """What ``serve_forever`` is called on (http.server, socketserver and werkzeug servers)."""

    def serve_forever(self, poll_interval: float = 0.5) -> None: ...


def serve_in_thread(server: _Serving, name: str | None = None) -> threading.Thread:
    """Start ``server.serve_forever`` on a daemon thread that notices ``shutdown()`` within 50
    ms (the default half-second poll made every test's teardown wait about that long)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name=name, daemon=True)
    thread.start()
    return thread


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def process_group_gone(group: int, seconds: float = 30) -> bool:
    """Whether no process of process group ``group`` is left (a deployment script stopped
    everything it started), waiting up to ``seconds`` for it to go: a killed gunicorn
    worker that outlived its master is reaped by init, on a loaded machine not at once."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def wait_until_serving(base: str, proc: subprocess.Popen[bytes], log_path: Path,
                       seconds: float = 30) -> None:
    """Wait for ``titanpost serve`` at ``base`` to answer its API; fail the test with the
    server's log if it exits or does not answer within ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/", timeout=2):
                return
        except OSError:  # (refused, reset, or no answer within the timeout on a busy machine)
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the server did not start:\n{log_path.read_text()}")
            time.sleep(0.1)
