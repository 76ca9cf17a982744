"""The pages' live streams as deploy/ serves them (issue 38): behind nginx, from gevent workers.

The production set-up on PostgreSQL: the web instance (deploy/gunicorn.conf.py, thread
workers, two processes) and the live instance (deploy/gunicorn-live.conf.py, gevent workers,
two processes) behind nginx running the location blocks of deploy/nginx/titanpost.conf with
its titanpost-proxy.conf. Two Server-Sent Events streams of one game are opened through nginx;
a move is made through the web instance's JSON API; both streams must receive
``event: changed`` within seconds. That proves nginx passes the events on as they come (no
buffering) and routes the streams to the live instance, and that the move's NOTIFY, committed
by a web process, is heard by the live processes. bench/live.py measures it at scale.

nginx is Debian's package; where it is missing the test is skipped, saying why, unless
``TITANPOST_TEST_NGINX=required`` (as in tests/test_slow_bodies.py).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
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
from tests.test_slow_bodies import NGINX_REQUIRED, PROXY_CONF, ROOT, _stop, _wait_for

SITE_CONF = ROOT / "deploy" / "nginx" / "titanpost.conf"
PATIENCE = 10.0
"""Seconds a stream may take to tell the move (it takes milliseconds on a quiet machine)."""


def _nginx() -> str:
    binary = shutil.which("nginx") or next(
        (path for path in ("/usr/sbin/nginx",) if os.access(path, os.X_OK)), None)
    if binary is None:
        reason = "nginx is not installed (apt-get install nginx)"
        if NGINX_REQUIRED:
            pytest.fail(f"{reason} (TITANPOST_TEST_NGINX=required)")
        pytest.skip(reason)
    return binary


@contextmanager
def instance(config: str, bind_variable: str, database_url: str, folder: Path, secret: str,
             base_url: str) -> Iterator[int]:
    """gunicorn with deploy/``config`` in production mode, two processes; its port."""
    port = free_port()
    environ = {k: v for k, v in os.environ.items()
               if not k.startswith(("TITANPOST_", "GUNICORN_"))}
    environ |= {
        "TITANPOST_ENV": "production",
        "TITANPOST_DATABASE_URL": database_url,
        "TITANPOST_SECRET_KEY": secret,
        "TITANPOST_BASE_URL": base_url,
        "TITANPOST_TRUSTED_PROXIES": "1",
        bind_variable: f"127.0.0.1:{port}",
        "GUNICORN_WORKERS": "2",
        "GUNICORN_LIVE_WORKERS": "2",
    }
    log = folder / f"{config}.log"
    with log.open("wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", f"deploy/{config}",
                                   "app.wsgi:app"], cwd=ROOT, env=environ, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", server, log)
        yield port
    finally:
        _stop(server)


def site_locations() -> str:
    """The ``location`` blocks of deploy/nginx/titanpost.conf's TLS server, its shared proxy
    file included from the repository."""
    text = SITE_CONF.read_text()
    blocks = re.findall(r"^    location [^\n]*\{\n.*?^    \}", text, re.M | re.S)
    served = [block for block in blocks if "proxy_pass" in block]
    assert any("titanpost_live" in block for block in served), "no live location in the site"
    return "\n".join(served).replace("/etc/nginx/titanpost-proxy.conf", str(PROXY_CONF))


@contextmanager
def nginx_site(web: int, live: int) -> Iterator[int]:
    """nginx on a free loopback port with the site's locations, its upstreams ``titanpost`` at
    127.0.0.1:``web`` and ``titanpost_live`` at 127.0.0.1:``live``; its port."""
    binary = _nginx()
    port = free_port()
    folder = Path(tempfile.mkdtemp(prefix="titanpost-nginx-"))
    folder.chmod(0o755)
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
    upstream titanpost {{ server 127.0.0.1:{web}; keepalive 8; }}
    upstream titanpost_live {{ server 127.0.0.1:{live}; keepalive 8; }}
    server {{
        listen 127.0.0.1:{port};
        proxy_read_timeout 60s;
{site_locations()}
    }}
}}
""")
    log = folder / "nginx.out"
    with log.open("wb") as out:
        front = subprocess.Popen([binary, "-p", str(folder), "-c", str(folder / "nginx.conf")],
                                 stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(f"http://127.0.0.1:{port}/healthz", front, log)
        yield port
    finally:
        _stop(front)
        shutil.rmtree(folder, ignore_errors=True)


class Stream:
    """A Server-Sent Events stream read line by line over a raw socket."""

    def __init__(self, port: int, path: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
        self.sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                          f"Accept: text/event-stream\r\n\r\n".encode("ascii"))
        self.lines = self.sock.makefile("rb")
        self.status = self.lines.readline()
        self.headers: dict[str, str] = {}
        while (line := self.lines.readline().strip()):
            name, _, value = line.decode("latin-1").partition(":")
            self.headers[name.strip().lower()] = value.strip()

    def until(self, wanted: bytes, seconds: float = PATIENCE) -> float:
        """Read until a line ``wanted`` comes (its chunk framing aside); seconds it took."""
        started = time.monotonic()
        self.sock.settimeout(seconds)
        while True:
            line = self.lines.readline()
            assert line, f"the stream ended before {wanted!r}"
            if line.strip() == wanted:
                return time.monotonic() - started
            assert time.monotonic() - started < seconds, f"no {wanted!r} in {seconds} s"

    def close(self) -> None:
        self.lines.close()
        self.sock.close()


def established(port: int) -> int:
    """Open TCP connections to 127.0.0.1:``port`` (from /proc/net/tcp)."""
    local = f"0100007F:{port:04X}"
    rows = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return sum(1 for row in rows if row.split()[1] == local and row.split()[3] == "01")


def start_game(base: str) -> tuple[str, list[str]]:
    """A started three-seat game made through the JSON API: its uid and seat tokens."""
    created = requests.post(f"{base}/api/games", timeout=30, json={
        "seats": [{"email": f"p{i}@example.org"} for i in range(3)]})
    assert created.status_code == 201, created.text
    body = created.json()
    tokens = [""] * 3
    for invitation in body["invitations"]:
        accepted = requests.post(f"{base}/api/invitations/accept", timeout=30,
                                 json={"invite_token": invitation["invite_token"]})
        assert accepted.status_code == 201, accepted.text
        tokens[accepted.json()["position"]] = accepted.json()["api_token"]
    started = requests.post(f"{base}/api/games/{body['game']}/start", json={}, timeout=30,
                            headers={"X-Creator-Token": body["creator_token"]})
    assert started.status_code == 200, started.text
    return str(body["game"]), tokens


def move(base: str, uid: str, tokens: list[str]) -> None:
    """The seat to act plays its first option."""
    state = requests.get(f"{base}/api/games/{uid}", timeout=30).json()
    seat = state["game"]["to_act"][0]
    bearer = {"Authorization": f"Bearer {tokens[seat]}"}
    options = requests.get(f"{base}/api/games/{uid}/options", headers=bearer, timeout=30).json()
    answer = requests.post(f"{base}/api/games/{uid}/moves", headers=bearer, timeout=30,
                           json={"expected_seq": options["seq"],
                                 "input": options["options"][0]})
    assert answer.status_code == 200, answer.text


@pytest.mark.parametrize("migrated_database_url", ["postgresql"], indirect=True)
def test_a_move_reaches_two_streams_through_nginx_from_the_live_instance(
        migrated_database_url: str, tmp_path: Path) -> None:
    _nginx()  # (skipped before anything starts where nginx is missing)
    secret = secrets.token_hex(32)
    with ExitStack() as stack:
        base_url = "http://127.0.0.1"
        web = stack.enter_context(instance("gunicorn.conf.py", "GUNICORN_BIND",
                                           migrated_database_url, tmp_path, secret, base_url))
        live = stack.enter_context(instance("gunicorn-live.conf.py", "GUNICORN_LIVE_BIND",
                                            migrated_database_url, tmp_path, secret, base_url))
        front = stack.enter_context(nginx_site(web, live))
        api = f"http://127.0.0.1:{web}"
        uid, tokens = start_game(api)

        before = established(live)
        streams = [Stream(front, f"/games/{uid}/live") for _ in range(2)]
        for stream in streams:
            stack.callback(stream.close)
            assert b" 200 " in stream.status, stream.status
            assert stream.headers["content-type"].startswith("text/event-stream")
            stream.until(b"retry: 3000")  # subscribed: the stream's first line came through
        # both streams are held by the live instance, not the web one
        assert established(live) >= before + 2

        move(api, uid, tokens)
        took = [stream.until(b"event: changed") for stream in streams]
        assert max(took) < PATIENCE

        # a second move is heard too (the streams go on after an event)
        move(api, uid, tokens)
        for stream in streams:
            stream.until(b"event: changed")
