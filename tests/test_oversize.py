"""Oversized input is refused and changes nothing: request bodies over TITANPOST_MAX_BODY_BYTES
on every kind of endpoint (JSON API, signed link forms, web forms), and inbound mails over
TITANPOST_MAX_MAIL_BYTES at the SMTP listener (552) and at the IMAP poller (never downloaded).

The app runs in-process on a migrated SQLite database; the SMTP listener is the real aiosmtpd one
of ``titanpost mail listen`` on a loopback port, spoken to with smtplib; the IMAP poller reads
from the loopback IMAP server of tests/test_mail_in.py.
"""

from __future__ import annotations

import http.client
import json
import re
import smtplib
from collections.abc import Iterator
from typing import Any

import pytest
import sqlalchemy as sa
from werkzeug.serving import make_server

from app.mail.addresses import reply_address
from app.mail.inbound_imap import poll_imap
from app.mail.inbound_smtp import make_controller
from app.web.links import game_link, option_link
from tests.apifixtures import (
    ADMIN_TOKEN,
    MAX_BODY_BYTES,
    Api,
    bearer,
    dispose,
    human_game,
    make_api,
    make_service,
)
from tests.netutil import free_port, serve_in_thread
from tests.test_mail_in import LoopbackImap, Mailbox, gmail_reply, wire

pytest_plugins = ["tests.apifixtures"]

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
DOMAIN = "titanpost.test"
PLAYER = "player@example.com"
MAIL_LIMIT = 40_000
TOO_MUCH = "x" * (MAX_BODY_BYTES + 1)


@pytest.fixture
def api(tmp_path: Any) -> Iterator[Api]:
    made = make_api(f"sqlite:///{tmp_path / 'oversize.db'}")
    yield made
    dispose(made)


def everything(api: Api) -> dict[str, Any]:
    """Every row of the tables a request could change."""
    tables = ("games", "seats", "moves", "api_tokens", "outbox", "absences")
    return {name: api.rows(f"SELECT * FROM {name} ORDER BY 1") for name in tables}


def assert_refused_as_json(response: Any) -> None:
    assert response.status_code == 413, response.get_data(as_text=True)[:200]
    assert response.get_json()["error"] == (
        f"The request body is too large: the limit is {MAX_BODY_BYTES} bytes, so nothing was "
        "read and nothing was changed.")


def assert_refused_as_page(response: Any) -> None:
    assert response.status_code == 413
    assert response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    assert "Too much data" in text and f"the limit is {MAX_BODY_BYTES} bytes" in text


def test_json_api_bodies_over_the_limit_are_refused(api: Api) -> None:
    table = api.new_started(3)
    waiting = api.create(3, prefix="w")
    position, options = api.actor(table)
    before = everything(api)
    big_json = '{"input": "' + TOO_MUCH + '", "expected_seq": 0}'
    requests = [
        ("post", "/api/games", {}),
        ("post", f"/api/games/{table.uid}/moves", table.seat(position)),
        ("post", f"/api/games/{table.uid}/moves", bearer("a-wrong-token")),  # 413 comes first
        ("post", "/api/invitations/accept", {}),
        ("put", f"/api/games/{table.uid}/me/quiet", table.seat(0)),
        ("post", "/api/away", table.seat(0)),
        ("post", f"/api/games/{waiting.uid}/start", waiting.creator),
        ("post", "/api/admin/games/import", bearer(ADMIN_TOKEN)),
    ]
    for method, path, headers in requests:
        response = getattr(api.client, method)(path, data=big_json, headers=headers,
                                               content_type="application/json")
        assert_refused_as_json(response)
    assert everything(api) == before
    # just under the limit the same request is read (and refused for what it says)
    small = api.client.post(f"/api/games/{table.uid}/moves", headers=table.seat(position),
                            json={"input": "x" * 400, "expected_seq": options["seq"]})
    assert small.status_code == 422


def post_chunked(port: int, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    """POST ``body`` in 4 KiB chunks (Transfer-Encoding: chunked, no Content-Length)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        chunks = (body[i:i + 4096] for i in range(0, len(body), 4096))
        conn.request("POST", path, body=chunks, headers=headers, encode_chunked=True)
        answer = conn.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        conn.close()


def test_a_chunked_body_over_the_limit_is_refused_not_cut(api: Api) -> None:
    """A body sent in chunks has no Content-Length: it is refused when it goes past the limit
    (werkzeug alone would cut it there and read the rest as if it were all), and taken whole
    below it. The app runs behind a real HTTP server (werkzeug's) on a loopback port."""
    table = api.new_started(3)
    position, options = api.actor(table)
    before = everything(api)
    headers = {"Content-Type": "application/json", **table.seat(position)}
    path = f"/api/games/{table.uid}/moves"
    move = {"expected_seq": options["seq"], "input": options["options"][0]}
    server = make_server("127.0.0.1", free_port(), api.app, threaded=True)
    serve_in_thread(server)
    try:
        status, body = post_chunked(server.port, path,
                                    json.dumps(move | {"pad": TOO_MUCH}).encode(), headers)
        assert status == 413 and body["error"].startswith("The request body is too large")
        assert everything(api) == before
        status, body = post_chunked(server.port, path, json.dumps(move).encode(), headers)
        assert status == 200 and body["applied"] is True
    finally:
        server.shutdown()


def test_forms_of_link_and_web_pages_over_the_limit_are_refused(api: Api) -> None:
    table = api.new_started(3)
    waiting = api.create(3, prefix="w")
    position, options = api.actor(table)
    svc = api.service
    base = svc.settings.base_url
    secret = svc.link_seat(table.uid, position).secret
    option = option_link(svc.settings, secret, table.uid, position, options["seq"],
                         options["options"][0]).removeprefix(base)
    game = game_link(svc.settings, secret, table.uid, position).removeprefix(base)
    confirm = api.client.get(option)
    assert confirm.status_code == 200
    found = CSRF.search(confirm.get_data(as_text=True))
    assert found is not None
    form = {"csrf_token": found.group(1), "pad": TOO_MUCH}
    before = everything(api)
    for path in (option, game, f"/join/{waiting.invitations[0]}", "/new",
                 f"/games/{table.uid}/move", f"/games/{table.uid}/setup", "/admin/login"):
        assert_refused_as_page(api.client.post(path, data=form))
    assert everything(api) == before
    with api.client.session_transaction() as sess:
        assert not sess.get("seats")  # no link or invitation took effect in this browser
    played = api.client.post(option, data={"csrf_token": found.group(1)})
    assert played.status_code == 303  # the same form without the padding plays the move


# ------------------------------------------------------------------------------ inbound mail


@pytest.fixture
def mail_game(tmp_path: Any) -> Iterator[tuple[Any, str]]:
    service = make_service(f"sqlite:///{tmp_path / 'mail.db'}", TITANPOST_MAIL_DOMAIN=DOMAIN,
                           TITANPOST_MAX_MAIL_BYTES=str(MAIL_LIMIT))
    game = human_game(service, 3)
    actor = service.state(game["game"], 0)["game"]["to_act"][0]
    yield service, reply_address(service.settings.secret_key, DOMAIN, game["game"], actor)
    service.engine.dispose()


def inbound_count(service: Any) -> int:
    with service.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM inbound_mail")).scalar_one())


def padded(to: str, size: int) -> bytes:
    """A reply to ``to`` with a move on top and an attachment-sized tail, ``size`` bytes or
    more on the wire."""
    msg = gmail_reply(to, "pick red")
    msg.add_attachment(b"\0" * size, maintype="application", subtype="octet-stream",
                       filename="photo.bin")
    return wire(msg)


def test_the_smtp_listener_refuses_oversized_mail_with_552(mail_game: tuple[Any, str]) -> None:
    service, to = mail_game
    port = free_port()
    controller = make_controller(service.engine, service.settings, "127.0.0.1", port)
    controller.start()
    try:
        big = padded(to, MAIL_LIMIT)
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
            smtp.ehlo()
            assert smtp.esmtp_features["size"] == str(MAIL_LIMIT)
            # a client that announces the size is refused at MAIL FROM ...
            with pytest.raises(smtplib.SMTPSenderRefused) as announced:
                smtp.sendmail(PLAYER, [to], big)
            assert announced.value.smtp_code == 552
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
            # ... and one that does not, at the end of DATA
            smtp.ehlo()
            assert smtp.mail(PLAYER)[0] == 250 and smtp.rcpt(to)[0] == 250
            code, text = smtp.data(big)
            assert code == 552, text
        assert inbound_count(service) == 0
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
            smtp.sendmail(PLAYER, [to], padded(to, MAIL_LIMIT // 4))
        assert inbound_count(service) == 1  # a mail under the limit is taken
    finally:
        controller.stop()


def _poll_big_and_small(service: Any, to: str, box: Mailbox) -> Any:
    server = LoopbackImap("titan", "secret", box)
    serve_in_thread(server)
    try:
        big = b"Delivered-To: " + to.encode() + b"\r\n" + padded(to, MAIL_LIMIT)
        small = b"Delivered-To: " + to.encode() + b"\r\n" + padded(to, 1000)
        box.messages = [(1, big, set()), (2, small, set())]
        return poll_imap(service.engine, service.settings,
                         f"imap://titan:secret@127.0.0.1:{server.port}/INBOX")
    finally:
        server.shutdown()
        server.server_close()


def test_the_imap_poller_never_downloads_oversized_mail(mail_game: tuple[Any, str]) -> None:
    """The poller asks for the sizes first: the big message is flagged, never sent to it."""
    service, to = mail_game
    box = Mailbox()
    report = _poll_big_and_small(service, to, box)
    assert (report.fetched, report.too_large, len(report.queued)) == (1, 1, 1)
    assert box.downloaded == [2]
    assert box.messages[0][2] == {"\\Seen", "\\Flagged"}  # not fetched again, easy to find
    assert box.messages[1][2] == {"\\Seen"}
    assert inbound_count(service) == 1


def test_the_imap_poller_measures_mail_of_a_server_that_tells_no_size(
        mail_game: tuple[Any, str]) -> None:
    service, to = mail_game
    box = Mailbox(tells_sizes=False)
    report = _poll_big_and_small(service, to, box)
    assert (report.fetched, report.too_large, len(report.queued)) == (2, 1, 1)
    assert box.downloaded == [1, 2]
    assert box.messages[0][2] == {"\\Seen", "\\Flagged"}
    assert inbound_count(service) == 1
