"""Outgoing mail: outbox rows written with the moves, delivered to a real SMTP server.

Every test that delivers mail runs an aiosmtpd server on 127.0.0.1 (a free port) and parses what
arrived with the ``email`` package: the multipart structure, the headers (deterministic
Message-ID, threading, a Reply-To that ``parse_reply_address`` accepts), the options and their
signed links in both the text and the HTML part, and the board PNG. Databases are migrated with
``app.core.migrate.upgrade``; the core send test and the concurrent senders run on SQLite and
PostgreSQL.
"""

from __future__ import annotations

import asyncio
import gc
import os
import re
import ssl
import subprocess
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from sqlmodel import col, select

from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import upgrade
from app.core.models import Game, OutboxMail, Seat, utcnow
from app.mail.addresses import parse_reply_address
from app.mail.notify import (
    CONTINUATION_DELAY,
    Notifier,
    enqueue_notice,
    install,
    write_digests,
)
from app.mail.relay import parse_smtp_url
from app.mail.render import MailRenderer, build_message
from app.mail.send import Sender, SendReport, backoff
from app.service import GameEvent, GameService
from app.web.linktokens import peek, read_game_token, read_option_token
from tests.dbutil import migrate, migrated_sqlite
from tests.netutil import free_port

DOMAIN = "titan.test"
BASE = "http://titan.test"
SECRET = "mail-test-secret-key-0123456789abcdef"
FROM = "Titan Post <post@titan.test>"
ANN = "ann@example.com"
BOLEK = "bolek@example.com"
DECISIONS = ("pick", "turn", "react", "pirates")
SEED = 11
LATER = CONTINUATION_DELAY + timedelta(seconds=5)


# ------------------------------------------------------------------ an SMTP server


@dataclass
class Inbox:
    """What a real SMTP server (aiosmtpd) received."""

    messages: list[tuple[str, list[str], EmailMessage]] = field(default_factory=list)
    delay: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.delay:
            await asyncio.sleep(self.delay)
        msg = message_from_bytes(envelope.original_content or envelope.content,
                                 policy=policy.default)
        assert isinstance(msg, EmailMessage)
        with self.lock:
            self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), msg))
        return "250 OK"

    def mails(self, to: str | None = None) -> list[EmailMessage]:
        with self.lock:
            return [m for _, rcpt, m in self.messages if to is None or to in rcpt]

    def ids(self) -> Counter[str]:
        return Counter(str(m["Message-ID"]) for m in self.mails())



@dataclass
class Smtp:
    inbox: Inbox
    port: int
    logins: list[tuple[str, str]]

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"


def _start(inbox: Inbox, **kwargs: Any) -> tuple[Controller, int]:
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port, **kwargs)
    controller.start()
    return controller, port


@pytest.fixture
def smtp() -> Iterator[Smtp]:
    inbox = Inbox()
    controller, port = _start(inbox)
    try:
        yield Smtp(inbox, port, [])
    finally:
        controller.stop()


# ------------------------------------------------------------------ a server with mail


def settings_for(url: str, smtp_url: str | None, **extra: str) -> Settings:
    env = {
        "TITANPOST_DATABASE_URL": url,
        "TITANPOST_ENV": "test",
        "TITANPOST_SECRET_KEY": SECRET,
        "TITANPOST_BASE_URL": BASE,
        "TITANPOST_MAIL_FROM": FROM,
        "TITANPOST_MAIL_DOMAIN": DOMAIN,
        **extra,
    }
    if smtp_url:
        env["TITANPOST_SMTP_URL"] = smtp_url
    return Settings.from_env(env)


@dataclass
class Post:
    """A migrated database, a game service that writes mail, and helpers to play."""

    service: GameService
    smtp: Smtp | None

    @property
    def settings(self) -> Settings:
        return self.service.settings

    def sender(self, **kwargs: Any) -> Sender:
        kwargs.setdefault("batch", 500)
        return Sender(self.service, **kwargs)

    def send(self, **kwargs: Any) -> Any:
        """One round of the sender, a little in the future (past the continuation delay)."""
        kwargs.setdefault("now", utcnow() + LATER)
        return self.sender().run_once(**kwargs)

    def new_game(self, seats: list[dict[str, Any]] | None = None, name: str = "Tuesday race",
                 start: bool = True, send_invitations: bool = False,
                 **kwargs: Any) -> dict[str, Any]:
        """Create a game; unless ``start`` is false, every invitation is accepted (after the
        invitations were delivered, with ``send_invitations``) and the game is started."""
        seats = seats or [
            {"email": ANN, "name": "Ann"},
            {"email": BOLEK, "name": "Bolek", "language": "pl"},
            {"bot": True},
        ]
        kwargs.setdefault("seed", SEED)
        game = self.service.create_game(seats=seats, name=name, **kwargs)
        if send_invitations:
            self.send()
        if not start:
            return game
        for invitation in game["invitations"]:
            self.service.accept(invitation["invite_token"])
        self.service.start(game["game"], game["creator_token"])
        return game

    def to_act(self, uid: str) -> list[int]:
        acting: list[int] = self.service.state(uid, 0)["game"]["to_act"]
        return acting

    def options(self, uid: str, position: int) -> dict[str, Any]:
        return self.service.options(uid, position)

    def answer(self, uid: str, option: str | None = None) -> tuple[int, int, str]:
        """Answer the pending decision (with the bot's choice unless ``option`` is given);
        return (seat, seq answered, option)."""
        position = self.to_act(uid)[0]
        opts = self.options(uid, position)
        if option is None:
            with self.service.session() as s:
                loaded = self.service._load(s, uid)
                option = loaded.rules.bot_move(loaded.state)
        self.service.submit(uid, position, opts["seq"], option)
        return position, opts["seq"], option

    def play_until(self, uid: str, position: int, limit: int = 400) -> None:
        """Answer decisions until ``position`` owns the pending one."""
        for _ in range(limit):
            acting = self.to_act(uid)
            if not acting or position in acting:
                return
            self.answer(uid)
        raise AssertionError(f"seat {position} never got a decision")

    def rows(self, **where: Any) -> list[OutboxMail]:
        with self.service.session() as s:
            query = select(OutboxMail).order_by(col(OutboxMail.id))
            for key, value in where.items():
                query = query.where(getattr(OutboxMail, key) == value)
            return list(s.exec(query).all())

    def seat(self, uid: str, position: int) -> Seat:
        with self.service.session() as s:
            game = s.exec(select(Game).where(Game.uid == uid)).one()
            return s.exec(
                select(Seat).where(Seat.game_id == game.id, Seat.position == position)
            ).one()

    def position_of(self, uid: str, email: str) -> int:
        with self.service.session() as s:
            game = s.exec(select(Game).where(Game.uid == uid)).one()
            seat = s.exec(select(Seat).where(Seat.game_id == game.id,
                                             Seat.email == email)).one()
            return seat.position


def make_post(url: str, smtp: Smtp | None, **extra: str) -> Post:
    migrate(url)
    settings = settings_for(url, smtp.url if smtp else None, **extra)
    service = GameService(make_engine(url), settings)
    install(service)
    return Post(service, smtp)


@pytest.fixture
def post(tmp_path: Path, smtp: Smtp) -> Iterator[Post]:
    with migrated_sqlite(tmp_path) as url:
        made = make_post(url, smtp)
        yield made
        made.service.engine.dispose()


@pytest.fixture
def any_post(migrated_database_url: str, smtp: Smtp) -> Iterator[Post]:
    """The same on SQLite and on PostgreSQL."""
    made = make_post(migrated_database_url, smtp)
    yield made
    made.service.engine.dispose()


# ------------------------------------------------------------------ reading a mail


def parts(msg: EmailMessage) -> tuple[str, str, list[EmailMessage]]:
    text = msg.get_body(("plain",))
    html = msg.get_body(("html",))
    assert text is not None and html is not None
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    return str(text.get_content()), str(html.get_content()), images  # type: ignore[union-attr]


def structure(msg: EmailMessage) -> list[str]:
    return [p.get_content_type() for p in msg.walk()]


def links(text: str, kind: str) -> list[str]:
    return re.findall(re.escape(BASE) + "/" + kind + r"/[A-Za-z0-9_.\-]+", text)


def one_mail(post: Post, to: str, kind: str) -> EmailMessage:
    found = [m for m in post.smtp.inbox.mails(to) if m["X-Titan-Post-Kind"] == kind] \
        if post.smtp else []
    assert len(found) == 1, [(m["X-Titan-Post-Kind"], m["Subject"]) for m in found]
    return found[0]


def check_decision_mail(post: Post, msg: EmailMessage, uid: str, position: int,
                        seq: int) -> None:
    """Everything a decision mail must carry, checked on what the SMTP server received."""
    settings = post.settings
    kind = str(msg["X-Titan-Post-Kind"])
    seat = post.seat(uid, position)
    # the structure: text and (HTML + the board as a related inline image)
    assert structure(msg) == [
        "multipart/alternative", "text/plain", "multipart/related", "text/html", "image/png"
    ]
    # headers
    assert msg["Message-ID"] == f"<{uid}.{seq}.{position}.{kind}@{DOMAIN}>"
    assert msg["In-Reply-To"] == f"<{uid}@{DOMAIN}>"
    assert msg["References"] == f"<{uid}@{DOMAIN}>"
    assert str(msg["From"]) == FROM
    assert str(msg["To"]) == seat.email
    assert str(msg["Subject"]).startswith("[Titan Post] Tuesday race: ")
    assert parse_reply_address(SECRET, DOMAIN, str(msg["Reply-To"])) == (uid, position)
    assert msg["Date"] is not None
    # the options, each with its signed link, in the text and in the HTML
    text, html, images = parts(msg)
    opts = post.options(uid, position)
    assert opts["seq"] == seq and opts["options"]
    text_links = links(text, "l")
    html_links = links(unescape(html), "l")
    assert len(text_links) == len(opts["options"])
    assert set(text_links) == set(html_links)
    answered = {}
    for url in text_links:
        link = read_option_token(url.rsplit("/", 1)[1], settings.secret_key, seat.secret)
        assert (link.game, link.seat, link.seq) == (uid, position, seq)
        answered[link.option] = url
    assert sorted(answered) == sorted(opts["options"])
    for option in opts["options"]:
        assert f"reply: {option}" in text or f"odpowiedź: {option}" in text
        assert option in html
    game_links = links(text, "g")
    assert game_links and game_links[0] in unescape(html)
    assert read_game_token(game_links[0].rsplit("/", 1)[1], settings.secret_key,
                           seat.secret) == (uid, position)
    # the board: a PNG, referred to by the HTML through its Content-ID
    assert len(images) == 1
    png = images[0].get_content()
    assert isinstance(png, bytes) and png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000
    cid = str(images[0]["Content-ID"]).strip("<>")
    assert f'src="cid:{cid}"' in html
    assert images[0].get_content_disposition() == "inline"


# ------------------------------------------------------------------ tests


def test_the_invitation_names_who_invites(post: Post) -> None:
    """The invitation says who invites: the name of the owner's seat (the first seat unless
    another owner is given), in each reader's language; the owner's own invitation, and any
    invitation of a game whose owner has no named seat, says "you are invited" as before
    (issue 40: it said "Someone has set up a game" to everyone)."""
    post.new_game(start=False, send_invitations=True)
    bolek = one_mail(post, BOLEK, "invitation")
    text, html, _ = parts(bolek)
    assert bolek["Subject"] == "[Titan Post] Tuesday race: Ann zaprasza Cię do wyścigu"
    assert "Ann zaprasza Cię do gry w Titan Race" in text and "Ktoś" not in text
    assert "Ann zaprasza Cię do wyścigu" in html
    ann = one_mail(post, ANN, "invitation")
    assert ann["Subject"] == "[Titan Post] Tuesday race: you are invited to a race"
    assert "Someone has set up a game" in parts(ann)[0]
    other = post.new_game(name="Organised", start=False, send_invitations=True,
                          owner_email="organiser@example.org")
    assert other["game"]
    subjects = [m["Subject"] for m in post.smtp.inbox.mails(BOLEK) if "Organised" in m["Subject"]]
    assert subjects == ["[Titan Post] Organised: zaproszenie do wyścigu"]


def test_decision_mails_arrive_whole_and_threaded(any_post: Post) -> None:
    post = any_post
    game = post.new_game(send_invitations=True)
    uid = game["game"]
    report = post.send()
    assert report.sent == 2 and report.failed == 0, report
    position = post.to_act(uid)[0]
    owner = post.seat(uid, position).email
    other = BOLEK if owner == ANN else ANN
    seq = post.options(uid, position)["seq"]
    # the owner of the first decision: one mail asking for it; the other: the game started
    first = one_mail(post, owner, "pick")
    check_decision_mail(post, first, uid, position, seq)
    started = one_mail(post, other, "started")
    assert "multipart/alternative" in structure(started) and "image/png" in structure(started)
    assert started["References"] == f"<{uid}@{DOMAIN}>"
    assert not links(parts(started)[0], "l")  # nothing to answer
    # both were invited before (the invitation link is gone from the outbox once sent)
    for email in (ANN, BOLEK):
        invitation = one_mail(post, email, "invitation")
        assert links(parts(invitation)[0], "join")
        assert invitation["References"] == f"<{uid}@{DOMAIN}>"
    for row in post.rows(kind="invitation"):
        assert row.sent_at is not None and "link" not in row.payload
    # answer, then the next decision of each seat gets exactly one mail
    post.play_until(uid, 1 - position)
    seq2 = post.options(uid, 1 - position)["seq"]
    before = len(post.smtp.inbox.mails()) if post.smtp else 0
    assert post.send().sent >= 1
    fresh = post.smtp.inbox.mails()[before:] if post.smtp else []
    mine = [m for m in fresh if m["Message-ID"].startswith(f"<{uid}.{seq2}.{1 - position}.")]
    assert len(mine) == 1
    check_decision_mail(post, mine[0], uid, 1 - position, seq2)
    # every outbox row is settled and nothing was sent twice
    assert all(row.sent_at is not None for row in post.rows())
    assert max(post.smtp.inbox.ids().values()) == 1 if post.smtp else True
    assert post.send().claimed == 0


def test_polish_seat_gets_polish_mail(post: Post) -> None:
    game = post.new_game(send_invitations=True)
    uid = game["game"]
    bolek = post.position_of(uid, BOLEK)
    ann = post.position_of(uid, ANN)
    post.play_until(uid, bolek)
    post.send()
    post.play_until(uid, ann)
    post.send()
    assert post.smtp is not None
    polish = [m for m in post.smtp.inbox.mails(BOLEK) if m["X-Titan-Post-Kind"] in DECISIONS]
    english = [m for m in post.smtp.inbox.mails(ANN) if m["X-Titan-Post-Kind"] in DECISIONS]
    assert polish and english
    for msg in polish:
        text, html, _ = parts(msg)
        assert msg["Content-Language"] == "pl"
        assert any(w in str(msg["Subject"]) for w in ("wybierz kość", "Twoja tura"))
        assert "Otwórz grę" in text and "Otwórz grę" in html
        assert "MOŻLIWE RUCHY" in text and "WYŚCIG" in text
        assert "Open the game" not in text
        assert 'lang="pl"' in html
    for msg in english:
        text, html, _ = parts(msg)
        assert msg["Content-Language"] == "en"
        assert "Open the game" in text and "YOUR OPTIONS" in text
        assert "Otwórz" not in text
    invitation = parts(one_mail(post, BOLEK, "invitation"))[0]
    assert "Przyjmij zaproszenie" in invitation


def test_one_mail_per_decision(post: Post) -> None:
    game = post.new_game()
    uid = game["game"]
    assert post.smtp is not None
    post.send()
    sent_before = set(post.smtp.inbox.ids())
    # decisions answered at once, before the sender ran: their mails are not sent
    answered = [post.answer(uid)[:2] for _ in range(4)]
    report = post.send()
    assert report.skipped >= 3
    new = set(post.smtp.inbox.ids()) - sent_before
    for position, seq in answered:
        assert not [mid for mid in new if mid.startswith(f"<{uid}.{seq}.{position}.")]
    skipped = [r for r in post.rows() if r.last_error and r.last_error.startswith("skipped")
               and r.kind != "invitation"]  # (accepted before they went out)
    assert len(skipped) >= 3 and all(r.kind in DECISIONS for r in skipped)
    assert all("answered before the mail went out" in (r.last_error or "") for r in skipped)
    # the decision pending now has exactly one mail, and a second run sends nothing more
    acting = post.to_act(uid)[0]
    now_seq = post.options(uid, acting)["seq"]
    ids = post.smtp.inbox.ids()
    assert sum(1 for mid in ids if mid.startswith(f"<{uid}.{now_seq}.{acting}.")) == 1
    assert post.send().claimed == 0
    # the same event told to the notifier again writes no second row
    count = len(post.rows())
    with post.service.session(write=True) as s:
        loaded = post.service._load(s, uid, fresh_seats=True)
        Notifier(post.settings)(s, GameEvent("moved", loaded.game, loaded.seats, now_seq - 1,
                                             now_seq, loaded))
        s.commit()
    assert len(post.rows()) == count
    # one row per (decision, seat, kind) over a longer stretch of play
    for _ in range(40):
        if not post.to_act(uid):
            break
        post.answer(uid)
    keys = Counter((r.seq, r.seat_id, r.kind) for r in post.rows())
    assert max(keys.values()) == 1
    post.send()
    assert max(post.smtp.inbox.ids().values()) == 1


def test_the_next_step_of_ones_own_turn_waits_a_little(post: Post) -> None:
    """After a pick, the same player's turn with that die: its mail waits CONTINUATION_DELAY,
    and a player who goes on at once (in the browser) gets no mail for that step."""
    game = post.new_game()
    uid = game["game"]
    post.send()
    position = post.to_act(uid)[0]
    assert post.options(uid, position)["pending"]["kind"] == "pick"
    post.answer(uid)  # the pick: the same seat now chooses where to start
    assert post.to_act(uid) == [position]
    seq = post.options(uid, position)["seq"]
    [row] = post.rows(seq=seq, kind="turn")
    assert row.next_attempt_at is not None
    assert post.sender().run_once(now=utcnow()).claimed == 0  # held back
    post.answer(uid)  # answered within the delay
    report = post.send()
    assert report.skipped >= 1
    [row] = post.rows(seq=seq, kind="turn")
    assert (row.last_error or "").startswith("skipped")
    assert post.smtp is not None
    assert not [m for m in post.smtp.inbox.mails() if m["Message-ID"].startswith(f"<{uid}.{seq}.")]
    # a decision that passes to another player is not held back
    post.play_until(uid, 1 - position)
    acting_seq = post.options(uid, 1 - position)["seq"]
    fresh = [r for r in post.rows(seq=acting_seq) if r.kind in DECISIONS]
    assert fresh and all(r.next_attempt_at is None for r in fresh)


def test_retries_with_backoff_then_delivered_once(post: Post) -> None:
    game = post.new_game(seats=[{"email": ANN}, {"bot": True}, {"bot": True}], start=False)
    assert post.smtp is not None
    closed = f"smtp://127.0.0.1:{free_port()}"  # nobody listens there
    t0 = utcnow()
    failing = post.sender(smtp_url=closed)
    report = failing.run_once(now=t0)
    assert (report.claimed, report.failed, report.sent) == (1, 1, 0)
    [row] = post.rows()
    assert row.attempts == 1 and row.sent_at is None
    assert "cannot connect" in (row.last_error or "")
    assert _aware(row.next_attempt_at) - t0 == backoff(1) == timedelta(minutes=1)
    # not due again before its time
    assert failing.run_once(now=t0 + timedelta(seconds=30)).claimed == 0
    report = failing.run_once(now=t0 + timedelta(seconds=61))
    assert report.failed == 1
    [row] = post.rows()
    assert row.attempts == 2
    assert _aware(row.next_attempt_at) - (t0 + timedelta(seconds=61)) == timedelta(minutes=2)
    # the server answers now: delivered, once
    good = post.sender()
    assert good.run_once(now=t0 + timedelta(minutes=2)).claimed == 0  # still backing off
    report = good.run_once(now=t0 + timedelta(minutes=4))
    assert report.sent == 1
    [row] = post.rows()
    assert row.sent_at is not None and row.attempts == 3
    assert good.run_once(now=t0 + timedelta(hours=1)).claimed == 0
    assert post.smtp.inbox.ids() == Counter({row.message_id: 1})
    assert game["game"] in row.message_id


def test_gives_up_after_the_last_attempt(post: Post) -> None:
    post.new_game(seats=[{"email": ANN}, {"bot": True}, {"bot": True}], start=False)
    closed = f"smtp://127.0.0.1:{free_port()}"
    sender = post.sender(smtp_url=closed, max_attempts=3)
    t = utcnow()
    for _ in range(3):
        sender.run_once(now=t)
        t += timedelta(hours=7)
    [row] = post.rows()
    assert row.attempts == 3 and row.sent_at is None and row.next_attempt_at is None
    assert (row.last_error or "").startswith("gave up: cannot connect")
    assert sender.run_once(now=t + timedelta(days=30)).claimed == 0
    assert post.sender(max_attempts=3).run_once(now=t + timedelta(days=30)).claimed == 0


def test_refused_recipient_is_given_up_at_once(tmp_path: Path) -> None:
    class Refusing(Inbox):
        async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                              options: Any) -> str:
            if address.startswith("nobody"):
                return "550 no such user here"
            envelope.rcpt_tos.append(address)
            return "250 OK"

    inbox = Refusing()
    controller, port = _start(inbox)
    try:
        post = make_post(f"sqlite:///{tmp_path / 'r.db'}", Smtp(inbox, port, []))
        post.new_game(seats=[{"email": "nobody@example.com"}, {"email": ANN}, {"bot": True}],
                      start=False)
        report = post.send()
        assert (report.sent, report.gave_up) == (1, 1)
        bad = post.rows(recipient="nobody@example.com")[0]
        assert bad.sent_at is None and (bad.last_error or "").startswith("gave up: refused")
        assert [str(m["To"]) for m in inbox.mails()] == [ANN]
        post.service.engine.dispose()
    finally:
        controller.stop()


def test_two_senders_at_once_send_each_mail_once(any_post: Post) -> None:
    post = any_post
    assert post.smtp is not None
    post.smtp.inbox.delay = 0.005
    for n in range(10):
        post.new_game(seats=[{"email": f"p{n}a@example.com"}, {"email": f"p{n}b@example.com"},
                             {"email": f"p{n}c@example.com"}], start=False, name=f"race {n}")
    game = post.new_game()
    post.play_until(game["game"], post.position_of(game["game"], BOLEK))
    total = len(post.rows())
    assert total >= 34
    start = threading.Barrier(2)
    reports: list[Any] = []
    errors: list[BaseException] = []

    def work() -> None:
        sender = post.sender(batch=3)
        try:
            start.wait()
            while True:
                report = sender.run_once(now=utcnow() + LATER)
                reports.append(report)
                if report.claimed == 0:
                    return
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    rows = post.rows()
    assert all(r.sent_at is not None for r in rows)
    delivered = [r for r in rows if not (r.last_error or "").startswith("skipped")]
    ids = post.smtp.inbox.ids()
    assert sorted(ids) == sorted(r.message_id for r in delivered)
    assert set(ids.values()) == {1}
    assert sum(r.sent for r in reports) == len(delivered)
    assert sum(r.claimed for r in reports) == total


def test_a_sender_whose_lease_ran_out_does_not_send_again(post: Post) -> None:
    """A slow sender's claim expires and another sender takes the rows over and sends them: the
    first one, coming to those rows late, must not send them a second time."""
    assert post.smtp is not None
    post.new_game(start=False)
    when = utcnow() + LATER
    slow = post.sender(lease=timedelta(seconds=1))
    claimed = slow.claim(now=when)
    assert len(claimed) == 2  # the two invitations
    ready = [(row, build_message(post.settings, row, slow.renderer.render(row)))
             for row in claimed]
    taken_over = post.sender().run_once(now=when + timedelta(seconds=2))
    assert taken_over.claimed == 2 and taken_over.sent == 2
    late = SendReport()
    slow._deliver(ready, when, late)
    assert (late.sent, late.lost_lease) == (0, 2) and "left to another sender" in str(late)
    ids = post.smtp.inbox.ids()
    assert sorted(ids) == sorted(row.message_id for row in claimed)
    assert set(ids.values()) == {1}
    assert all(row.sent_at is not None and row.attempts == 1 for row in post.rows())


def test_digest_instead_of_decision_mails(post: Post) -> None:
    game = post.new_game(seats=[
        {"email": ANN, "name": "Ann", "notify": {"digest": True}},
        {"email": BOLEK, "name": "Bolek", "language": "pl"},
        {"bot": True},
    ])
    uid = game["game"]
    ann = post.position_of(uid, ANN)
    post.play_until(uid, ann)
    assert not [r for r in post.rows(recipient=ANN) if r.kind in DECISIONS]
    assert [r.kind for r in post.rows(recipient=ANN)] == ["invitation", "started"]
    # a second game waiting for Ann, and one not waiting for her
    other = post.new_game(name="Second race", seats=[
        {"email": BOLEK}, {"email": ANN, "notify": {"digest": True}}, {"bot": True}])
    post.play_until(other["game"], post.position_of(other["game"], ANN))
    assert write_digests(post.service) == 1
    assert write_digests(post.service) == 0  # once a day
    [row] = post.rows(kind="digest")
    assert row.recipient == ANN and len(row.payload["games"]) == 2
    post.send()
    msg = one_mail(post, ANN, "digest")
    text, html, images = parts(msg)
    assert str(msg["Subject"]) == "[Titan Post] Daily digest: 2 games waiting for you"
    assert "Tuesday race" in text and "Second race" in text and not images
    for game_uid in (uid, other["game"]):
        position = post.position_of(game_uid, ANN)
        seat = post.seat(game_uid, position)
        opts = post.options(game_uid, position)
        urls = [u for u in links(text, "l") if peek(u.rsplit("/", 1)[1])["g"] == game_uid]
        for u in urls:
            assert read_option_token(u.rsplit("/", 1)[1], SECRET, seat.secret).seat == position
        assert len(urls) == len(opts["options"])
        assert set(urls) <= set(links(unescape(html), "l"))
    assert post.send().claimed == 0


def test_game_over_goes_to_every_player(post: Post) -> None:
    game = post.new_game()
    uid = game["game"]
    for _ in range(3000):
        if not post.to_act(uid):
            break
        post.answer(uid)
    assert post.service.state(uid, 0)["game"]["status"] == "finished"
    report = post.send()
    assert report.failed == 0 and report.skipped > 0
    assert post.smtp is not None
    for email in (ANN, BOLEK):
        msg = one_mail(post, email, "game_over")
        text, _, images = parts(msg)
        assert len(images) == 1 and not links(text, "l")
        assert msg["References"] == f"<{uid}@{DOMAIN}>"
    assert "koniec gry" in str(one_mail(post, BOLEK, "game_over")["Subject"])
    assert "game over" in str(one_mail(post, ANN, "game_over")["Subject"])
    # the final decision mails were skipped: the game moved on before the sender ran
    assert not [m for m in post.smtp.inbox.mails() if m["X-Titan-Post-Kind"] in DECISIONS]


def test_a_player_who_resigned_hears_only_how_it_ended(post: Post) -> None:
    game = post.new_game()
    uid = game["game"]
    ann = post.position_of(uid, ANN)
    post.service.resign(uid, ann)
    last = max(r.id or 0 for r in post.rows())
    for _ in range(3000):
        if not post.to_act(uid):
            break
        post.answer(uid)
    later = [r for r in post.rows(recipient=ANN) if (r.id or 0) > last]
    assert [r.kind for r in later] == ["game_over"]
    assert [r.kind for r in post.rows(recipient=BOLEK) if (r.id or 0) > last][-1] == "game_over"


def test_abandoned_game_tells_the_players(post: Post) -> None:
    game = post.new_game()
    uid = game["game"]
    for _ in range(5):
        post.answer(uid)
    seq = post.service.state(uid, 0)["seq"] + 1  # (the abandonment is the log's last entry)
    post.service.abandon(uid, game["creator_token"])
    post.send()
    msg = one_mail(post, ANN, "game_over")
    assert "abandoned" in str(msg["Subject"])
    position = post.position_of(uid, ANN)
    assert msg["Message-ID"] == f"<{uid}.{seq}.{position}.game_over@{DOMAIN}>"
    assert len(parts(msg)[2]) == 1  # the board as it was left
    assert "porzucona" in str(one_mail(post, BOLEK, "game_over")["Subject"])


def test_reminder_and_deadline_notices(post: Post) -> None:
    game = post.new_game()
    uid = game["game"]
    position = post.to_act(uid)[0]
    seq = post.options(uid, position)["seq"]
    post.send()
    with post.service.session(write=True) as s:
        g = s.exec(select(Game).where(Game.uid == uid)).one()
        seat = s.exec(select(Seat).where(Seat.game_id == g.id, Seat.position == position)).one()
        for _ in range(2):  # at most once per decision
            enqueue_notice(s, post.settings, game=g, seat=seat, kind="reminder", seq=seq,
                           payload={"hours": 20})
            enqueue_notice(s, post.settings, game=g, seat=seat, kind="deadline", seq=seq,
                           payload={"action": "bot", "input": "pick red"})
        s.commit()
    with post.service.session(write=True) as s, pytest.raises(ValueError):
        enqueue_notice(s, post.settings, game=g, seat=seat, kind="pick", seq=seq)
    assert len(post.rows(kind="reminder")) == len(post.rows(kind="deadline")) == 1
    post.send()
    email = post.seat(uid, position).email
    reminder = one_mail(post, email, "reminder")
    check_decision_mail(post, reminder, uid, position, seq)
    deadline = one_mail(post, email, "deadline")
    text = parts(deadline)[0]
    assert "pick red" in text
    assert deadline["Message-ID"] == f"<{uid}.{seq}.{position}.deadline@{DOMAIN}>"


def test_no_smtp_url_keeps_mail_in_the_outbox(tmp_path: Path) -> None:
    post = make_post(f"sqlite:///{tmp_path / 'dev.db'}", None)
    post.new_game()
    report = post.send()
    assert report.disabled and report.claimed == 0
    assert post.rows() and all(r.sent_at is None and r.attempts == 0 for r in post.rows())
    post.service.engine.dispose()


def test_dev_mail_page_shows_the_outbox(tmp_path: Path) -> None:
    from app import create_app

    url = f"sqlite:///{tmp_path / 'dev.db'}"
    upgrade(url)
    app = create_app(settings_for(url, None))
    app.config["TESTING"] = True
    client = app.test_client()
    service: GameService = app.extensions["titanpost.service"]
    game = service.create_game(seats=[{"email": ANN}, {"email": BOLEK, "language": "pl"},
                                      {"bot": True}], name="Dev race", seed=SEED)
    for invitation in game["invitations"]:
        service.accept(invitation["invite_token"])
    service.start(game["game"], game["creator_token"])
    page = client.get("/dev/mail")
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    assert ANN in body and BOLEK in body and "No TITANPOST_SMTP_URL" in body
    with service.session() as s:
        decision = s.exec(select(OutboxMail).where(col(OutboxMail.kind).in_(DECISIONS))).first()
    assert decision is not None
    shown = client.get(f"/dev/mail/{decision.id}")
    assert shown.status_code == 200
    assert "[Titan Post] Dev race" in unescape(shown.get_data(as_text=True))
    html = client.get(f"/dev/mail/{decision.id}/html").get_data(as_text=True)
    image = re.search(r'src="(/dev/mail/\d+/image/[^"]+)"', html)
    assert image is not None
    png = client.get(image.group(1))
    assert png.status_code == 200 and png.data.startswith(b"\x89PNG")
    raw = client.get(f"/dev/mail/{decision.id}.eml")
    assert raw.status_code == 200
    assert message_from_bytes(raw.data, policy=policy.default)["Message-ID"] == \
        decision.message_id
    assert client.get("/dev/mail/999999").status_code == 404
    service.engine.dispose()
    production = create_app(settings_for(url, None, TITANPOST_ENV="production"))
    assert production.test_client().get("/dev/mail").status_code == 404
    production.extensions["titanpost.service"].engine.dispose()


def test_a_link_from_a_mail_plays_the_move(tmp_path: Path, smtp: Smtp) -> None:
    """Received mail -> option link -> confirm page (GET) -> POST -> the move is in the log."""
    from app import create_app

    url = f"sqlite:///{tmp_path / 'links.db'}"
    upgrade(url)
    app = create_app(settings_for(url, smtp.url))
    app.config["TESTING"] = True
    client = app.test_client()
    post = Post(app.extensions["titanpost.service"], smtp)
    game = post.new_game()
    uid = game["game"]
    post.send()
    position = post.to_act(uid)[0]
    email = post.seat(uid, position).email
    msg = one_mail(post, email, "pick")
    text = parts(msg)[0]
    seq = post.options(uid, position)["seq"]
    link = links(text, "l")[-1]
    option = read_option_token(link.rsplit("/", 1)[1], SECRET,
                               post.seat(uid, position).secret).option
    confirm = client.get(link.removeprefix(BASE))
    assert confirm.status_code == 200, confirm.get_data(as_text=True)[:500]
    page = confirm.get_data(as_text=True)
    assert len(post.service.log(uid, 0)["moves"]) == seq  # a GET changes nothing
    form = re.search(r'<form[^>]*method="post"[^>]*action="([^"]*)"', page)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert form is not None and token is not None
    action = unescape(form.group(1)) or link.removeprefix(BASE)
    applied = client.post(action, data={"csrf_token": token.group(1)})
    assert applied.status_code in (302, 303), applied.get_data(as_text=True)[:500]
    moves = post.service.log(uid, 0)["moves"]
    assert moves[seq]["seq"] == seq + 1 and moves[seq]["input"] == option
    assert moves[seq]["seat"] == position
    # the decision is answered: its mail is not sent again, the next one goes out once
    post.send()
    assert max(smtp.inbox.ids().values()) == 1
    post.service.engine.dispose()


def test_a_hand_has_the_same_card_names_in_the_mail_and_on_the_page(
        tmp_path: Path, smtp: Smtp) -> None:
    """One set of card names: the cards of a Polish seat's hand read the same in its
    decision mail and on its game page (both are the game UI's ``card_name``)."""
    from app import create_app
    from app.games.ui import game_ui

    url = f"sqlite:///{tmp_path / 'cards.db'}"
    upgrade(url)
    app = create_app(settings_for(url, smtp.url))
    app.config["TESTING"] = True
    post = Post(app.extensions["titanpost.service"], smtp)
    uid = post.new_game()["game"]
    bolek = post.position_of(uid, BOLEK)
    ui = game_ui("titan-race")
    hand: list[str] = []
    for _ in range(60):  # Bolek's decisions until he holds a card
        post.play_until(uid, bolek)
        view = post.service.state(uid, bolek)["view"]
        hand = [card for titan in post.seat(uid, bolek).pieces["titans"]
                for card in view["titans"][titan].get("hand") or []]
        if hand:
            break
        post.answer(uid)
    assert hand, "Bolek never held a card"
    post.send()
    text, html, _ = parts(post.smtp.inbox.mails(BOLEK)[-1])
    polish = [ui.card_name(card, "pl") for card in hand]
    assert polish != [ui.card_name(card, "en") for card in hand]  # the names are translated
    [line] = [ln for ln in text.splitlines() if ", Ty)" in ln]
    assert line.split("karty: ")[1].split(", ") == polish, line
    client = app.test_client()
    game_link = links(text, "g")[0].removeprefix(BASE)
    offer = client.get(game_link).get_data(as_text=True)  # "open the game as Bolek?"
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', offer)
    assert csrf is not None
    opened = client.post(game_link, data={"csrf_token": csrf.group(1)})
    assert opened.status_code == 303
    page = client.get(f"/games/{uid}")
    assert page.status_code == 200 and 'lang="pl"' in page.text
    hand_part = page.text[page.text.index('class="hand-cards'):]
    for name in polish:
        assert name in unescape(hand_part) and name in unescape(html)
    post.service.engine.dispose()


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_smtp_login_from_the_url(tmp_path: Path) -> None:
    logins: list[tuple[str, str]] = []

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str,
                     data: Any) -> AuthResult:
        assert isinstance(data, LoginPassword)
        logins.append((data.login.decode(), data.password.decode()))
        return AuthResult(success=data.password == b"p@ss word", handled=False)

    inbox = Inbox()
    controller, port = _start(inbox, authenticator=authenticate, auth_require_tls=False,
                              auth_required=True)
    try:
        post = make_post(f"sqlite:///{tmp_path / 'auth.db'}", None)
        post.new_game(seats=[{"email": ANN}, {"bot": True}, {"bot": True}], start=False)
        wrong = post.sender(smtp_url=f"smtp://mailer:nope@127.0.0.1:{port}")
        assert wrong.run_once().failed == 1 and not inbox.mails()
        right = post.sender(smtp_url=f"smtp://mailer:p%40ss%20word@127.0.0.1:{port}")
        assert right.run_once(now=utcnow() + timedelta(minutes=5)).sent == 1
        assert set(logins) == {("mailer", "nope"), ("mailer", "p@ss word")}
        assert logins[-1] == ("mailer", "p@ss word")
        assert len(inbox.mails(ANN)) == 1
        post.service.engine.dispose()
    finally:
        controller.stop()


def self_signed(folder: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(
            ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    (folder / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context


@pytest.mark.parametrize("mode", ["smtps", "starttls"])
def test_tls_transports(tmp_path: Path, mode: str) -> None:
    """smtps:// (TLS from the start) and smtp://...?starttls=1, with a login over TLS."""
    context = self_signed(tmp_path)
    logins: list[str] = []

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str,
                     data: Any) -> AuthResult:
        logins.append(data.login.decode())
        return AuthResult(success=True)

    inbox = Inbox()
    if mode == "smtps":
        # (aiosmtpd does not count a TLS-from-the-start session as TLS for AUTH: it is one)
        controller, port = _start(inbox, ssl_context=context, authenticator=authenticate,
                                  server_hostname="127.0.0.1", auth_require_tls=False)
        url = f"smtps://mailer:secret@127.0.0.1:{port}?verify=0"
    else:
        controller, port = _start(inbox, tls_context=context, require_starttls=True,
                                  authenticator=authenticate, auth_required=True)
        url = f"smtp://mailer:secret@127.0.0.1:{port}?starttls=1&verify=0"
    try:
        post = make_post(f"sqlite:///{tmp_path / 'tls.db'}", None)
        post.new_game(seats=[{"email": ANN}, {"bot": True}, {"bot": True}], start=False)
        # a certificate nobody vouches for is refused unless verify=0 says otherwise
        strict = post.sender(smtp_url=url.replace("verify=0", "verify=1"))
        assert strict.run_once().failed == 1 and not inbox.mails()
        report = post.sender(smtp_url=url).run_once(now=utcnow() + timedelta(minutes=5))
        assert report.sent == 1, report
        assert logins[-1] == "mailer" and len(inbox.mails(ANN)) == 1
        post.service.engine.dispose()
    finally:
        controller.stop()


def test_smtp_urls() -> None:
    plain = parse_smtp_url("smtp://mail.example.com")
    assert (plain.ssl, plain.port, plain.starttls, plain.username) == (False, 25, False, None)
    tls = parse_smtp_url("smtp://u:p%2Fq@mail.example.com?starttls=1&timeout=5")
    assert (tls.port, tls.starttls, tls.username, tls.password, tls.timeout) == (
        587, True, "u", "p/q", 5.0)
    secure = parse_smtp_url("smtps://u:p@mail.example.com")
    assert (secure.ssl, secure.port) == (True, 465)
    assert "p@" not in repr(secure) and "u@mail.example.com:465" in secure.describe()
    for bad in ("http://x", "smtp://", "smtp://h?tls=1", "smtps://h?starttls=1"):
        with pytest.raises(ValueError):
            parse_smtp_url(bad)


def test_render_without_sending(post: Post) -> None:
    """The renderer alone (as the dev page uses it): every kind renders in both languages."""
    game = post.new_game()
    uid = game["game"]
    renderer = MailRenderer(post.service)
    kinds = set()
    for row in post.rows():
        mail = renderer.render(row, always=True)
        kinds.add(row.kind)
        assert mail.subject.startswith("[Titan Post] Tuesday race: ")
        assert mail.text.endswith("\n") and "\n\n\n" not in mail.text
        assert "{{" not in mail.text and "{%" not in mail.html
    assert {"invitation", "started", "pick"} <= kinds
    # a mail not worth sending any more is not rendered for the sender
    [invitation] = post.rows(kind="invitation", recipient=ANN)
    bare = renderer.render(invitation)
    assert bare.skip and not bare.text and not bare.images
    assert uid


def test_every_mail_of_a_whole_game_renders(tmp_path: Path, smtp: Smtp) -> None:
    """A race with pirates and reaction windows: every row renders, in English and Polish (the
    board named by its address: an inline picture is drawn for every decision mail otherwise,
    and is tested on its own)."""
    with migrated_sqlite(tmp_path) as url:
        post = make_post(url, smtp, TITANPOST_MAIL_IMAGES="link")
        try:
            _every_mail_renders(post)
        finally:
            post.service.engine.dispose()


def _every_mail_renders(post: Post) -> None:
    game = post.new_game(circuits=["dead-mans-lagoon"], seed=1)  # (pirates, reaction windows)
    uid = game["game"]
    for _ in range(3000):
        if not post.to_act(uid):
            break
        post.answer(uid)
    renderer = MailRenderer(post.service)
    seen: Counter[tuple[str, str]] = Counter()
    for row in post.rows():
        mail = renderer.render(row, always=True)
        seen[(row.kind, mail.lang)] += 1
        assert mail.subject and mail.text and mail.html, row
        assert "{{" not in mail.text and "{%" not in mail.html
        if row.kind == "pirates":
            assert ("Pirates attack" in mail.text) or ("Piraci atakują" in mail.text)
        if row.kind == "react":
            assert ("You may play a card now, or pass" in mail.text
                    or "Możesz teraz zagrać kartę albo spasować" in mail.text)
        if row.kind in DECISIONS:
            assert f"{BASE}/board/" in mail.html and "/l/" in mail.text, row
        # how to answer, in the footer of a decision; nothing once the race is over
        answer = {"en": "reply to this mail with your choice",
                  "pl": "odpisz na tę wiadomość"}[mail.lang]
        if row.kind in DECISIONS or row.kind == "game_over":
            assert (answer in mail.text) == (row.kind != "game_over"), (row.kind, mail.text)
    kinds = {kind for kind, _ in seen}
    assert {"pick", "turn", "react", "pirates", "game_over", "started", "invitation"} <= kinds
    assert {lang for _, lang in seen} == {"en", "pl"}


def test_send_command(tmp_path: Path, smtp: Smtp, titanpost: str) -> None:
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    post = make_post(url, None)
    post.new_game()  # invitations accepted at once (so skipped), a pick and a start mail
    env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    env |= {"TITANPOST_DATABASE_URL": url, "TITANPOST_SECRET_KEY": SECRET,
            "TITANPOST_MAIL_DOMAIN": DOMAIN, "TITANPOST_BASE_URL": BASE}
    idle = subprocess.run([titanpost, "mail", "send", "--once"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert idle.returncode == 0 and "not set" in idle.stdout
    env["TITANPOST_SMTP_URL"] = smtp.url
    done = subprocess.run([titanpost, "mail", "send", "--once"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "sent 2, skipped 2" in done.stdout, done.stdout
    assert sorted(str(m["X-Titan-Post-Kind"]) for m in smtp.inbox.mails()) == ["pick", "started"]
    post.service.engine.dispose()


def _aware(moment: Any) -> Any:
    return moment if moment is None or moment.tzinfo else moment.replace(tzinfo=UTC)


def test_the_sender_renders_with_the_collector_held_and_lets_it_go(post: Post) -> None:
    """Rendering a batch holds the garbage collector back (:mod:`app.mail.collector`); the
    delivery does not, nor does the sender leave it off."""
    post.new_game()
    seen: list[bool] = []

    class Watching(MailRenderer):
        def render(self, *args: Any, **kwargs: Any) -> Any:
            seen.append(gc.isenabled())
            return super().render(*args, **kwargs)

    sender = post.sender(renderer=Watching(post.service))
    original = sender._deliver

    def deliver(*args: Any, **kwargs: Any) -> None:
        seen.append(gc.isenabled())
        original(*args, **kwargs)

    sender._deliver = deliver  # type: ignore[method-assign]
    assert gc.isenabled()
    report = sender.run_once(now=utcnow() + LATER)
    assert report.sent >= 2 and len(seen) == report.claimed + 1
    assert seen == [False] * report.claimed + [True]
    assert gc.isenabled()
