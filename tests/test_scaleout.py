"""Scale-out on one machine (deploy/scaleout.py in a short configuration): two gunicorn
instances and two workers on one PostgreSQL database, one instance and one worker killed with
SIGKILL mid-run, and every check of the script: ``admin verify``, each applied move in the log
once and no other, every delivered mail received by the SMTP sink exactly once, nothing left
unsent. PostgreSQL only (several processes on one database); about 30-40 seconds. Then the
client's failover (bench/api.py's ``Backends``) against a small HTTP server: what is sent again
to another instance, and what is not.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import pytest
import requests

from tests.dbutil import fresh_postgres, pg_unavailable_reason
from tests.netutil import process_group_gone, serve_in_thread

ROOT = Path(__file__).resolve().parent.parent


def _scaleout() -> ModuleType:
    spec = importlib.util.spec_from_file_location("titanpost_scaleout",
                                                  ROOT / "deploy" / "scaleout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_two_instances_and_two_workers_lose_and_double_nothing() -> None:
    reason = pg_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    scaleout = _scaleout()
    lines: list[str] = []

    def echo(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    config = scaleout.Config(games=12, clients=3, seconds=25, kill_web_at=0.2,
                             kill_worker_at=0.35, drain_timeout=25, mail_seconds=1, seed=7)
    with fresh_postgres() as url:
        config.database_url = url
        report = scaleout.run(config, echo)
    scaleout.print_report(report, echo)
    text = "\n".join(lines)

    assert report.process_groups and all(process_group_gone(g) for g in report.process_groups), text
    assert report.ok, text
    names = [check.name for check in report.checks]
    for expected in ("killed during the play", "admin verify exits 0", "in the log, once",
                     "none doubled", "no mail arrived twice", "exactly the outbox rows marked "
                     "delivered", "no outbox row is left unsent", "game-over mails arrived"):
        assert any(expected in name for name in names), (expected, names)
    stats = report.stats
    assert len(report.kills) == 2, text
    assert stats.moves > 100 and stats.games_finished >= 1, text
    assert sum(stats.failovers.values()) >= 1, "no request met the dead instance\n" + text
    assert len(stats.by_base) == 2, text
    assert report.sink_messages >= 3 * stats.games_finished, text
    assert stats.errors == 0, text


# ---------------------------------------------------------------------- the client's failover


def _bench_api() -> ModuleType:
    spec = importlib.util.spec_from_file_location("titanpost_bench_api", ROOT / "bench" / "api.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


class _Handler(BaseHTTPRequestHandler):
    keys_seen: ClassVar[list[str]] = []
    """The Idempotency-Key of every request to /drop-first (the first one's answer is lost)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        key = self.headers.get("Idempotency-Key")
        if self.path == "/drop-first" and key is not None:
            self.keys_seen.append(key)
        if self.path == "/drop" or (self.path == "/drop-first" and self.keys_seen.count(key) == 1):
            # the request arrived, the answer never leaves
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        body = json.dumps({"path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def live_and_dead() -> Iterator[tuple[str, str]]:
    """The base URL of a small HTTP server, and one where nothing listens."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    serve_in_thread(server)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"  # bound, never listening: refused
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}", dead
        finally:
            server.shutdown()
            server.server_close()


def test_a_request_refused_by_one_instance_goes_to_the_other(
        live_and_dead: tuple[str, str]) -> None:
    api = _bench_api()
    live, dead = live_and_dead
    backends = api.Backends([dead, live])
    stats = api.Stats()
    with requests.Session() as http:
        for _ in range(4):
            answer = backends.request(http, "POST", "/api/games/x/moves", stats, json={})
            assert answer.json() == {"path": "/api/games/x/moves"}
        # refused means never sent: even a request that creates something is sent again
        created = backends.request(http, "POST", "/api/games", stats, repeatable=False,
                                   json={})
        assert created.status_code == 200
    assert stats.by_base == {live: 5}
    assert set(stats.failovers) == {"not sent (POST moves): ConnectionRefusedError"}


def test_a_lost_answer_is_sent_again_only_when_that_is_safe(
        live_and_dead: tuple[str, str]) -> None:
    api = _bench_api()
    live, _ = live_and_dead
    backends = api.Backends([live, live], patience=1.0)
    stats = api.Stats()
    with requests.Session() as http, pytest.raises(api.AnswerLost):
        backends.request(http, "POST", "/drop", stats, repeatable=False, json={})
    assert sum(stats.failovers.values()) == 1
    assert next(iter(stats.failovers)).startswith("answer lost (POST drop)")
    # a repeatable request is sent again until the patience runs out, then fails
    with requests.Session() as http, pytest.raises(requests.RequestException):
        backends.request(http, "POST", "/drop", stats, json={})
    assert sum(stats.failovers.values()) > 2


def test_a_keyed_request_whose_answer_was_lost_is_sent_again_with_its_key(
        live_and_dead: tuple[str, str]) -> None:
    api = _bench_api()
    live, _ = live_and_dead
    backends = api.Backends([live, live], patience=5.0)
    stats = api.Stats()
    _Handler.keys_seen.clear()
    with requests.Session() as http:
        answer = backends.keyed(http, "/drop-first", stats, {"seats": []})
    assert answer.json() == {"path": "/drop-first"}
    assert len(_Handler.keys_seen) == 2 and len(set(_Handler.keys_seen)) == 1
    assert next(iter(stats.failovers)).startswith("answer lost (POST drop-first)")


def test_one_base_url_keeps_the_old_behaviour(live_and_dead: tuple[str, str]) -> None:
    api = _bench_api()
    _, dead = live_and_dead
    backends = api.Backends(dead)
    assert not backends.failover
    with requests.Session() as http, pytest.raises(requests.ConnectionError):
        backends.request(http, "GET", "/api/games/x", api.Stats())
