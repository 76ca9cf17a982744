"""Slow request bodies do not starve the production web server (issue 36).

Fifty connections each announce a body of 1,000 bytes, send 10 and hold on. gunicorn's thread
worker (deploy/gunicorn.conf.py: two processes of four threads, as the issue measured) gives a
request to a thread once its headers are in, and the thread waits for the body: eight such
requests took every thread and ``/healthz`` went unanswered. Production runs it behind nginx
(deploy/nginx/), which reads every body whole before it passes a request on: here nginx runs
the deploy's own ``titanpost-proxy.conf`` in front of gunicorn, on each kind of database, and
``/healthz`` must still answer, a game must still be created, and each slow request, once its
body is complete, must be answered too. A server that clients reach without such a front runs
gunicorn's gevent worker instead (``GUNICORN_WORKER_CLASS=gevent``), tested the same way
alone. bench/slow_bodies.py measures the latencies; this test asserts behaviour only, with
generous timeouts.

nginx is Debian's package (``apt-get install nginx``): where it is missing the nginx tests are
skipped, saying why, unless ``TITANPOST_TEST_NGINX=required`` (``.ci/run``, which installs it).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
import requests

from tests.netutil import free_port

ROOT = Path(__file__).resolve().parent.parent
PROXY_CONF = ROOT / "deploy" / "nginx" / "titanpost-proxy.conf"
SLOW = 50
ANNOUNCED, SENT = 1000, 10
PATIENCE = 20.0
"""Seconds a probe waits for its answer: far more than a free server takes (milliseconds),
less than nginx's ``client_body_timeout`` lets a slow connection be held."""
NGINX_REQUIRED = os.environ.get("TITANPOST_TEST_NGINX", "") == "required"


def _wait_for(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if requests.get(url, timeout=5).status_code == 200:
                return
        except requests.RequestException:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(5)


@contextmanager
def gunicorn(database_url: str, folder: Path, **env: str) -> Iterator[int]:
    """gunicorn with deploy/gunicorn.conf.py in production mode, two processes; its port."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("TITANPOST_", "GUNICORN_"))}
    environ |= {
        "TITANPOST_ENV": "production",
        "TITANPOST_DATABASE_URL": database_url,
        "TITANPOST_SECRET_KEY": secrets.token_hex(32),
        "TITANPOST_BASE_URL": f"http://127.0.0.1:{port}",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
        **env,
    }
    log = folder / "gunicorn.log"
    with log.open("wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c",
                                   "deploy/gunicorn.conf.py", "app.wsgi:app"], cwd=ROOT,
                                  env=environ, stdout=out, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", server, log)
        yield port
    finally:
        _stop(server)


@contextmanager
def nginx_in_front(upstream: int) -> Iterator[int]:
    """nginx on a free loopback port passing every request to 127.0.0.1:``upstream`` with the
    deploy's titanpost-proxy.conf; its port."""
    binary = shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None)
    if binary is None:
        reason = "nginx is not installed (apt-get install nginx)"
        if NGINX_REQUIRED:
            pytest.fail(f"{reason} (TITANPOST_TEST_NGINX=required)")
        pytest.skip(reason)
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="titanpost-nginx-"))
    folder.chmod(0o755)  # (nginx's workers, another user under root, keep bodies in it)
    temp_paths = "\n".join(f"    {kind}_temp_path {folder / kind};"
                           for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    (folder / "nginx.conf").write_text(f"""
daemon off;
worker_processes 1;
pid {folder / 'nginx.pid'};
error_log {folder / 'error.log'} warn;
events {{ worker_connections 512; }}
http {{
    access_log off;
{temp_paths}
    upstream titanpost {{ server 127.0.0.1:{upstream}; keepalive 8; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://titanpost;
            include {PROXY_CONF};
        }}
    }}
}}
""")
    log = folder / "nginx.out"
    with log.open("wb") as out:
        front = subprocess.Popen([binary, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                                 stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", front, folder / "error.log")
        yield port
    finally:
        _stop(front)
        shutil.rmtree(folder, ignore_errors=True)


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


def _still_answers_with_slow_bodies_held(port: int) -> None:
    base = f"http://127.0.0.1:{port}"
    with ExitStack() as stack:
        slow = [stack.enter_context(_slow_request(port)) for _ in range(SLOW)]
        time.sleep(1.0)  # every slow request is in the server's hands before the probes
        for _ in range(5):
            answer = requests.get(f"{base}/healthz", timeout=PATIENCE)
            assert answer.status_code == 200 and answer.json()["database"]["ok"] is True
        created = requests.post(f"{base}/api/games", timeout=PATIENCE, json={
            "seats": [{"email": "ann@example.org"}, {"bot": True}, {"bot": True}]})
        assert created.status_code == 201, created.text
        # the server was waiting for the bodies all along, neither answering nor dropping them
        assert all(_held(sock) for sock in slow)
        # a body completed late is read and answered like any other (here: not JSON, 400)
        late = slow[0]
        late.sendall(b"]" * (ANNOUNCED - SENT))
        status_line = late.makefile("rb").readline()
        assert status_line.startswith(b"HTTP/1.1 400"), status_line


def test_behind_nginx_slow_bodies_leave_the_server_answering(
        migrated_database_url: str, tmp_path: Path) -> None:
    """The production set-up: gunicorn's thread worker (the deploy file's) behind nginx."""
    with gunicorn(migrated_database_url, tmp_path) as upstream, \
            nginx_in_front(upstream) as front:
        _still_answers_with_slow_bodies_held(front)


def test_gevent_workers_alone_are_not_starved_by_slow_bodies(
        migrated_database_url: str, tmp_path: Path) -> None:
    """A server clients reach directly: GUNICORN_WORKER_CLASS=gevent, no front."""
    with gunicorn(migrated_database_url, tmp_path, GUNICORN_WORKER_CLASS="gevent") as port:
        _still_answers_with_slow_bodies_held(port)
