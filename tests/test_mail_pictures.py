"""The board picture of a mail by signed address, its inline fallback, and the SMTP connection
without Nagle's delay.

A server whose base address mail clients can reach names each mail's board picture by a signed
address (``/board/<token>.png``) that the web app draws once and serves as immutable; a local
base address, or ``TITANPOST_MAIL_IMAGES=inline``, keeps the inline PNG. Mail goes to a real
SMTP server (aiosmtpd on 127.0.0.1) and the pictures are fetched from the app itself, on SQLite
and PostgreSQL.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Iterator
from email.message import EmailMessage
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app import create_app
from app.core.config import ConfigError, Settings
from app.core.models import OutboxMail
from app.mail.images import (
    INLINE,
    LINK,
    BoardPicture,
    PictureCache,
    PictureError,
    make_picture_token,
    picture_mode,
    reachable_from_outside,
    read_picture_token,
)
from app.mail.relay import connect, parse_smtp_url
from app.mail.render import MailRenderer, build_message
from app.service import GameService
from tests.test_mail_out import (
    ANN,
    BOLEK,
    DECISIONS,
    Inbox,
    Post,
    Smtp,
    _start,
    make_post,
    parts,
    self_signed,
    settings_for,
    smtp,  # noqa: F401
    structure,
)

PUBLIC = "https://play.titanpost.org"


@pytest.fixture
def public_post(migrated_database_url: str, smtp: Smtp) -> Iterator[Post]:  # noqa: F811
    """A server at a public https address (pictures by address), on SQLite and PostgreSQL."""
    made = make_post(migrated_database_url, smtp, TITANPOST_BASE_URL=PUBLIC)
    yield made
    made.service.engine.dispose()


def picture_paths(html: str) -> list[str]:
    return re.findall(re.escape(PUBLIC) + r"(/board/[A-Za-z0-9_.\-]+\.png)", unescape(html))


def decision_mail(post: Post, uid: str) -> tuple[int, EmailMessage]:
    position = post.to_act(uid)[0]
    email = post.seat(uid, position).email
    found = [m for m in post.smtp.inbox.mails(email)  # type: ignore[union-attr]
             if m["X-Titan-Post-Kind"] in DECISIONS]
    assert found, "no decision mail"
    return position, found[-1]


def moves_and_outbox(service: GameService) -> tuple[int, int]:
    with service.session() as s:
        moves = int(s.execute(text("SELECT count(*) FROM moves")).scalar_one())
        mails = int(s.execute(text("SELECT count(*) FROM outbox")).scalar_one())
    return moves, mails


# ------------------------------------------------------------------ by address


def test_a_mail_names_its_board_by_a_signed_address_the_server_draws(public_post: Post) -> None:
    post = public_post
    uid = post.new_game()["game"]
    for _ in range(200):  # to a player's turn whose options move a Titan (outlined spaces)
        acting = post.to_act(uid)
        if acting[0] != 2 and any(o.startswith("move") for o in
                                  post.options(uid, acting[0])["options"]):
            break
        post.answer(uid)
    report = post.send()
    assert report.sent >= 1 and not report.failed, report
    position, msg = decision_mail(post, uid)
    seq = post.options(uid, position)["seq"]
    # no inline picture: text and HTML only, the HTML naming the picture by its address
    assert structure(msg) == ["multipart/alternative", "text/plain", "text/html"]
    text_part, html, images = parts(msg)
    assert not images and "cid:" not in html and "/l/" in text_part
    (path,) = picture_paths(html)
    picture = read_picture_token(post.settings.secret_key, path.split("/")[-1][:-4])
    lang = "pl" if post.seat(uid, position).email == BOLEK else "en"
    assert (picture.game, picture.seq, picture.seat, picture.lang) == (uid, seq, position, lang)
    assert picture.highlight, "a decision mail outlines where its options lead"

    app = create_app(post.settings)
    client = app.test_client()
    before = moves_and_outbox(post.service)
    got = client.get(path)
    assert got.status_code == 200 and got.mimetype == "image/png"
    assert got.data.startswith(b"\x89PNG\r\n\x1a\n") and len(got.data) > 5000
    cache = got.headers["Cache-Control"]
    assert "public" in cache and "immutable" in cache and "max-age=31536000" in cache
    etag = got.headers["ETag"]
    assert etag
    # the same picture as the inline fallback would have carried
    inline = MailRenderer(GameService(post.service.engine,
                                      settings_for(post.settings.database_url, None)))
    row = next(r for r in post.rows() if r.message_id == msg["Message-ID"])
    assert list(inline.render(row).images.values()) == [got.data]
    # asked again: the same bytes from memory; with its ETag: 304 and no body
    renderer = app.extensions["titanpost.mail_renderer"]
    again = client.get(path)
    assert again.data == got.data and again.headers["ETag"] == etag
    assert renderer.pictures.drawn == 1
    unchanged = client.get(path, headers={"If-None-Match": etag})
    assert unchanged.status_code == 304 and not unchanged.data
    # the game moves on: the address still shows the board of its moment
    post.answer(uid)
    assert client.get(path).data == got.data
    assert moves_and_outbox(post.service)[0] == before[0] + 1
    app.extensions["titanpost.service"].engine.dispose()


def test_an_altered_or_forged_picture_address_is_refused(public_post: Post) -> None:
    post = public_post
    uid = post.new_game()["game"]
    post.send()
    position, msg = decision_mail(post, uid)
    (path,) = picture_paths(parts(msg)[1])
    token = path.split("/")[-1][:-4]
    app = create_app(post.settings)
    client = app.test_client()
    before = moves_and_outbox(post.service)
    payload, signature = token.rsplit(".", 1)
    flipped = signature[:-2] + ("A" if signature[-2] != "A" else "B") + signature[-1]
    other_seat = make_picture_token(
        "another-servers-secret-key-0123456789",
        BoardPicture(uid, post.options(uid, position)["seq"], 1 - position, "en"))
    for bad in (f"{payload}.{flipped}", other_seat, "garbage", payload):
        refused = client.get(f"/board/{bad}.png")
        assert refused.status_code == 403, bad
        assert refused.mimetype == "text/plain"
        assert "not made by this server or was altered" in refused.get_data(as_text=True)
        assert "immutable" not in refused.headers.get("Cache-Control", "")
    # signed by this server, but of a game or moment that does not exist
    key = post.settings.secret_key
    for missing in (BoardPicture("0" * 32, 1, 0, "en"), BoardPicture(uid, 10_000, 0, "en"),
                    BoardPicture(uid, 1, 7, "en")):
        gone = client.get(f"/board/{make_picture_token(key, missing)}.png")
        assert gone.status_code == 404
        assert "Not found" in gone.get_data(as_text=True)
    assert app.extensions.get("titanpost.mail_renderer") is None or \
        app.extensions["titanpost.mail_renderer"].pictures.drawn == 0
    assert moves_and_outbox(post.service) == before
    with pytest.raises(PictureError):
        read_picture_token(key, f"{payload}.{flipped}")
    app.extensions["titanpost.service"].engine.dispose()


# ------------------------------------------------------------------ inline, and when


@pytest.mark.parametrize(("base", "outside"), [
    ("https://play.titanpost.org", True),
    ("https://titanpost.example.org/sub", True),
    ("https://8.8.8.8", True),
    ("http://play.titanpost.org", False),
    ("https://localhost:5000", False),
    ("https://127.0.0.1", False),
    ("https://[::1]", False),
    ("https://10.1.2.3", False),
    ("https://192.168.1.20", False),
    ("https://titan.test", False),
    ("https://titanpost.example", False),
    ("https://games.local", False),
    ("https://titan.internal", False),
    ("https://box.home.arpa", False),
    ("https://intranet", False),
    ("", False),
])
def test_which_base_addresses_mail_clients_can_reach(base: str, outside: bool) -> None:
    assert reachable_from_outside(base) is outside


def test_the_setting_chooses_inline_or_address(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"

    def mode(base: str, images: str | None = None) -> str:
        extra = {"TITANPOST_BASE_URL": base}
        if images is not None:
            extra["TITANPOST_MAIL_IMAGES"] = images
        return picture_mode(settings_for(url, None, **extra))

    assert mode(PUBLIC) == LINK
    assert mode("http://127.0.0.1:5000") == INLINE
    assert mode("https://titan.test", "auto") == INLINE
    assert mode(PUBLIC, "inline") == INLINE
    assert mode("http://127.0.0.1:5000", " LINK ") == LINK
    assert Settings.from_env({"TITANPOST_DATABASE_URL": url}).mail_images == "auto"
    with pytest.raises(ConfigError, match="TITANPOST_MAIL_IMAGES"):
        settings_for(url, None, TITANPOST_MAIL_IMAGES="attached")


def test_a_local_base_address_keeps_the_picture_inline_drawn_once(tmp_path: Path,
                                                                  smtp: Smtp) -> None:  # noqa: F811
    post = make_post(f"sqlite:///{tmp_path / 'mail.db'}", smtp)
    assert post.settings.base_url.startswith("http://") and post.settings.mail_images == "auto"
    uid = post.new_game()["game"]
    post.send()
    _, msg = decision_mail(post, uid)
    assert structure(msg)[-1] == "image/png" and not picture_paths(parts(msg)[1])
    # the same mail again, and a reminder of the same decision: one picture, drawn once
    renderer = MailRenderer(post.service)
    row = next(r for r in post.rows() if r.message_id == msg["Message-ID"])
    first = renderer.render(row)
    again = renderer.render(row)
    reminder = OutboxMail(**(row.model_dump() | {"id": None, "kind": "reminder",
                                                 "message_id": "<reminder@titan.test>"}))
    reminded = renderer.render(reminder)
    assert renderer.pictures.drawn == 1
    assert list(first.images.values()) == list(again.images.values()) == \
        list(reminded.images.values())
    assert 'src="cid:' in first.html
    assert bytes(build_message(post.settings, row, first)).count(b"Content-ID") == 1
    post.service.engine.dispose()


def test_the_dev_outbox_shows_a_picture_named_by_address(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'dev.db'}"
    post = make_post(url, None, TITANPOST_MAIL_IMAGES="link")
    app = create_app(post.settings)
    client = app.test_client()
    uid = post.new_game()["game"]
    position = post.to_act(uid)[0]
    row = next(r for r in post.rows() if r.kind in DECISIONS and r.recipient in (ANN, BOLEK)
               and post.seat(uid, position).email == r.recipient)
    html = client.get(f"/dev/mail/{row.id}/html").get_data(as_text=True)
    found = re.search(r'src="' + re.escape(post.settings.base_url) + r'(/board/[^"]+)"', html)
    assert found is not None
    png = client.get(found.group(1))
    assert png.status_code == 200 and png.data.startswith(b"\x89PNG")
    app.extensions["titanpost.service"].engine.dispose()
    post.service.engine.dispose()


def test_the_picture_cache_draws_once_keeps_the_newest_and_no_failure() -> None:
    cache = PictureCache(size=2)
    drawn: list[BoardPicture] = []

    def draw(picture: BoardPicture) -> bytes:
        drawn.append(picture)
        if picture.seq < 0:
            raise PictureError("no such moment")
        return f"{picture.game}.{picture.seq}".encode()

    first, second, third = (BoardPicture("g", seq, 0, "en") for seq in (1, 2, 3))
    threads = [threading.Thread(target=cache.get, args=(first, draw)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert drawn == [first] and cache.get(first, draw) == b"g.1"
    cache.get(second, draw)
    cache.get(first, draw)  # (the newest use: second is the oldest now)
    cache.get(third, draw)
    assert cache.get(first, draw) == b"g.1" and drawn == [first, second, third]
    cache.get(second, draw)
    assert drawn == [first, second, third, second] and cache.drawn == 4
    with pytest.raises(PictureError):
        cache.get(BoardPicture("g", -1, 0, "en"), draw)
    assert cache.drawn == 4 and not cache._drawing


# ------------------------------------------------------------------ the sender's bookkeeping


def test_each_delivery_is_recorded_once_the_batch_is_sent(public_post: Post) -> None:
    """Deliveries are recorded with the next row's hand-over and at the end of the batch:
    after a round every delivered row is sent, once, with nothing left handed over only."""
    post = public_post
    for name in ("Monday race", "Tuesday race", "Wednesday race"):
        post.new_game(name=name)
    report = post.send()
    assert report.sent >= 6 and not report.failed and not report.unconfirmed, report
    rows = post.rows()
    delivered = [row for row in rows if row.sent_at is not None and not row.last_error]
    assert len(delivered) == report.sent == len(post.smtp.inbox.mails())  # type: ignore[union-attr]
    assert all(row.handed_at is not None and row.attempts == 1
               and row.next_attempt_at is None for row in delivered)
    assert not [row for row in rows if row.handed_at is not None and row.sent_at is None]


# ------------------------------------------------------------------ no stall per message


def no_delay(smtp_connection: Any) -> int:
    sock = smtp_connection.sock
    assert sock is not None
    value: int = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
    return value


def test_the_smtp_connection_sends_without_nagles_delay(smtp: Smtp) -> None:  # noqa: F811
    connection = connect(parse_smtp_url(smtp.url))
    try:
        assert no_delay(connection) != 0
    finally:
        connection.quit()


@pytest.mark.parametrize("mode", ["smtps", "starttls"])
def test_a_tls_connection_sends_without_nagles_delay(tmp_path: Path, mode: str) -> None:
    context = self_signed(tmp_path)
    inbox = Inbox()
    if mode == "smtps":
        controller, port = _start(inbox, ssl_context=context, server_hostname="127.0.0.1")
        url = f"smtps://127.0.0.1:{port}?verify=0"
    else:
        controller, port = _start(inbox, tls_context=context, require_starttls=True)
        url = f"smtp://127.0.0.1:{port}?starttls=1&verify=0"
    try:
        connection = connect(parse_smtp_url(url))
        try:
            assert no_delay(connection) != 0
            connection.sendmail("post@titan.test", [ANN], b"Subject: hi\r\n\r\nhello\r\n")
        finally:
            connection.quit()
        assert len(inbox.mails(ANN)) == 1
    finally:
        controller.stop()


def test_a_picture_address_is_cut_from_the_logs() -> None:
    """A picture's address shows a seat's view to whoever holds it: logs keep only its prefix."""
    from app.core.observability import redact_path, redact_text

    token = make_picture_token("k" * 32, BoardPicture("a" * 32, 3, 1, "en"))
    assert redact_path(f"/board/{token}.png") == "/board/…"
    assert token not in redact_text(f'GET https://titanpost.example/board/{token}.png "200"')
