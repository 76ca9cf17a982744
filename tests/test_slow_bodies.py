"""Slow request bodies do not starve the production web server (issue 36).

gunicorn runs as deploy/gunicorn.conf.py sets it up (production mode, two worker processes, as
the issue measured), on each kind of database. Fifty connections then each announce a body of
1,000 bytes, send 10 and hold on: a server that gives a request to a worker thread before its
body is in (gunicorn's gthread, four threads a process) has no thread left, and ``/healthz``
went unanswered. Here it must still answer, a game must still be created, and the slow
requests, once their bodies are complete, must be answered too. bench/slow_bodies.py measures
the latencies; this test asserts behaviour only (generous timeouts).
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import requests

from tests.netutil import free_port

ROOT = Path(__file__).resolve().parent.parent
SLOW = 50
ANNOUNCED, SENT = 1000, 10
PATIENCE = 20.0
"""Seconds a probe waits for its answer: far more than a free server takes (milliseconds),
far less than the slow connections are held."""


def _slow_request(port: int) -> socket.socket:
    """A connection whose POST announced ANNOUNCED bytes of body and sent SENT of them."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    head = (f"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {ANNOUNCED}\r\n\r\n")
    sock.sendall(head.encode("ascii") + b"[" * SENT)
    return sock


def _held(sock: socket.socket) -> bool:
    """Whether the server has neither answered nor closed ``sock`` yet."""
    sock.setblocking(False)
    try:
        sock.recv(1, socket.MSG_PEEK)
        return False
    except BlockingIOError:
        return True
    finally:
        sock.settimeout(PATIENCE)


@pytest.fixture
def production_web(migrated_database_url: str, tmp_path: Path) -> Iterator[str]:
    """gunicorn with deploy/gunicorn.conf.py in production mode; its base URL."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TITANPOST_", "GUNICORN_"))}
    env |= {
        "TITANPOST_ENV": "production",
        "TITANPOST_DATABASE_URL": migrated_database_url,
        "TITANPOST_SECRET_KEY": secrets.token_hex(32),
        "TITANPOST_BASE_URL": f"http://127.0.0.1:{port}",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
    }
    log = tmp_path / "gunicorn.log"
    with log.open("wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c",
                                   "deploy/gunicorn.conf.py", "app.wsgi:app"], cwd=ROOT, env=env,
                                  stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, log.read_text()
            try:
                if requests.get(f"{base}/healthz", timeout=5).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield base
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, 9)
            server.wait(5)


def test_slow_bodies_leave_the_server_answering(production_web: str) -> None:
    port = int(production_web.rsplit(":", 1)[1])
    with ExitStack() as stack:
        slow = [stack.enter_context(_slow_request(port)) for _ in range(SLOW)]
        time.sleep(1.0)  # every slow request is in the server's hands before the probes
        for _ in range(5):
            answer = requests.get(f"{production_web}/healthz", timeout=PATIENCE)
            assert answer.status_code == 200 and answer.json()["database"]["ok"] is True
        created = requests.post(f"{production_web}/api/games", timeout=PATIENCE, json={
            "seats": [{"email": "ann@example.org"}, {"bot": True}, {"bot": True}]})
        assert created.status_code == 201, created.text
        # the server was waiting for the bodies all along, neither answering nor dropping them
        assert all(_held(sock) for sock in slow)
        # a body completed late is read and answered like any other (here: not JSON, 400)
        late = slow[0]
        late.sendall(b"]" * (ANNOUNCED - SENT))
        status_line = late.makefile("rb").readline()
        assert status_line.startswith(b"HTTP/1.1 400"), status_line
