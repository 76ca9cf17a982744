"""Secrets never appear in logs (issue 8).

A production-like deployment runs on one machine at the most verbose logging: gunicorn with
``deploy/gunicorn.conf.py`` (its own log at debug), ``titanpost worker`` (the clock),
``titanpost mail send`` (the outbox, delivered to an SMTP relay that asks for a user and
password) and ``titanpost mail listen`` (replies), all with JSON logs at
``TITANPOST_LOG_LEVEL=debug``, a secret key, an admin token and the relay's password in
``TITANPOST_SMTP_URL``. Then every path is used, the good way and the bad ways: a game is
created, invitations are accepted on the web and over the API, the signed links of the mails
are opened and posted (and forged ones), the API is called with tokens in the Authorization
header (and bad tokens, no token, another seat's decision, a stale one, an illegal move, bad
JSON, a body too large, unknown games, refused tokens until the rate limit answers 429), the
admin API and page are used with the right and a wrong token, replies are mailed to signed
reply addresses (from the player and from a stranger, and to a forged address), and every mail
goes out through the relay's login. (A 500 cannot be brought about from outside: the last test
feeds the formatters a record like Flask's "Exception on <path>" with its traceback.)

Everything the four processes wrote (standard output and error) is then searched for every
secret the run handed out: the secret key, the admin token, the relay's password, the creator
token, the invitation tokens, the API tokens, the signed segments of the link tokens, the
signatures of the reply addresses and the browser's session cookie. None may be there, while
the lines for those requests are (with the secrets cut out).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import smtplib
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
import requests
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from app.core.migrate import upgrade
from app.core.observability import (
    CUT,
    JsonFormatter,
    RedactingFormatter,
    redact_text,
    remember_secrets,
)
from app.mail.addresses import reply_address
from tests.netutil import free_port

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = "titanpost.test"
SMTP_USER = "relay-user"
EMAILS = ["ann@example.com", "ben@example.com", "cat@example.com"]
LINK = re.compile(r"https?://[^/\s\"<>]+/(l|g|join)/([A-Za-z0-9._~-]+)")
REPLY = re.compile(r"play\+[0-9a-f]{32}\.[0-9]\.([0-9a-f]{16})@" + re.escape(DOMAIN))
CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
WAIT = 30.0


# ---------------------------------------------------------------------- the relay


class Relay:
    """An SMTP relay on loopback that asks for a login, keeping what it is given."""

    def __init__(self, password: str) -> None:
        self.password = password
        self.port = free_port()
        self.messages: list[EmailMessage] = []
        self.logins: list[tuple[str, bool]] = []
        self.lock = threading.Lock()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port,
                                     authenticator=self.authenticate, auth_required=True,
                                     auth_require_tls=False)

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str,
                     data: Any) -> AuthResult:
        ok = (isinstance(data, LoginPassword) and data.login.decode() == SMTP_USER
              and data.password.decode() == self.password)
        with self.lock:
            self.logins.append((mechanism, ok))
        return AuthResult(success=ok, handled=False)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        msg = message_from_bytes(envelope.content, _class=EmailMessage, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        with self.lock:
            self.messages.append(msg)
        return "250 OK"

    def mails(self, to: str, kind: str | None = None) -> list[EmailMessage]:
        with self.lock:
            return [m for m in self.messages if to in str(m["To"])
                    and (kind is None or m["X-Titan-Post-Kind"] == kind)]

    def texts(self) -> list[str]:
        with self.lock:
            found = []
            for msg in self.messages:
                found += [str(msg["Reply-To"] or "")] + [
                    part.get_content() for part in msg.walk()
                    if part.get_content_type() in ("text/plain", "text/html")]
            return found


# ---------------------------------------------------------------------- the deployment


@dataclass
class Deployment:
    base: str
    listen_port: int
    relay: Relay
    env: dict[str, str]
    logs: list[Path]
    secrets: dict[str, str] = field(default_factory=dict)
    """Every secret handed out, by what it is."""

    def keep(self, what: str, value: str) -> str:
        self.secrets[what] = value
        return value

    def wait_for(self, what: str, test: Callable[[], Any]) -> Any:
        deadline = time.monotonic() + WAIT
        while True:
            found = test()
            if found:
                return found
            assert time.monotonic() < deadline, f"waited in vain for {what}\n" + self.log_text()
            time.sleep(0.2)

    def log_text(self) -> str:
        return "\n".join(path.read_text(errors="replace") for path in self.logs if path.exists())


def _start(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT,
                                start_new_session=True)


def _up(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + WAIT
    while True:
        assert process.poll() is None, log.read_text()
        try:
            if requests.get(url, timeout=5).status_code == 200:
                return
        except requests.RequestException:
            pass
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.2)


@pytest.fixture
def deployment(tmp_path: Path, titanpost: str) -> Iterator[Deployment]:
    database = f"sqlite:///{tmp_path / 'titanpost.db'}"
    upgrade(database)
    password = "p@ss " + secrets.token_urlsafe(12)
    relay = Relay(password)
    relay.controller.start()
    web, listen = free_port(), free_port()
    base = f"http://127.0.0.1:{web}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TITANPOST_", "GUNICORN_"))}
    env |= {
        "TITANPOST_ENV": "production",
        "TITANPOST_DATABASE_URL": database,
        "TITANPOST_SECRET_KEY": secrets.token_hex(32),
        "TITANPOST_ADMIN_TOKEN": secrets.token_urlsafe(24),
        "TITANPOST_BASE_URL": base,
        "TITANPOST_MAIL_DOMAIN": DOMAIN,
        "TITANPOST_SMTP_URL": (f"smtp://{SMTP_USER}:{requests.utils.quote(password, safe='')}"
                               f"@127.0.0.1:{relay.port}"),
        "TITANPOST_LOG_FORMAT": "json",
        "TITANPOST_LOG_LEVEL": "debug",
        "TITANPOST_TICK_SECONDS": "1",
        "TITANPOST_MAX_BODY_BYTES": "4096",
        "GUNICORN_BIND": f"127.0.0.1:{web}",
        "GUNICORN_WORKERS": "1",
        "GUNICORN_THREADS": "4",
        "GUNICORN_LOG_LEVEL": "debug",
    }
    logs = [tmp_path / f"{name}.log" for name in ("web", "worker", "listen", "send")]
    processes = [
        _start([sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn.conf.py",
                "app.wsgi:app"], env, logs[0]),
        _start([titanpost, "worker", "--no-migrate"], env, logs[1]),
        _start([titanpost, "mail", "listen", "--port", str(listen), "--interval", "0.3"], env,
               logs[2]),
        # the worker sends the outbox every 10 s: a sender that looks more often saves waiting
        _start([titanpost, "mail", "send", "--interval", "0.3"], env, logs[3]),
    ]
    try:
        _up(f"{base}/healthz", processes[0], logs[0])
        found = Deployment(base, listen, relay, env, logs)
        found.keep("secret key", env["TITANPOST_SECRET_KEY"])
        found.keep("admin token", env["TITANPOST_ADMIN_TOKEN"])
        found.keep("relay password", password)
        found.keep("relay password in the URL", requests.utils.quote(password, safe=""))
        yield found
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(5)
        relay.controller.stop()


# ---------------------------------------------------------------------- using every path


def _csrf(session: requests.Session, url: str) -> str:
    page = session.get(url, timeout=10)
    found = CSRF.search(page.text)
    assert found, (url, page.status_code, page.text[:1000])
    return found.group(1)


def _links(msg: EmailMessage) -> dict[str, list[str]]:
    text = "\n".join(part.get_content() for part in msg.walk()
                     if part.get_content_type() in ("text/plain", "text/html"))
    found: dict[str, list[str]] = {}
    for kind, token in LINK.findall(text):
        found.setdefault(kind, []).append(token)
    return found


def _reply(d: Deployment, to: str, sender: str, text: str) -> None:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = "Re: your turn"
    msg["Message-ID"] = make_msgid(domain="example.com")
    msg.set_content(text + "\n")
    with smtplib.SMTP("127.0.0.1", d.listen_port, timeout=10) as smtp:
        smtp.sendmail(sender, [to], msg.as_bytes())


def _game(d: Deployment) -> tuple[str, dict[int, str]]:
    """Create a game, accept its invitations (the web for Ann, the API for the others), start
    it; every token kept."""
    api = f"{d.base}/api"
    created = requests.post(f"{api}/games", json={"seats": [
        {"email": e} for e in EMAILS]}, timeout=10).json()
    uid = created["game"]
    d.keep("creator token", created["creator_token"])
    invites = {inv["position"]: d.keep(f"invitation {inv['position']}", inv["invite_token"])
               for inv in created["invitations"]}
    d.wait_for("the invitation mails", lambda: all(d.relay.mails(e, "invitation") for e in EMAILS))
    assert set(_links(d.relay.mails(EMAILS[0], "invitation")[0])["join"]) == {invites[0]}

    browser = requests.Session()
    join = f"{d.base}/join/{invites[0]}"
    accepted = browser.post(join, data={"csrf_token": _csrf(browser, join), "name": "Ann"},
                            timeout=10)
    assert accepted.status_code == 200 and uid in accepted.url, accepted.text[:2000]
    issued = browser.post(f"{d.base}/games/{uid}/me/token", timeout=10, data={
        "csrf_token": _csrf(browser, f"{d.base}/games/{uid}/me")})  # (asked for: issue 38)
    shown = re.search(r"API token, for programs \(shown once\): ([A-Za-z0-9_-]{20,})",
                      issued.text)
    assert shown, accepted.text[:3000]
    tokens = {0: d.keep("API token 0", shown.group(1))}
    d.keep("session cookie", browser.cookies["session"])
    assert requests.get(join, timeout=10).status_code == 404  # used
    for position in (1, 2):
        response = requests.post(f"{api}/invitations/accept", json={
            "invite_token": invites[position]}, timeout=10)
        assert response.status_code == 201, response.text
        tokens[position] = d.keep(f"API token {position}", response.json()["api_token"])
    assert requests.post(f"{api}/invitations/accept", json={
        "invite_token": invites[1]}, timeout=10).status_code == 404
    wrong = requests.post(f"{api}/games/{uid}/start", json={},
                          headers={"X-Creator-Token": tokens[1]}, timeout=10)
    assert wrong.status_code == 403
    started = requests.post(f"{api}/games/{uid}/start", json={},
                            headers={"X-Creator-Token": created["creator_token"]}, timeout=10)
    assert started.status_code == 200, started.text
    return uid, tokens


def _api_calls(d: Deployment, uid: str, tokens: dict[int, str]) -> None:
    """The API with every kind of answer: 200, 400, 401, 403, 404, 409, 413, 422 (and 429
    where the rate limits count refused tokens)."""
    api = f"{d.base}/api"

    def call(method: str, path: str, token: str | None = None, **kwargs: Any) -> Any:
        headers = dict(kwargs.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return requests.request(method, f"{api}{path}", headers=headers, timeout=10, **kwargs)

    state = call("GET", f"/games/{uid}", tokens[0]).json()
    actor = state["game"]["to_act"][0]
    other = (actor + 1) % 3
    opts = call("GET", f"/games/{uid}/options", tokens[actor]).json()
    seq, option = opts["seq"], opts["options"][0]
    statuses = {
        call("GET", f"/games/{uid}/log", tokens[other]).status_code,
        call("GET", "/me", tokens[other]).status_code,
        call("POST", f"/games/{uid}/moves", tokens[other],
             json={"expected_seq": seq, "input": option}).status_code,  # 403
        call("POST", f"/games/{uid}/moves", tokens[actor],
             json={"expected_seq": seq, "input": "move nowhere"}).status_code,  # 422
        call("POST", f"/games/{uid}/moves", tokens[actor],
             data="{not json", headers={"Content-Type": "application/json"}).status_code,
        call("POST", f"/games/{uid}/moves", tokens[actor], json={"input": 5}).status_code,
        call("POST", f"/games/{uid}/moves", tokens[actor],
             json={"expected_seq": seq, "input": "x" * 8000}).status_code,  # 413
        call("GET", f"/games/{'0' * 32}/options", tokens[actor]).status_code,  # 404
        call("GET", f"/games/{uid}/options", tokens[actor][:-2] + "xy").status_code,  # 401
        call("GET", f"/games/{uid}/options").status_code,  # 401
    }
    applied = call("POST", f"/games/{uid}/moves", tokens[actor],
                   json={"expected_seq": seq, "input": option})
    assert applied.status_code == 200, applied.text
    other_input = "pick red" if option != "pick red" else "pick blue"  # (not a resend)
    stale = call("POST", f"/games/{uid}/moves", tokens[actor],
                 json={"expected_seq": seq, "input": other_input})  # 409: it moved on
    statuses |= {stale.status_code}
    assert {400, 401, 403, 404, 409, 413, 422} <= statuses, statuses
    admin = d.env["TITANPOST_ADMIN_TOKEN"]
    assert call("GET", "/admin/verify", admin).status_code == 200
    assert call("GET", f"/admin/games/{uid}/export", admin).status_code == 200
    page = requests.Session()
    login = f"{d.base}/admin/login"
    csrf = _csrf(page, login)
    assert page.post(login, data={"csrf_token": csrf, "token": admin},
                     timeout=10).status_code == 200
    assert page.get(f"{d.base}/admin/replay/{uid}", timeout=10).status_code == 200
    assert call("GET", "/admin/verify", admin[:-1] + "#").status_code == 401
    assert page.post(login, data={"csrf_token": csrf, "token": "wrong-admin-token"},
                     timeout=10).status_code == 403
    d.keep("admin session cookie", page.cookies["session"])


def _flood(d: Deployment) -> None:
    """Refused tokens again and again (429 where rate limits count them), last: afterwards
    this address may be refused whatever it sends."""
    for _ in range(12):
        requests.get(f"{d.base}/api/me", timeout=10,
                     headers={"Authorization": f"Bearer {secrets.token_urlsafe(32)}"})


def _links_and_replies(d: Deployment, uid: str, tokens: dict[int, str]) -> None:
    """The signed links of a turn mail (good, forged, used again) and replies by mail."""
    api = f"{d.base}/api"
    state = requests.get(f"{api}/games/{uid}", headers={"Authorization": f"Bearer {tokens[0]}"},
                         timeout=10).json()
    actor, seq = state["game"]["to_act"][0], state["seq"]
    email = EMAILS[actor]

    def turn_mail() -> EmailMessage | None:
        mails = [m for m in d.relay.mails(email) if f".{seq}.{actor}." in str(m["Message-ID"])
                 and _links(m).get("l")]
        return mails[-1] if mails else None

    mail = d.wait_for(f"the mail of decision {seq} to {email}: have " + ", ".join(
        f"{m['Message-ID']} {sorted(_links(m))}" for m in d.relay.mails(email)), turn_mail)
    links = _links(mail)
    for kind, found in links.items():
        for index, token in enumerate(found):
            d.keep(f"{kind} link {index}", token)
            d.keep(f"{kind} link {index} signature", token.rsplit(".", 1)[1])
    address = str(mail["Reply-To"])
    signature = REPLY.search(address)
    assert signature, address
    d.keep("reply address signature", signature.group(1))

    browser = requests.Session()
    game = f"{d.base}/g/{links['g'][0]}"
    assert browser.post(game, data={"csrf_token": _csrf(browser, game)},
                        timeout=10).status_code == 200
    option = f"{d.base}/l/{links['l'][0]}"
    assert browser.post(option, data={}, timeout=10).status_code == 400  # no CSRF token
    forged = option[:-3] + ("abc" if not option.endswith("abc") else "xyz")
    assert browser.get(forged, timeout=10).status_code == 400
    assert browser.get(f"{d.base}/l/garbage", timeout=10).status_code == 400
    played = browser.post(option, data={"csrf_token": _csrf(browser, option)}, timeout=10)
    assert played.status_code == 200 and f"/games/{uid}" in played.url, played.text[:2000]
    assert browser.get(option, timeout=10).status_code == 409  # used

    # replies: to the seat now acting, from its player (an illegal move: answered by mail),
    # from someone else, and to a forged address
    now = requests.get(f"{api}/games/{uid}", timeout=10).json()
    acting = now["game"]["to_act"][0]
    reply_to = reply_address(d.env["TITANPOST_SECRET_KEY"], DOMAIN, uid, acting)
    signature = REPLY.search(reply_to)
    assert signature
    d.keep(f"reply address signature {acting}", signature.group(1))
    before = len(d.relay.mails(EMAILS[acting], "reply-error"))
    _reply(d, reply_to, EMAILS[acting], "move nowhere")
    _reply(d, reply_to, "mallory@example.com", "pass")
    with pytest.raises(smtplib.SMTPRecipientsRefused):
        _reply(d, reply_to.replace(signature.group(1), "0" * 16), EMAILS[acting], "pass")
    d.wait_for("the answer to the illegal reply",
               lambda: len(d.relay.mails(EMAILS[acting], "reply-error")) > before)
    d.wait_for("the answer to the stranger", lambda: d.relay.mails("mallory@example.com"))


# ---------------------------------------------------------------------- the test


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_no_secret_reaches_any_log(deployment: Deployment) -> None:
    d = deployment
    uid, tokens = _game(d)
    _links_and_replies(d, uid, tokens)
    _api_calls(d, uid, tokens)
    _flood(d)
    assert d.relay.logins and all(ok for _, ok in d.relay.logins), d.relay.logins
    text = d.log_text()

    leaked = {what: value for what, value in d.secrets.items() if value in text}
    assert not leaked, f"secrets in the logs: {sorted(leaked)}\n{_lines_with(text, leaked)}"
    access = [json.loads(line) for line in d.logs[0].read_text().splitlines()
              if line.startswith("{") and '"titanpost.access"' in line]
    paths = {entry["path"] for entry in access}
    assert {f"/l/{CUT}", f"/g/{CUT}", f"/join/{CUT}", f"/api/games/{uid}/moves"} <= paths, paths
    statuses = {entry["status"] for entry in access}
    expected = {200, 201, 303, 400, 401, 403, 404, 409, 413, 422, 429}  # (429: refused tokens)
    assert expected <= statuses, statuses
    assert "[DEBUG]" in text  # gunicorn's own debug lines were collected too


def _lines_with(text: str, leaked: dict[str, str]) -> str:
    return "\n".join(line[:400] for line in text.splitlines()
                     if any(value in line for value in leaked.values()))[:6000]


# ---------------------------------------------------------------------- the filter itself


@pytest.mark.parametrize("formatter", [JsonFormatter(), RedactingFormatter("%(message)s")],
                         ids=["json", "text"])
def test_every_line_loses_its_secrets_whoever_logs_it(formatter: Any) -> None:
    """Lines the app does not write itself (Flask's "Exception on <path>" with a traceback,
    aiosmtpd's recipients, a library's message with a URL) lose their secrets too."""
    known = "k3y-" + secrets.token_hex(12)
    remember_secrets([known, "short"])
    token = "eyJnIjoiYWJjIn0.ZxYw12.AbCdEfGhIjKlMnOpQrStUvWxYz0"
    reply_address = f"play+{'a' * 32}.1.0123456789abcdef@{DOMAIN}"
    import logging

    try:
        raise RuntimeError(f"boom with {known} and {reply_address}")
    except RuntimeError:
        import sys

        record = logging.LogRecord(
            "app", logging.ERROR, __file__, 1, "Exception on %s [%s] %s %s", (
                f"/l/{token}", "POST", "smtp://mailer:pa%40ss@relay.example:587",
                "Authorization: Bearer abc.DEF-123"), sys.exc_info())
    line = formatter.format(record)
    for secret in (known, token, "0123456789abcdef", "pa%40ss", "abc.DEF-123"):
        assert secret not in line, line
    assert f"/l/{CUT}" in line and f"play+{'a' * 32}.1.{CUT}@" in line and "boom" in line
    assert "mailer" in line and "short" in redact_text("a short line")
