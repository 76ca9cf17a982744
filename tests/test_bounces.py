"""Bounces understood (issue 39): read, applied, and what follows for the address.

- The samples (tests/mail_samples/bounces/, shaped as Postfix, Exim, Gmail, Microsoft and qmail
  write them, and two vacation replies) read as the failures they report, and the vacation
  replies as none (app/features/delivery/dsn.py).
- A bounce to a mail's own envelope sender (``bounces+<token>@``) reaches the SMTP listener,
  which marks the outbox row and the address: at once, once, and only for a token a mail has;
  a delay warning is recorded without making the address undeliverable; a vacation reply to
  the envelope sender marks nothing. A bounce that came to a seat's reply address counts for
  that seat's own address only. The IMAP poller applies a bounce in the mailbox (a real
  Dovecot), and ``titanpost mail bounce`` one from a file.
- End to end: the sender hands a mail for an unknown user to the test suite's real Postfix,
  whose mailbox server (Dovecot, LMTP) refuses it; Postfix's bounce travels back to the
  listener, the address becomes undeliverable, and the next mails to it are held or left out.
  A relay refusing the recipient at RCPT does the same at once.

On SQLite and PostgreSQL each.
"""

from __future__ import annotations

import re
import smtplib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner
from sqlmodel import select

from app.core.models import Game, MailAddress, OutboxMail
from app.features.delivery.dsn import AUTO_REPLY, GUESSED, NOTHING, REPORT, read_bounce
from app.features.delivery.standing import state_of
from app.features.delivery.verp import bounce_address
from app.mail.addresses import reply_address
from app.mail.inbound import process_inbound
from app.mail.inbound_imap import poll_imap
from app.mail.inbound_smtp import make_controller
from cli.main import main
from tests.mailservers import WAIT_SECONDS, Dovecot, PostfixFactory
from tests.netutil import free_port
from tests.test_mail_out import ANN, DOMAIN, Inbox, Post, Smtp, make_post, settings_for

pytest_plugins = ["tests.mailservers"]

BOUNCES = Path(__file__).resolve().parent / "mail_samples" / "bounces"
SAMPLE_TOKEN = "abcdefghijklmnopqrst"
NOBODY = "nobody@players.test"

EXPECTED: dict[str, tuple[str, list[tuple[str, bool]], str]] = {
    # sample: (how it is read, [(address, permanent)], words the reason holds)
    "postfix-user-unknown.eml": (REPORT, [("nobody@example.net", True)], "5.1.1 550 5.1.1"),
    "postfix-delayed.eml": (REPORT, [("slow@example.net", False)], "4.4.1 connect to"),
    "exim-failed.eml": (REPORT, [("gone@example.org", True)], "5.0.0 mailbox is full"),
    "gmail-no-such-user.eml": (REPORT, [("no.such.person@gmail.com", True)],
                               "5.1.1 550-5.1.1 The email account"),
    "outlook-recipient-not-found.eml": (REPORT, [("bob.smith@hotmail.com", True)],
                                        "RESOLVER.ADR.RecipientNotFound"),
    "exim-plain.eml": (GUESSED, [("olduser@old-isp.example", True)], "Mail delivery failed"),
    "qmail.eml": (GUESSED, [("closed@small-host.example", True)], "failure notice"),
    "vacation.eml": (AUTO_REPLY, [], ""),
    "outlook-automatic-reply.eml": (AUTO_REPLY, [], ""),
}
SAMPLE_ADDRESS = {"postfix-user-unknown.eml": "nobody@example.net",
                  "postfix-delayed.eml": "slow@example.net",
                  "exim-plain.eml": "olduser@old-isp.example"}


def sample(name: str, *, token: str | None = None, address: str | None = None) -> bytes:
    """A sample bounce, about ``token``'s mail to ``address`` instead of the sample's own."""
    raw = (BOUNCES / name).read_bytes()
    if token is not None:
        raw = raw.replace(SAMPLE_TOKEN.encode(), token.encode())
    if address is not None:
        raw = re.sub(re.escape(SAMPLE_ADDRESS[name]).encode(), address.encode(), raw,
                     flags=re.IGNORECASE)
    return raw


# ------------------------------------------------------------------ reading


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bounce_samples_read_as_the_failures_they_report(name: str) -> None:
    how, failures, words = EXPECTED[name]
    reading = read_bounce((BOUNCES / name).read_bytes(), DOMAIN)
    assert reading.how == how
    assert [(f.address, f.permanent) for f in reading.failures] == failures
    assert all(words in f.reason for f in reading.failures), reading.failures


def test_every_bounce_sample_is_listed() -> None:
    assert sorted(p.name for p in BOUNCES.glob("*.eml")) == sorted(EXPECTED)


def test_tokens_named_in_a_bounce_are_found_for_this_domain_only() -> None:
    raw = (BOUNCES / "postfix-user-unknown.eml").read_bytes()
    assert read_bounce(raw, DOMAIN).tokens == (SAMPLE_TOKEN,)
    assert read_bounce(raw, "other.test").tokens == ()
    assert read_bounce(b"not a mail at all \xff\x00", DOMAIN).how == NOTHING


# ------------------------------------------------------------------ a game that mailed


def invite(post: Post) -> dict[str, Any]:
    """A game of NOBODY, ANN and a bot, not started: its invitations are the mails to send."""
    return post.new_game(seats=[{"email": NOBODY}, {"email": ANN}, {"bot": True}],
                         start=False)


def start(post: Post, game: dict[str, Any]) -> None:
    """Accept the game's invitations and start it."""
    for invitation in game["invitations"]:
        post.service.accept(invitation["invite_token"])
    post.service.start(game["game"], game["creator_token"])


@pytest.fixture
def mailed(migrated_database_url: str) -> Iterator[tuple[Post, Inbox]]:
    """A game whose invitations went out to NOBODY and ANN through an aiosmtpd relay."""
    inbox = Inbox()
    relay = Controller(inbox, hostname="127.0.0.1", port=free_port())
    relay.start()
    post = make_post(migrated_database_url, Smtp(inbox, relay.port, []))
    try:
        invite(post)
        assert post.send().sent == 2
        yield post, inbox
    finally:
        relay.stop()
        post.service.engine.dispose()


def envelope_of(inbox: Inbox, to: str) -> str:
    """The envelope sender of the one mail the relay got for ``to``."""
    [sender] = [mail_from for mail_from, rcpt, _ in inbox.messages if to in rcpt]
    return str(sender)


def token_of(inbox: Inbox, to: str) -> str:
    return envelope_of(inbox, to).split("+", 1)[1].split("@", 1)[0]


@contextmanager
def listener(post: Post) -> Iterator[int]:
    controller = make_controller(post.service.engine, post.settings, port=free_port())
    controller.start()
    try:
        yield controller.port
    finally:
        controller.stop()


def deliver(port: int, recipient: str, raw: bytes) -> None:
    """Hand ``raw`` to the listener as a reporting server does: with a null sender."""
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.sendmail("", [recipient], crlf(raw))


def crlf(raw: bytes) -> bytes:
    """``raw`` with the line ends SMTP sends (smtplib sends bytes as they are)."""
    return raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def standing(post: Post, address: str) -> MailAddress | None:
    with post.service.session() as s:
        return state_of(s, address)


def row_to(post: Post, address: str) -> OutboxMail:
    [row] = post.rows(recipient=address)
    return row


def test_a_bounce_to_the_envelope_sender_marks_the_row_and_the_address_once(
        mailed: tuple[Post, Inbox]) -> None:
    post, inbox = mailed
    envelope = envelope_of(inbox, NOBODY)
    assert re.fullmatch(r"bounces\+[a-z2-7]{20}@" + re.escape(DOMAIN), envelope)
    assert standing(post, NOBODY).undeliverable_since is None  # type: ignore[union-attr]
    bounce = sample("postfix-user-unknown.eml", token=token_of(inbox, NOBODY), address=NOBODY)
    with listener(post) as port:
        deliver(port, envelope, bounce)
        deliver(port, envelope, bounce)  # the same report again: nothing more
    row = row_to(post, NOBODY)
    assert row.bounced_at is not None and row.bounce is not None
    assert row.bounce.startswith("5.1.1 550 5.1.1 <nobody@players.test>: Recipient address")
    state = standing(post, NOBODY)
    assert state is not None and state.undeliverable_since is not None
    assert (state.bounces, state.bounce_reason) == (1, row.bounce)
    ann = standing(post, ANN)
    assert ann is not None and ann.undeliverable_since is None and ann.bounces == 0
    assert row_to(post, ANN).bounced_at is None


def test_a_delay_warning_is_recorded_without_making_the_address_undeliverable(
        mailed: tuple[Post, Inbox]) -> None:
    post, inbox = mailed
    warning = sample("postfix-delayed.eml", token=token_of(inbox, ANN), address=ANN)
    with listener(post) as port:
        deliver(port, envelope_of(inbox, ANN), warning)
        deliver(port, envelope_of(inbox, ANN), warning)
    row = row_to(post, ANN)
    assert row.bounced_at is None and (row.bounce or "").startswith("4.4.1 connect to")
    state = standing(post, ANN)
    assert state is not None and state.undeliverable_since is None
    assert state.bounces == 1 and (state.bounce_reason or "").startswith("4.4.1")


def test_unknown_tokens_vacation_replies_and_bad_bounce_addresses(
        mailed: tuple[Post, Inbox]) -> None:
    """A well-formed bounce address is taken (its token looked up only when applied: an
    unknown one is dropped), a malformed one refused at RCPT; a vacation reply sent to the
    envelope sender marks nothing."""
    post, inbox = mailed
    unknown = bounce_address(DOMAIN, "a" * 20)
    with listener(post) as port:
        deliver(port, unknown, sample("postfix-user-unknown.eml", token="a" * 20,
                                      address=NOBODY))
        deliver(port, envelope_of(inbox, NOBODY),
                sample("vacation.eml", token=token_of(inbox, NOBODY)))
        with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
            smtp.ehlo()
            smtp.mail("")
            assert smtp.rcpt(f"bounces+short@{DOMAIN}")[0] == 550
            assert smtp.rcpt(bounce_address("elsewhere.test", "a" * 20))[0] == 550
    assert standing(post, NOBODY).bounces == 0  # type: ignore[union-attr]
    assert [row.bounce for row in post.rows()] == [None, None]


def test_a_bounce_at_a_reply_address_counts_for_that_seats_own_address_only(
        mailed: tuple[Post, Inbox]) -> None:
    """A server that sends the report to the Reply-To (the seat's reply address) instead of the
    envelope sender, without the token: the worker applies it, for the seat's own address; a
    made-up one naming another player at that reply address marks nothing."""
    post, _ = mailed
    uid = _game_uid(post)
    nobody_seat = post.position_of(uid, NOBODY)
    address = reply_address(post.settings.secret_key, DOMAIN, uid, nobody_seat)
    with listener(post) as port:
        made_up = sample("exim-plain.eml", address=ANN).replace(b"<E1KX3Zq", b"<E1KX3Zr")
        deliver(port, address, made_up)  # (about someone else: another Message-ID)
        deliver(port, address, sample("exim-plain.eml", address=NOBODY))
    outcomes = process_inbound(post.service)
    assert [o.result for o in outcomes] == ["ignored", "bounce"], outcomes
    assert standing(post, ANN).bounces == 0  # type: ignore[union-attr]
    state = standing(post, NOBODY)
    assert state is not None and state.undeliverable_since is not None
    assert (state.bounce_reason or "").startswith("bounce: Mail delivery failed")
    assert row_to(post, NOBODY).bounced_at is not None


def _game_uid(post: Post) -> str:
    with post.service.session() as s:
        return s.exec(select(Game.uid)).one()


def test_the_imap_poller_applies_a_bounce_in_the_mailbox(
        mailed: tuple[Post, Inbox], dovecot: Dovecot) -> None:
    """The mailbox of the reply domain gets Postfix's bounce (its To is the envelope sender),
    and a vacation reply to it: the poller applies the one, marks nothing for the other."""
    post, inbox = mailed
    mailbox = f"{dovecot.user}@{DOMAIN}"
    dovecot.deliver("", mailbox, crlf(sample("vacation.eml", token=token_of(inbox, ANN))))
    dovecot.deliver("", mailbox, crlf(sample("postfix-user-unknown.eml",
                                             token=token_of(inbox, NOBODY), address=NOBODY)))
    report = poll_imap(post.service.engine, post.settings, dovecot.imap_url())
    assert (report.fetched, report.bounces, report.queued, report.ignored) == (2, 2, [], 0)
    assert standing(post, NOBODY).undeliverable_since is not None  # type: ignore[union-attr]
    assert standing(post, ANN).bounces == 0  # type: ignore[union-attr]
    assert row_to(post, NOBODY).bounced_at is not None and row_to(post, ANN).bounced_at is None
    assert [flags for _, flags in dovecot.messages()] == ["S", "S"]


def test_mail_bounce_applies_a_bounce_file(mailed: tuple[Post, Inbox], tmp_path: Path) -> None:
    post, inbox = mailed
    path = tmp_path / "bounce.eml"
    path.write_bytes(sample("exim-plain.eml", address=NOBODY))  # (no token: the operator's)
    url = post.service.engine.url.render_as_string(hide_password=False)
    env = _cli_env(url)
    done = CliRunner().invoke(main, ["mail", "bounce", str(path)], env=env)
    assert done.exit_code == 0, done.output
    assert done.output == f"{NOBODY}: undeliverable\n"
    again = CliRunner().invoke(main, ["mail", "bounce", "-", "--to", envelope_of(inbox, ANN)],
                               input=sample("postfix-delayed.eml", address=ANN), env=env)
    assert again.exit_code == 0 and again.output == f"{ANN}: a temporary failure, recorded\n"
    assert standing(post, NOBODY).undeliverable_since is not None  # type: ignore[union-attr]
    bad = CliRunner().invoke(main, ["mail", "bounce", str(path), "--to", ANN], env=env)
    assert bad.exit_code == 2 and "is not a bounce address" in bad.output


def _cli_env(url: str) -> dict[str, str]:
    settings = settings_for(url, None)
    return {"TITANPOST_DATABASE_URL": url, "TITANPOST_ENV": "test",
            "TITANPOST_SECRET_KEY": settings.secret_key, "TITANPOST_MAIL_DOMAIN": DOMAIN,
            "TITANPOST_BASE_URL": settings.base_url, "TITANPOST_MAIL_FROM": settings.mail_from}


# ------------------------------------------------------------------ what follows


def assert_no_more_mail_to(post: Post, address: str) -> None:
    """Every mail to ``address`` after the first is held or left out, never handed over."""
    later = post.rows(recipient=address)[1:]
    assert later, "no mail to it after the bounce"
    for row in later:
        assert row.handed_at is None, row
        assert re.match(r"(skipped|held): the address is undeliverable since ",
                        row.last_error or ""), row.last_error


class Refusing(Inbox):
    """A relay that refuses NOBODY at RCPT for good."""

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str,
                          options: Any) -> str:
        if address == NOBODY:
            return "550 5.1.1 <nobody@players.test>: Recipient address rejected"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def test_a_relays_refusal_at_rcpt_marks_the_address_at_once(
        migrated_database_url: str) -> None:
    inbox = Refusing()
    relay = Controller(inbox, hostname="127.0.0.1", port=free_port())
    relay.start()
    post = make_post(migrated_database_url, Smtp(inbox, relay.port, []))
    try:
        game = invite(post)
        report = post.send()
        assert (report.sent, report.gave_up) == (1, 1)
        state = standing(post, NOBODY)
        assert state is not None and state.undeliverable_since is not None
        assert "550 5.1.1" in (state.bounce_reason or "")
        start(post, game)
        post.send()
        assert_no_more_mail_to(post, NOBODY)
        assert inbox.mails(NOBODY) == [] and inbox.mails(ANN)
    finally:
        relay.stop()
        post.service.engine.dispose()


def test_a_bounce_from_postfix_comes_back_and_stops_mail_to_the_address(
        migrated_database_url: str, postfix_factory: PostfixFactory, dovecot: Dovecot) -> None:
    """The sender hands invitations to a real Postfix; the players' mailbox server (Dovecot,
    by LMTP) has no user ``nobody``, so Postfix bounces that one to its envelope sender, which
    Postfix relays to the listener as it relays every mail of the server's domain."""
    port = free_port()
    relay = postfix_factory({DOMAIN: f"smtp:[127.0.0.1]:{port}",
                             "players.test": f"lmtp:inet:127.0.0.1:{dovecot.lmtp_port}"})
    post = make_post(migrated_database_url, Smtp(relay.outside, relay.port, []))
    controller = make_controller(post.service.engine, post.settings, port=port)
    controller.start()
    try:
        game = invite(post)
        assert post.send().sent == 2
        refused = relay.wait_for(rf"to=<{re.escape(NOBODY)}>.* status=bounced \((.*)\)$",
                                 "Dovecot's refusal")
        relay.wait_for(r"to=<bounces\+[a-z2-7]{20}@" + re.escape(DOMAIN) + r">.* status=sent "
                       r"\(250 2\.0\.0 Report taken\)", "the bounce relayed to the listener")
        state = wait_for_undeliverable(post, NOBODY)
    finally:
        controller.stop()
    row = row_to(post, NOBODY)
    assert row.bounced_at is not None and row.bounce == state.bounce_reason
    assert (state.bounce_reason or "").startswith("5.1.1 "), state.bounce_reason
    assert "550 5.1.1" in (state.bounce_reason or "") and "550 5.1.1" in refused[1]
    assert state.undeliverable_since is not None and state.bounces == 1
    assert row_to(post, ANN).bounced_at is None and relay.outside.mails(ANN)
    start(post, game)
    post.send()
    assert_no_more_mail_to(post, NOBODY)
    post.service.engine.dispose()


def wait_for_undeliverable(post: Post, address: str) -> MailAddress:
    """The address's standing once a bounce made it undeliverable (a bound on the wait, not a
    measure: it ends as soon as the listener applied the bounce)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        state = standing(post, address)
        if state is not None and state.undeliverable_since is not None:
            return state
        assert time.monotonic() < deadline, "the bounce never marked the address"
        time.sleep(0.1)
