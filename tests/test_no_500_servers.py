"""No request is answered 500 behind the real servers (issue 36): the development server
(``titanpost serve``, werkzeug's) and gunicorn as deploy/gunicorn.conf.py runs it, each on SQLite
and PostgreSQL.

A body sent in malformed chunks (a chunk size that is no number, a chunk without the line
break that ends it, a body cut short, no last chunk) is written by hand on a socket, as Flask's
test client cannot send one: the answer is 400, saying so, and nothing changes, while the same
body in well-formed chunks is taken. A body shorter than its Content-Length is refused too.
Then the other causes the review found, sent over HTTP: an id beyond a column's range in the
path (404), a chat page's ``before`` and a takeback's id beyond it (400), a 5,000-digit number
in a JSON body (400), the development outbox beyond it (404; gunicorn's production app has no
outbox pages). No answer is 5xx, and the server's log holds no exception.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.apifixtures import ADMIN_TOKEN
from tests.dbutil import migrated_database
from tests.netutil import free_port, wait_until_serving
from tests.test_no_500 import HUGE

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 30
SAID = "could not be read whole"
"""What the refusal of a body that cannot be read says (app/web/errors.py)."""


@dataclass
class Served:
    """A server of the app on a port, its log, and a started game on it (its id, creator
    header and seat tokens) with one webhook."""

    kind: str
    base: str
    port: int
    log: Path
    uid: str = ""
    creator: dict[str, str] | None = None
    tokens: dict[int, str] | None = None
    webhook: int = 0

    def seat(self, position: int) -> dict[str, str]:
        assert self.tokens is not None
        return {"Authorization": f"Bearer {self.tokens[position]}"}

    def call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return requests.request(method, self.base + path, timeout=TIMEOUT, **kwargs)

    def chat(self) -> list[str]:
        answer = self.call("GET", f"/api/games/{self.uid}/chat", headers=self.seat(0))
        assert answer.status_code == 200, answer.text
        return [message["text"] for message in answer.json()["messages"]]


def _command(kind: str, port: int, titanpost: str) -> tuple[list[str], dict[str, str]]:
    """The command that starts the server of ``kind`` and its environment's own part."""
    if kind == "development":
        return ([titanpost, "serve", "--port", str(port), "--no-scheduler", "--no-migrate"],
                {})
    return ([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
             "app.wsgi:app"],
            {"TITANPOST_ENV": "production", "GUNICORN_BIND": f"127.0.0.1:{port}",
             "GUNICORN_WORKERS": "1", "GUNICORN_THREADS": "2"})


@pytest.fixture(scope="module", params=[
    ("development", "sqlite"), ("development", "postgresql"),
    ("gunicorn", "sqlite"), ("gunicorn", "postgresql")], ids="-".join)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
           titanpost: str) -> Iterator[Served]:
    kind, database = request.param
    folder = tmp_path_factory.mktemp(f"{kind}-{database}")
    with migrated_database(database, folder) as url:
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        args, own = _command(kind, port, titanpost)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TITANPOST_", "GUNICORN_"))}
        env |= {"TITANPOST_DATABASE_URL": url, "TITANPOST_SECRET_KEY": secrets.token_hex(32),
                "TITANPOST_BASE_URL": base, "TITANPOST_ADMIN_TOKEN": ADMIN_TOKEN,
                "TITANPOST_WEBHOOK_ALLOW_PRIVATE": "1", **own}
        log = folder / "server.log"
        with log.open("wb") as out:
            process = subprocess.Popen(args, env=env, cwd=ROOT, stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until_serving(base, process, log)
            yield _with_a_game(Served(kind, base, port, log))
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(TIMEOUT)


def _with_a_game(served: Served) -> Served:
    """``served`` with a started game of three players, and a webhook of the game."""
    created = served.call("POST", "/api/games", json={
        "seats": [{"email": f"p{i}@example.com"} for i in range(3)]})
    assert created.status_code == 201, created.text
    served.uid = created.json()["game"]
    served.creator = {"X-Creator-Token": created.json()["creator_token"]}
    served.tokens = {}
    for invitation in created.json()["invitations"]:
        accepted = served.call("POST", "/api/invitations/accept",
                               json={"invite_token": invitation["invite_token"]})
        assert accepted.status_code == 201, accepted.text
        served.tokens[invitation["position"]] = accepted.json()["api_token"]
    started = served.call("POST", f"/api/games/{served.uid}/start", headers=served.creator,
                          json={})
    assert started.status_code == 200, started.text
    hook = served.call("POST", f"/api/games/{served.uid}/webhooks", headers=served.creator,
                       json={"url": "http://127.0.0.1:9/hook", "format": "json"})
    assert hook.status_code == 201, hook.text
    served.webhook = hook.json()["id"]
    return served


# ---------------------------------------------------------------------- by hand on a socket


def exchange(port: int, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is, end the sending half, and read the answer: its status and
    body."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(request)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while part := sock.recv(65536):
            answer += part
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1."), answer[:200]
    return int(head.split(b" ", 2)[1]), body


def chunked_post(path: str, content_type: str, headers: dict[str, str], body: bytes,
                 framing: str = "Transfer-Encoding: chunked") -> bytes:
    """A POST whose body is ``body`` as it stands (the caller writes its chunks, or with
    another ``framing`` header its length)."""
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", framing,
             f"Content-Type: {content_type}", "Connection: close",
             *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chunks(data: bytes) -> bytes:
    """``data`` in two well-formed chunks and the last, empty one."""
    half = len(data) // 2
    return b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n"
                    for part in (data[:half], data[half:])) + b"0\r\n\r\n"


MALFORMED = {
    "a chunk size that is no number": lambda data: b"zz\r\n" + data + b"\r\n0\r\n\r\n",
    "a chunk without its line break": lambda data: (f"{len(data):x}\r\n".encode() + data
                                                    + b"XX0\r\n\r\n"),
    "a body cut short": lambda data: f"{len(data) + 40:x}\r\n".encode() + data,
    "no last chunk": lambda data: f"{len(data):x}\r\n".encode() + data + b"\r\n",
}


def test_a_body_in_malformed_chunks_is_refused_and_changes_nothing(served: Served) -> None:
    said = json.dumps({"text": "said in chunks"}).encode()
    form = b"name=Race+in+chunks&seat0_kind=computer&seat1_kind=computer&seat2_kind=computer"
    games = served.call("GET", "/api/games", headers=served.seat(0)).json()["games"]
    for name, malformed in MALFORMED.items():
        status, body = exchange(served.port, chunked_post(
            f"/api/games/{served.uid}/chat", "application/json", served.seat(0),
            malformed(said)))
        assert status == 400, (name, body[:300])
        assert SAID in json.loads(body)["error"], body
        status, body = exchange(served.port, chunked_post(
            "/new", "application/x-www-form-urlencoded", {"Accept": "text/html"},
            malformed(form)))
        assert status == 400, (name, body[:300])
        assert SAID in body.decode(), body[:300]
    # a body shorter than its Content-Length (gunicorn hands on what came as if it were all)
    status, body = exchange(served.port, chunked_post(
        "/new", "application/x-www-form-urlencoded", {"Accept": "text/html"}, form,
        framing=f"Content-Length: {len(form) + 40}"))
    assert status == 400 and SAID in body.decode(), body[:300]
    assert served.chat() == []
    assert served.call("GET", "/api/games", headers=served.seat(0)).json()["games"] == games
    status, body = exchange(served.port, chunked_post(
        f"/api/games/{served.uid}/chat", "application/json", served.seat(0), chunks(said)))
    assert status == 201, body[:300]
    assert served.chat() == ["said in chunks"]
    _no_exception_logged(served)


# ---------------------------------------------------------------------- over HTTP


def test_no_other_cause_is_answered_5xx(served: Served) -> None:
    uid = served.uid
    said = served.chat()
    for number in (2**31, 2**63, 10**30):
        gone = served.call("DELETE", f"/api/games/{uid}/webhooks/{number}",
                           headers=served.creator)
        assert gone.status_code == 404, gone.text
        page = served.call("GET", f"/api/games/{uid}/chat?before={number}")
        assert page.status_code == 400 and "'before'" in page.json()["error"], page.text
        answer = served.call("POST", f"/api/games/{uid}/takeback/answer", headers=served.seat(1),
                             json={"agree": True, "takeback": number})
        assert answer.status_code == 400 and "takeback" in answer.json()["error"], answer.text
        outbox = served.call("GET", f"/dev/mail/{number}")
        assert outbox.status_code == 404, outbox.text[:300]
    for path, headers in ((f"/api/games/{uid}/chat", served.seat(0)),
                          (f"/api/games/{uid}/moves", served.seat(0)),
                          (f"/api/games/{uid}/takeback/answer", served.seat(1)),
                          ("/api/games", {})):
        refused = served.call("POST", path, headers={**headers,
                                                     "Content-Type": "application/json"},
                              data='{"text": "x", "expected_seq": ' + HUGE + "}")
        assert refused.status_code == 400, refused.text[:300]
        assert "holds a number too large (5001 characters)" in refused.json()["error"]
    hooks = served.call("GET", f"/api/games/{uid}/webhooks", headers=served.creator)
    assert [hook["id"] for hook in hooks.json()["webhooks"]] == [served.webhook]
    assert served.chat() == said
    if served.kind == "development":  # (the outbox is there, and answers in range)
        assert served.call("GET", "/dev/mail/1").status_code == 200
    _no_exception_logged(served)


def _no_exception_logged(served: Served) -> None:
    text = served.log.read_text(errors="replace")
    assert "Traceback" not in text and "Exception on" not in text, text[-3000:]
