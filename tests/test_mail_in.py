"""Replies by e-mail: reading real clients' replies, the SMTP listener, the queue, the worker and
the IMAP poller.

The listener is the real aiosmtpd one (``app.mail.inbound_smtp``) on 127.0.0.1, spoken to with
smtplib. The IMAP poller is tested here against :class:`LoopbackImap`, a minimal IMAP4rev1
server written here (see its docstring) that records every command; tests/test_mail_servers.py
runs both behind real servers (Postfix, Dovecot). Databases are real: a migrated SQLite file
and a fresh PostgreSQL database (the ``database_url`` fixture), including for the queue's atomic
claims.
"""

from __future__ import annotations

import json
import re
import smtplib
import socket
import socketserver
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import EmailMessage
from email.utils import make_msgid, parseaddr
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from app.core.config import Settings
from app.games import ruleset
from app.games.base import MoveRejected
from app.games.titanrace.engine.notation import VERBS
from app.mail import inbound
from app.mail.addresses import reply_address
from app.mail.inbound import REPLY_ERROR, REPLY_OK, process_inbound
from app.mail.inbound_headers import parse_message
from app.mail.inbound_imap import ImapUrlError, parse_imap_url, poll_imap
from app.mail.inbound_queue import NotAReplyAddress, claim_inbound, queue_inbound
from app.mail.inbound_smtp import make_controller
from app.mail.inbound_text import (
    Extracted,
    extract,
    find_notation,
    html_to_text,
)
from app.service import GameService
from tests.apifixtures import base_env, human_game, make_service
from tests.netutil import free_port, serve_in_thread

pytest_plugins = ["tests.apifixtures"]


def titan_race_notation(part: str) -> bool:
    """Whether ``part`` is one Titan Race input as far as its spelling goes (a known verb)."""
    words = part.split()
    return bool(words) and words[0].lower() in VERBS


SAMPLES = Path(__file__).resolve().parent / "mail_samples"
EXPECTED: dict[str, str | None] = json.loads((SAMPLES / "expected.json").read_text())
DOMAIN = "titanpost.test"
PLAYER = "player@example.com"
"""A stranger: the players' own addresses are h<seat>@example.com (``human_game``), and a reply
counts only from the address of the seat it is sent to."""
SEAT_ADDRESS = re.compile(r"\.(?P<seat>[0-5])\.[0-9a-f]{16}@")


def player_of(address: str) -> str:
    """The player's own address for a reply address of the table's game, else PLAYER."""
    match = SEAT_ADDRESS.search(address)
    return f"h{match['seat']}@example.com" if match else PLAYER


def _is_notation(part: str) -> bool:
    try:
        ruleset("titan-race").normalise(part)
    except MoveRejected:
        return False
    return True


def _read(raw: bytes) -> Extracted:
    return extract(parse_message(raw), _is_notation)


# ------------------------------------------------------------------ replies of real clients


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_client_samples_parse_to_the_intended_notation(name: str) -> None:
    read = _read((SAMPLES / name).read_bytes())
    expected = EXPECTED[name]
    got = ruleset("titan-race").normalise(read.notation) if read.notation else None
    assert got == expected, read
    # Nothing of the quoted original is kept as the player's own text (our mails list
    # options such as "pick red" that must never be played from a quote).
    assert not any(line.startswith(">") for line in read.text.splitlines()), read.text
    assert "Reply with one of" not in read.text and "must pick a die" not in read.text


def test_every_sample_is_listed() -> None:
    assert sorted(p.name for p in SAMPLES.glob("*.eml")) == sorted(EXPECTED)


def test_samples_cover_the_client_formats() -> None:
    """The formats the issue names are each present in the samples."""
    texts = {p.name: p.read_bytes().decode("utf-8", "replace") for p in SAMPLES.glob("*.eml")}
    joined = "\n".join(texts.values())
    assert "gmail_quote" in joined and "wrote:" in joined  # Gmail
    assert "-----Original Message-----" in joined  # Outlook (desktop, plain)
    assert "divRplyFwdMsg" in joined and "Sent: " in joined  # Outlook (HTML, From/Sent block)
    assert '<blockquote type="cite">' in joined or "blockquote type=3D" in joined  # Apple Mail
    html_only = [n for n, t in texts.items() if "text/plain" not in t]
    assert len(html_only) >= 3, html_only
    assert any("\n-- \n" in t for t in texts.values())  # a "-- " signature


def test_html_to_text_drops_quotes_and_keeps_lines() -> None:
    html = (
        "<div>move RR</div><div>end<br></div><blockquote><div>pick red</div>"
        "<blockquote>nested</blockquote><p>still quoted</p></blockquote><p>after&nbsp;quote</p>"
        "<style>.x{}</style><script>pick()</script>"
    )
    assert html_to_text(html) == "move RR\nend\nafter quote"
    assert html_to_text("<div>pass</div><div><br></div><div>Ann</div>") == "pass\n\nAnn"
    outlook = '<p>pass</p><div id="appendonsend"></div><hr><p>From: x</p><p>pick red</p>'
    assert html_to_text(outlook) == "pass"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("pick red", "pick red"),
        ("move RR; end", "move RR; end"),
        ("move RR;end;", "move RR; end"),
        ("move RR\n\nend\n\nthanks", "move RR; end"),
        ("Hi!\nmove RR\nend", "move RR; end"),
        ("`pass`", "pass"),
        ("- pick red", "pick red"),
        ("pass.", "pass"),
        ("one\ntwo\nthree\nfour\npick red", None),  # too much prose first
        ("I pass", None),
        ("> pick red\n", None),
        ("See below\n-----Original Message-----\npick red", None),
        ("Later\nFrom: Titan Post\nSent: today\npick red", None),
        ("Later\nOn Sat, Titan Post wrote:\npick red", None),  # unquoted original: stop
        ("On Sat, Titan Post wrote:\n> pick red\n\npick blue", "pick blue"),  # bottom post
        ("pick red\n-- \npass", "pick red"),
    ],
)
def test_find_notation(text: str, expected: str | None) -> None:
    assert find_notation(text, titan_race_notation) == expected


def great_race_words(part: str) -> bool:
    """Whether ``part`` is a Great Race input as its notation spells it (``go E4``, not
    ``go Z99``)."""
    try:
        ruleset("great-race").normalise(part)
    except MoveRejected:
        return False
    return True


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("go E4", "go E4"),
        ("go Z99", "go Z99"),  # a mistyped move: read as one, to be refused with the options
        ("Go z99!", "Go z99"),
        ("Hi all,\ntake gide", "take gide"),
        ("go Z99\ngo E4", "go Z99; go E4"),
        ("go E4\nGo team!", "go E4"),  # after a move, words are not read as one
        ("go E4; go Z99", "go E4; go Z99"),
        ("P2 M2 S1", "P2 M2 S1"),  # a plan without its word, or a space alone: attempts
        ("e4", "e4"),
        ("See you at 5pm", None),
        ("Go team, you can do it!", None),  # prose: the chat's
        ("Going to bed now", None),
        ("Thanks, see you tomorrow", None),
        ("> go Z99", None),
    ],
)
def test_a_mistyped_move_is_read_as_an_attempt(text: str, expected: str | None) -> None:
    rules = ruleset("great-race")
    assert find_notation(text, great_race_words, rules.attempted) == expected


def test_a_hostile_reply_is_read_quickly() -> None:
    """mail-parser-reply's expressions grow with the square of a line's length: the reader cuts
    replies short so that no message stalls the worker."""
    msg = EmailMessage()
    msg.set_content("pick red\n" + "On On On On wrote " * 20_000 + "\n" + "> x\n" * 5000)
    started = time.monotonic()
    assert _read(msg.as_bytes()).notation == "pick red"
    assert time.monotonic() - started < 3


def test_message_ids_of_our_mails_give_the_decision() -> None:
    uid = "a" * 32
    msg = EmailMessage()
    msg["In-Reply-To"] = f"<{uid}.7.2.turn@{DOMAIN}>"
    assert inbound._replied_seq(msg, uid, 2, DOMAIN) == 7
    assert inbound._replied_seq(msg, uid, 1, DOMAIN) is None  # another seat's mail
    assert inbound._replied_seq(msg, uid, 2, "elsewhere.test") is None
    msg.replace_header("In-Reply-To", "<CAH7@mail.gmail.com>")
    msg["References"] = (
        f"<{uid}@{DOMAIN}> <{uid}.3.2.pick@{DOMAIN}> <{uid}.9.2.reply-error.14@{DOMAIN}>"
    )
    assert inbound._replied_seq(msg, uid, 2, DOMAIN) == 9  # the newest reference first
    msg.replace_header("References", f"<{uid}.0.2.started@{DOMAIN}>")
    assert inbound._replied_seq(msg, uid, 2, DOMAIN) is None  # not a decision mail


# ----------------------------------------------------------------------------- fixtures


@dataclass
class Table:
    """A started 3-seat game of human players, and the seat whose decision is pending."""

    service: GameService
    uid: str
    actor: int
    options: list[str]
    seq: int

    @property
    def settings(self) -> Settings:
        return self.service.settings

    @property
    def player(self) -> str:
        """The address of the seat whose decision is pending (where its mails go)."""
        return f"h{self.actor}@example.com"

    def address(self, position: int | None = None) -> str:
        pos = self.actor if position is None else position
        return reply_address(self.settings.secret_key, DOMAIN, self.uid, pos)

    def decision_id(self, seq: int | None = None, kind: str = "pick") -> str:
        return f"<{self.uid}.{self.seq if seq is None else seq}.{self.actor}.{kind}@{DOMAIN}>"

    def moves(self) -> list[dict[str, Any]]:
        return list(self.service.log(self.uid)["moves"])

    def outbox(self) -> list[dict[str, Any]]:
        with self.service.engine.connect() as conn:
            rows = conn.execute(
                sa.text("SELECT kind, recipient, message_id, payload, seq FROM outbox ORDER BY id")
            ).all()
        return [
            {
                "kind": r[0],
                "recipient": r[1],
                "message_id": r[2],
                "payload": r[3] if isinstance(r[3], dict) else json.loads(r[3]),
                "seq": r[4],
            }
            for r in rows
        ]

    def inbound_rows(self) -> list[dict[str, Any]]:
        with self.service.engine.connect() as conn:
            rows = conn.execute(
                sa.text(
                    "SELECT id, recipient, game_uid, seat, sender, result, processed_at, "
                    "expected_seq, input, source FROM inbound_mail ORDER BY id"
                )
            ).mappings().all()
        return [dict(r) for r in rows]


def new_table(service: GameService) -> Table:
    """A started game of three human players (h0..h2@example.com) on ``service``."""
    game = human_game(service, 3)
    uid = game["game"]
    actor = service.state(uid, 0)["game"]["to_act"][0]
    opts = service.options(uid, actor)
    assert opts["yours"] and opts["options"]
    return Table(service, uid, actor, list(opts["options"]), int(opts["seq"]))


@pytest.fixture
def table(migrated_database_url: str) -> Iterator[Table]:
    table = new_table(make_service(migrated_database_url, TITANPOST_MAIL_DOMAIN=DOMAIN))
    yield table
    table.service.engine.dispose()


@pytest.fixture
def smtp_port(table: Table) -> Iterator[int]:
    """The reply listener (the code `titanpost mail listen` runs) on a free loopback port."""
    port = free_port()
    controller = make_controller(table.service.engine, table.settings, "127.0.0.1", port)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def gmail_reply(
    to: str, text: str, *, in_reply_to: str | None = None, sender: str | None = None
) -> EmailMessage:
    """A reply shaped like Gmail's: text and HTML alternatives, the original quoted below
    (from the player of the seat ``to`` belongs to, unless ``sender`` says otherwise)."""
    sender = sender or player_of(to)
    msg = EmailMessage()
    msg["From"] = f"Player <{sender}>"
    msg["To"] = f"Titan Post <{to}>"
    msg["Subject"] = "Re: Friday race: your pick"
    msg["Message-ID"] = make_msgid(domain="mail.gmail.com")
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
        msg["References"] = in_reply_to
    quote = "It is your turn: slaugg must pick a die.\n\n  pick yellow\n  pick purple\n"
    msg.set_content(
        f"{text}\n\nOn Sat, Nov 21, 2026 at 10:02 AM Titan Post <{to}> wrote:\n\n"
        + "".join(f"> {line}\n" for line in quote.splitlines())
    )
    html_text = "".join(f"<div>{line}</div>" for line in text.splitlines())
    msg.add_alternative(
        f'<div dir="ltr">{html_text}</div><br><div class="gmail_quote">'
        f'<div class="gmail_attr">On Sat, Nov 21, 2026 at 10:02 AM Titan Post wrote:<br></div>'
        f'<blockquote class="gmail_quote">{quote}</blockquote></div>',
        subtype="html",
    )
    return msg


def wire(msg: EmailMessage) -> bytes:
    """The message as it travels over SMTP (CRLF line ends; smtplib sends bytes as given)."""
    return msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))


def send(port: int, msg: EmailMessage, recipients: list[str], sender: str | None = None) -> None:
    """Send ``msg`` over SMTP, the envelope sender being its From address unless given."""
    if sender is None:
        sender = parseaddr(str(msg["From"]))[1]
    with smtplib.SMTP("127.0.0.1", port, timeout=10) as smtp:
        smtp.sendmail(sender, recipients, wire(msg))


# ---------------------------------------------------------------------- the SMTP listener


def test_unknown_recipients_are_refused_at_rcpt(table: Table, smtp_port: int) -> None:
    good = table.address()
    forged = re.sub(r"\.[0-9a-f]{16}@", ".0123456789abcdef@", good)
    other_domain = good.replace(DOMAIN, "elsewhere.test")
    for bad in ("someone@titanpost.test", forged, other_domain, f"play+{table.uid}@{DOMAIN}"):
        msg = gmail_reply(bad, table.options[0])
        with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            send(smtp_port, msg, [bad])
        code, text = refused.value.recipients[bad]
        assert code == 550 and b"No such reply address" in text, (bad, text)
    assert table.inbound_rows() == []

    # With a good recipient beside a bad one, only the good one is queued.
    msg = gmail_reply(good, table.options[0])
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=10) as smtp:
        refused_map = smtp.sendmail(PLAYER, [good, "nobody@titanpost.test"], wire(msg))
    assert set(refused_map) == {"nobody@titanpost.test"}
    assert [r["recipient"] for r in table.inbound_rows()] == [good]


def test_a_good_reply_is_queued_then_applied(table: Table, smtp_port: int) -> None:
    choice = table.options[-1]
    msg = gmail_reply(table.address(), choice.upper(), in_reply_to=table.decision_id())
    send(smtp_port, msg, [table.address()])

    rows = table.inbound_rows()
    assert len(rows) == 1
    row = rows[0]
    assert row["recipient"] == table.address()
    assert (row["game_uid"], row["seat"], row["sender"], row["source"]) == (
        table.uid, table.actor, table.player, "smtp"
    )
    assert row["processed_at"] is None and table.moves() == []

    outcomes = process_inbound(table.service)
    assert [(o.result, o.notation, o.reply_kind) for o in outcomes] == [
        ("applied", choice.upper(), None)
    ]
    moves = table.moves()
    assert [(m["seq"], m["seat"], m["input"]) for m in moves][:1] == [(1, table.actor, choice)]
    row = table.inbound_rows()[0]
    assert row["result"] == "applied" and row["processed_at"] is not None
    assert row["expected_seq"] == table.seq
    assert table.outbox() == []  # errors are answered; a played move needs no answer
    assert process_inbound(table.service) == []  # nothing left to claim


README_REPLY = re.compile(r"python3 -c '(import smtplib;.*?)'\n", re.S)


def test_the_readmes_reply_example_is_played(table: Table, smtp_port: int) -> None:
    """The tour's reply, sent as docs/tour.md writes it (its addresses, port and move put in
    for this game's), is played: it says who it is from, as a reply must."""
    tour = Path(__file__).parent.parent / "docs" / "tour.md"
    [example] = README_REPLY.findall(tour.read_text())
    choice = table.options[0]
    code = (example.replace("play+<game>.<seat>.<signature>@localhost", table.address())
            .replace("ann@example.org", table.player).replace("2525", str(smtp_port))
            .replace("pick green", choice))
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)
    [outcome] = process_inbound(table.service)
    assert (outcome.result, outcome.notation) == ("applied", choice)
    assert [m["input"] for m in table.moves()][:1] == [choice]


def test_an_illegal_reply_is_answered_with_the_legal_options(
    table: Table, smtp_port: int
) -> None:
    msg = gmail_reply(table.address(), "move RR; end", in_reply_to=table.decision_id())
    send(smtp_port, msg, [table.address()])
    before = table.moves()

    [outcome] = process_inbound(table.service)
    assert outcome.result == "illegal" and outcome.reply_kind == REPLY_ERROR
    assert table.moves() == before == []
    [mail] = table.outbox()
    assert mail["kind"] == REPLY_ERROR and mail["recipient"] == table.player
    assert mail["seq"] == table.seq
    payload = mail["payload"]
    assert payload["subject"] == "Re: Friday race: your pick"
    assert payload["in_reply_to"] == msg["Message-ID"]
    assert payload["reply_to"] == table.address()
    text = payload["text"]
    assert "was not played" in text and "You wrote: move RR; end" in text
    for option in table.options:
        assert f"  {option}\n" in text, text
    # The answer is itself a decision mail: a reply to it answers the same decision.
    assert mail["message_id"].startswith(f"<{table.uid}.{table.seq}.{table.actor}.reply-error.")
    assert inbound._OUR_MESSAGE_ID.fullmatch(mail["message_id"])


def test_a_polish_seat_is_answered_in_polish(table: Table, smtp_port: int) -> None:
    """The answers to mailed replies speak the seat's language, the pending decision and
    the game's words included."""
    with table.service.engine.begin() as conn:
        conn.execute(sa.text("UPDATE seats SET language = 'pl'"))
    send(smtp_port, gmail_reply(table.address(), "move RR; end",
                                in_reply_to=table.decision_id()), [table.address()])
    [outcome] = process_inbound(table.service)
    assert outcome.result == "illegal"
    [mail] = table.outbox()
    text = mail["payload"]["text"]
    assert "nie została zagrana" in text and "Napisano: move RR; end" in text, text
    assert "Twoja decyzja teraz (po ruchu" in text and "wybiera kość" in text, text
    assert "Your reply" not in text and "Reply to this mail" not in text
    assert all(f"  {option}\n" in text for option in table.options), text
    send(smtp_port, gmail_reply(table.address(), "Hello everyone!"), [table.address()])
    [chat] = process_inbound(table.service)
    assert chat.result == "chat"
    text = table.outbox()[-1]["payload"]["text"]
    assert "czat gry" in text and "  Hello everyone!" in text, text


def test_a_reply_to_an_old_decision_is_told_the_game_moved_on(
    table: Table, smtp_port: int
) -> None:
    table.service.submit(table.uid, table.actor, table.seq, table.options[0])
    after = table.moves()
    current = table.service.options(table.uid, table.actor)
    msg = gmail_reply(table.address(), table.options[-1], in_reply_to=table.decision_id())
    send(smtp_port, msg, [table.address()])

    [outcome] = process_inbound(table.service)
    assert outcome.result == "moved-on"
    assert table.moves() == after
    [mail] = table.outbox()
    text = mail["payload"]["text"]
    assert "the game moved on" in text and "no longer pending" in text
    if current["yours"]:
        assert all(f"  {option}\n" in text for option in current["options"]), text
    else:
        assert "It is not your decision now" in text, text
    assert mail["seq"] == current["seq"]


def test_replies_without_a_move_or_from_robots(table: Table, smtp_port: int) -> None:
    send(smtp_port, gmail_reply(table.address(), ""), [table.address()])
    vacation = gmail_reply(table.address(), "I am away until Monday.")
    vacation["Auto-Submitted"] = "auto-replied"
    send(smtp_port, vacation, [table.address()])
    bounce = gmail_reply(table.address(), table.options[0])  # a null sender: never answered
    send(smtp_port, bounce, [table.address()], sender="")

    outcomes = process_inbound(table.service)
    assert [o.result for o in outcomes] == ["unparseable", "ignored", "ignored"]
    assert table.moves() == []
    [mail] = table.outbox()
    text = mail["payload"]["text"]
    assert "could not find a move" in text and "move RR; end" in text
    assert "Your reply began" not in text  # (words without a move are chat: test_chat.py)
    assert all(f"  {option}\n" in text for option in table.options)


def test_a_seat_whose_turn_it_is_not(table: Table, smtp_port: int) -> None:
    other = (table.actor + 1) % 3
    address = table.address(other)
    send(smtp_port, gmail_reply(address, table.options[0]), [address])
    [outcome] = process_inbound(table.service)
    assert outcome.result == "not-yours" and table.moves() == []
    [mail] = table.outbox()
    assert "it is not your decision" in mail["payload"]["text"]
    # the seat it waits for, as people count seats: from 1
    assert f"seat {table.actor + 1} (h{table.actor})" in mail["payload"]["text"]


def test_confirmations_when_asked(table: Table, smtp_port: int) -> None:
    send(smtp_port, gmail_reply(table.address(), table.options[0]), [table.address()])
    [outcome] = process_inbound(table.service, confirm=True)
    assert outcome.result == "applied" and outcome.reply_kind == REPLY_OK
    [mail] = table.outbox()
    assert mail["kind"] == REPLY_OK
    assert f"Played in your Titan Post game: {table.options[0]}" in mail["payload"]["text"]


def test_a_crashed_worker_does_not_play_a_reply_twice(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision and input are stored before submitting: after a crash between the move
    and the bookkeeping, the retaken row is recognised as already applied."""
    msg = gmail_reply(table.address(), table.options[0])  # no In-Reply-To: the current seq
    assert queue_inbound(table.service.engine, table.settings, table.address(), msg.as_bytes(),
                         sender=table.player) is not None
    real_finish = inbound._finish

    def crash(*args: Any, **kwargs: Any) -> inbound.Outcome:
        if args[4] == "applied":
            raise RuntimeError("the worker died")
        return real_finish(*args, **kwargs)

    monkeypatch.setattr(inbound, "_finish", crash)
    [outcome] = process_inbound(table.service)
    assert outcome.result == "error"
    played = table.moves()
    assert len(played) >= 1
    monkeypatch.setattr(inbound, "_finish", real_finish)
    assert process_inbound(table.service) == []  # the claim is not stale yet
    [outcome] = process_inbound(table.service, stale_after=timedelta(0))
    assert outcome.result == "duplicate"
    assert table.moves() == played
    assert table.outbox() == []


# ------------------------------------------------- one author, one reply address (issue 36)


@pytest.mark.parametrize("authors", [
    "{player}, evil@example.net",  # the player's address and another
    "evil@example.net, {player}",
    "Player <{player}>, Evil <evil@example.net>",
    "gang: {player}, evil@example.net;",  # a group of two
    "undisclosed-recipients:;",  # a group of none
    "{player} evil@example.net",  # read as one address by one parser, not by the other
])
def test_a_mail_whose_from_names_no_one_author_plays_nothing(
    table: Table, smtp_port: int, authors: str
) -> None:
    msg = gmail_reply(table.address(), table.options[0], in_reply_to=table.decision_id())
    msg.replace_header("From", authors.format(player=table.player))
    send(smtp_port, msg, [table.address()], sender="bounces@example.net")
    [outcome] = process_inbound(table.service)
    assert outcome.result == "not-one-author" and outcome.reply_kind == REPLY_ERROR
    assert table.moves() == []
    # one answer, as a bounce goes: to the envelope sender, with nothing of the game in it
    [mail] = table.outbox()
    assert mail["recipient"] == "bounces@example.net"
    text = mail["payload"]["text"]
    assert "does not name exactly one address" in text, text
    assert not any(option in text for option in table.options), text


def test_a_second_from_header_plays_nothing(table: Table, smtp_port: int) -> None:
    msg = gmail_reply(table.address(), table.options[0], in_reply_to=table.decision_id())
    raw = b"From: evil@example.net\r\n" + wire(msg)  # the player's From below it
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=10) as smtp:
        smtp.sendmail(table.player, [table.address()], raw)
    [outcome] = process_inbound(table.service)
    assert outcome.result == "not-one-author" and table.moves() == []
    assert [m["recipient"] for m in table.outbox()] == [table.player]


def test_a_mail_from_the_player_alone_is_still_played(table: Table, smtp_port: int) -> None:
    msg = gmail_reply(table.address(), table.options[0], in_reply_to=table.decision_id())
    msg.replace_header("From", f'"evil@example.net, someone" <{table.player}>,')
    send(smtp_port, msg, [table.address()])
    [outcome] = process_inbound(table.service)
    assert outcome.result == "applied"
    assert [m["input"] for m in table.moves()][:1] == [table.options[0]]


def test_one_message_naming_its_reply_address_often_is_one_reply(
    table: Table, smtp_port: int
) -> None:
    """The reply address twenty times over (the envelope in several spellings, To and Cc),
    and no Message-ID to tell copies apart: one row, one chat post, one answer."""
    address = table.address()
    spellings = [address, address.upper(), f"<{address}>", address.replace("play+", "PLAY+")]
    msg = gmail_reply(address, "Good luck, everyone!")
    del msg["Message-ID"]
    msg.replace_header("To", ", ".join([address] * 10))
    msg["Cc"] = ", ".join([address.upper()] * 10)
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=10) as smtp:
        refused = smtp.sendmail(table.player, [spellings[n % 4] for n in range(20)], wire(msg))
    assert refused == {}  # each spelling is accepted: the message is simply taken once
    assert len(table.inbound_rows()) == 1
    outcomes = process_inbound(table.service)
    assert [o.result for o in outcomes] == ["chat"]
    with table.service.engine.connect() as conn:
        posted = conn.execute(sa.text("SELECT count(*) FROM chat_messages")).scalar_one()
    assert posted == 1
    assert [m["kind"] for m in table.outbox()] == [REPLY_OK]


@pytest.mark.parametrize("authors_first", [True, False])
def test_one_message_to_several_seats_is_one_reply_for_its_authors_seat(
    table: Table, smtp_port: int, authors_first: bool
) -> None:
    """A message to three seats' reply addresses (in whatever order an MTA sends them) is
    queued once, for the seat its author plays, played there, and answered once."""
    mine = table.address()
    others = [table.address((table.actor + n) % 3) for n in (1, 2)]
    recipients = [mine, *others] if authors_first else [*others, mine]
    msg = gmail_reply(mine, table.options[0])
    msg["Cc"] = ", ".join(others)
    with smtplib.SMTP("127.0.0.1", smtp_port, timeout=10) as smtp:
        assert smtp.sendmail(table.player, [*recipients, mine.upper()], wire(msg)) == {}
    assert [r["recipient"] for r in table.inbound_rows()] == [mine]
    # the same message again, to another seat alone, is known by its Message-ID
    send(smtp_port, msg, [others[0]])
    assert len(table.inbound_rows()) == 1
    [outcome] = process_inbound(table.service, confirm=True)
    assert outcome.result == "applied"
    assert [m["input"] for m in table.moves()][:1] == [table.options[0]]
    assert [m["kind"] for m in table.outbox()] == [REPLY_OK]


def test_a_stranger_writing_to_several_seats_is_answered_once(
    table: Table, smtp_port: int
) -> None:
    addresses = [table.address(n) for n in range(3)]
    msg = gmail_reply(addresses[0], table.options[0], sender="evil@example.net")
    msg.replace_header("To", ", ".join(addresses))
    send(smtp_port, msg, addresses)
    [outcome] = process_inbound(table.service)
    assert outcome.result == "not-the-player" and table.moves() == []
    assert [m["recipient"] for m in table.outbox()] == ["evil@example.net"]


def test_imap_queues_a_message_once_for_its_authors_seat(
    table: Table, imap_box: tuple[LoopbackImap, Mailbox]
) -> None:
    """A mailbox copy per recipient (as an MTA delivers one message to two addresses), each
    naming both reply addresses: queued once, for the seat of its author, and answered once."""
    server, box = imap_box
    mine, other = table.address(), table.address((table.actor + 1) % 3)
    msg = gmail_reply(mine, table.options[0], in_reply_to=table.decision_id())
    msg["Cc"] = f"{other}, {mine}"
    box.messages = [(1, _delivered(msg, other), set()), (2, _delivered(msg, mine), set())]
    report = poll_imap(table.service.engine, table.settings, _imap_url(server))
    assert (report.fetched, len(report.queued)) == (2, 1)
    assert [r["recipient"] for r in table.inbound_rows()] == [mine]
    [outcome] = process_inbound(table.service, confirm=True)
    assert outcome.result == "applied"
    assert [m["kind"] for m in table.outbox()] == [REPLY_OK]


def test_queue_refuses_other_addresses_and_duplicates(table: Table) -> None:
    raw = gmail_reply(table.address(), "pass").as_bytes()
    with pytest.raises(NotAReplyAddress):
        queue_inbound(table.service.engine, table.settings, "x@titanpost.test", raw)
    first = queue_inbound(table.service.engine, table.settings, table.address(), raw)
    again = queue_inbound(table.service.engine, table.settings, table.address(), raw)
    assert first is not None and again is None
    assert len(table.inbound_rows()) == 1


def test_claims_are_atomic_between_concurrent_workers(table: Table) -> None:
    engine, settings = table.service.engine, table.settings
    ids = set()
    for _ in range(24):
        row = queue_inbound(engine, settings, table.address(),
                            gmail_reply(table.address(), "pass").as_bytes())
        assert row is not None
        ids.add(row)
    claimed: dict[str, list[int]] = {f"w{i}": [] for i in range(4)}
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work(name: str) -> None:
        try:
            start.wait()
            while True:
                _, got = claim_inbound(engine, name, 3)
                if not got:
                    return
                claimed[name].extend(got)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(name,)) for name in claimed]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    every = [row for rows in claimed.values() for row in rows]
    assert sorted(every) == sorted(ids)  # each row claimed exactly once
    assert len(every) == len(set(every))
    # A claim older than stale_after is taken over (its worker died).
    _, again = claim_inbound(engine, "late", 100, stale_after=timedelta(0))
    assert sorted(again) == sorted(ids)


# --------------------------------------------------------------------------- the IMAP poller


@dataclass
class Mailbox:
    messages: list[tuple[int, bytes, set[str]]] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    downloaded: list[int] = field(default_factory=list)
    """The UIDs whose whole message was sent to a client (BODY.PEEK[])."""
    tells_sizes: bool = True
    """Whether a FETCH of RFC822.SIZE is answered (a server may leave an item out)."""


class LoopbackImap(socketserver.ThreadingTCPServer):
    r"""A minimal IMAP4rev1 server on 127.0.0.1 for the poller's tests, in memory.

    It implements only what imaplib and the poller use: the greeting, CAPABILITY, LOGIN (one
    user), SELECT of INBOX, UID SEARCH UNSEEN, UID FETCH <uid,uid...> (RFC822.SIZE), UID FETCH
    <uid> (BODY.PEEK[]), UID STORE <uid> +FLAGS (<flags>), NOOP and LOGOUT. It is no general
    IMAP server (no literals from the client, no other mailboxes or search keys): it lets these
    tests see every command and play a server that tells no sizes. The same poller is tested
    against a real Dovecot in tests/test_mail_servers.py.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, user: str, password: str, mailbox: Mailbox) -> None:
        self.user, self.password, self.mailbox = user, password, mailbox
        super().__init__(("127.0.0.1", 0), _ImapHandler)

    @property
    def port(self) -> int:
        port: int = self.server_address[1]
        return port


_TOKEN = re.compile(rb'"((?:[^"\\]|\\.)*)"|(\([^)]*\))|(\S+)')


class _ImapHandler(socketserver.StreamRequestHandler):
    server: LoopbackImap

    def out(self, line: bytes) -> None:
        self.wfile.write(line + b"\r\n")

    def handle(self) -> None:
        box = self.server.mailbox
        self.out(b"* OK [CAPABILITY IMAP4rev1 AUTH=PLAIN] loopback IMAP ready")
        authed = False
        while True:
            line = self.rfile.readline()
            if not line:
                return
            words = [
                re.sub(rb"\\(.)", rb"\1", m[1]) if m[1] is not None else (m[2] or m[3])
                for m in _TOKEN.finditer(line.rstrip(b"\r\n"))
            ]
            tag, command, args = words[0], words[1].upper(), words[2:]
            box.commands.append(command.decode() + " " + b" ".join(args[:1]).decode())
            if command == b"CAPABILITY":
                self.out(b"* CAPABILITY IMAP4rev1 AUTH=PLAIN")
            elif command == b"NOOP":
                pass
            elif command == b"LOGOUT":
                self.out(b"* BYE loopback IMAP logging out")
                self.out(tag + b" OK LOGOUT completed")
                return
            elif command == b"LOGIN":
                if [a.decode() for a in args] != [self.server.user, self.server.password]:
                    self.out(tag + b" NO [AUTHENTICATIONFAILED] Invalid credentials")
                    continue
                authed = True
            elif not authed:
                self.out(tag + b" BAD log in first")
                continue
            elif command == b"SELECT":
                if args[0].upper() != b"INBOX":
                    self.out(tag + b" NO [NONEXISTENT] no such mailbox")
                    continue
                self.out(b"* FLAGS (\\Seen)")
                self.out(b"* %d EXISTS" % len(box.messages))
                self.out(b"* 0 RECENT")
                self.out(tag + b" OK [READ-WRITE] SELECT completed")
                continue
            elif command == b"UID":
                if not self.uid_command(tag, args[0].upper(), args[1:]):
                    continue
            else:
                self.out(tag + b" BAD not implemented here")
                continue
            self.out(tag + b" OK " + command + b" completed")

    def uid_command(self, tag: bytes, sub: bytes, args: list[bytes]) -> bool:
        box = self.server.mailbox
        if sub == b"SEARCH" and [a.upper() for a in args] == [b"UNSEEN"]:
            found = [b"%d" % uid for uid, _, flags in box.messages if "\\Seen" not in flags]
            self.out(b" ".join([b"* SEARCH", *found]))
            return True
        index = {uid: n for n, (uid, _, _) in enumerate(box.messages)}
        if sub == b"FETCH" and args[1:] == [b"(RFC822.SIZE)"]:
            wanted = [int(u) for u in args[0].split(b",") if u.isdigit()]
            for uid in wanted if box.tells_sizes else []:
                if uid in index:
                    size = len(box.messages[index[uid]][1])
                    self.out(b"* %d FETCH (UID %d RFC822.SIZE %d)" % (index[uid] + 1, uid, size))
            return True
        uid = int(args[0]) if args and args[0].isdigit() else -1
        if uid not in index:
            self.out(tag + b" NO no such message")
            return False
        seqno = index[uid] + 1
        _, raw, flags = box.messages[index[uid]]
        if sub == b"FETCH" and args[1].upper() == b"(BODY.PEEK[])":
            box.downloaded.append(uid)
            self.wfile.write(b"* %d FETCH (UID %d BODY[] {%d}\r\n" % (seqno, uid, len(raw)))
            self.wfile.write(raw + b")\r\n")
            return True
        if sub == b"STORE" and args[1].upper() == b"+FLAGS" and args[2].startswith(b"("):
            flags.update(args[2].strip(b"()").decode().split())
            listed = " ".join(sorted(flags)).encode()
            self.out(b"* %d FETCH (UID %d FLAGS (%s))" % (seqno, uid, listed))
            return True
        self.out(tag + b" BAD not implemented here")
        return False


@pytest.fixture
def imap_box() -> Iterator[tuple[LoopbackImap, Mailbox]]:
    box = Mailbox()
    server = LoopbackImap("titan post", 'p@ss "word"', box)
    serve_in_thread(server)
    try:
        yield server, box
    finally:
        server.shutdown()
        server.server_close()


def _imap_url(server: LoopbackImap) -> str:
    return f"imap://titan%20post:p%40ss%20%22word%22@127.0.0.1:{server.port}/INBOX"


def _delivered(msg: EmailMessage, to: str) -> bytes:
    """As a mailbox stores it: the MTA's Delivered-To on top, the To left as the client set it."""
    return b"Delivered-To: " + to.encode() + b"\r\n" + msg.as_bytes()


def test_imap_poll_queues_replies_and_marks_them_seen(
    table: Table, imap_box: tuple[LoopbackImap, Mailbox]
) -> None:
    server, box = imap_box
    reply = gmail_reply("titanpost@titanpost.test", table.options[0],
                        in_reply_to=table.decision_id(), sender=table.player)
    stranger = gmail_reply("titanpost@titanpost.test", "Buy cheap dice!")
    old = gmail_reply(table.address(), table.options[-1])
    box.messages = [
        (101, _delivered(reply, table.address()), set()),
        (102, stranger.as_bytes(), set()),
        (105, old.as_bytes(), {"\\Seen"}),
    ]
    report = poll_imap(table.service.engine, table.settings, _imap_url(server))
    assert (report.fetched, len(report.queued), report.ignored) == (2, 1, 1)
    assert all("\\Seen" in flags for _, _, flags in box.messages)
    assert [c for c in box.commands if c.startswith("UID")] == [
        "UID SEARCH", "UID FETCH", "UID FETCH", "UID STORE", "UID FETCH", "UID STORE"
    ]  # the sizes of both unseen messages, then each message
    [row] = table.inbound_rows()
    assert (row["recipient"], row["source"], row["sender"]) == (
        table.address(), "imap", table.player
    )

    again = poll_imap(table.service.engine, table.settings, _imap_url(server))
    assert (again.fetched, again.queued) == (0, [])

    [outcome] = process_inbound(table.service)
    assert outcome.result == "applied"
    assert table.moves()[0]["input"] == table.options[0]


def test_imap_poll_command(table: Table, imap_box: tuple[LoopbackImap, Mailbox]) -> None:
    """``titanpost mail poll`` fetches, queues and applies (an illegal reply gets its answer)."""
    from cli.main import main

    server, box = imap_box
    msg = gmail_reply(table.address(), "pick nothing", in_reply_to=table.decision_id())
    box.messages = [(7, msg.as_bytes(), set())]
    env = base_env(str(table.service.engine.url.render_as_string(hide_password=False)),
                   TITANPOST_MAIL_DOMAIN=DOMAIN, TITANPOST_IMAP_URL=_imap_url(server))
    result = CliRunner().invoke(main, ["mail", "poll"], env=env)
    assert result.exit_code == 0, result.output
    assert "fetched 1, queued 1, not for a reply address 0" in result.output
    assert re.search(r"reply \d+: illegal \(pick nothing\), answered with reply-error",
                     result.output), result.output
    assert [m["kind"] for m in table.outbox() if m["kind"].startswith("reply-")] == [REPLY_ERROR]
    assert table.moves() == []

    bad = dict(env, TITANPOST_IMAP_URL=_imap_url(server).replace("p%40ss", "wrong"))
    result = CliRunner().invoke(main, ["mail", "poll"], env=bad)
    assert result.exit_code == 1 and "Invalid credentials" in result.output


def test_imap_urls() -> None:
    where = parse_imap_url("imaps://me%40example.org:s3cr%3At@imap.example.org/Game%20Replies")
    assert (where.secure, where.host, where.port) == (True, "imap.example.org", 993)
    assert (where.user, where.password, where.mailbox) == (
        "me@example.org", "s3cr:t", "Game Replies"
    )
    assert "s3cr" not in repr(where)
    plain = parse_imap_url("imap://u:p@localhost:1143")
    assert (plain.secure, plain.port, plain.mailbox) == (False, 1143, "INBOX")
    for bad in ("pop3://u:p@h/", "imap://h/INBOX", "imaps://u@h/", "imap://u:p@h:port/"):
        with pytest.raises(ImapUrlError):
            parse_imap_url(bad)


# ------------------------------------------------------------------ `titanpost mail listen`


def test_listen_command_receives_and_applies(
    table: Table, titanpost: str, tmp_path: Path
) -> None:
    """The installed command: it listens, refuses at RCPT, queues, and its worker applies
    (on each database)."""
    import os

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TITANPOST_")}
    env.update(base_env(table.service.engine.url.render_as_string(hide_password=False),
                        TITANPOST_MAIL_DOMAIN=DOMAIN))
    log = (tmp_path / "listen.log").open("w")
    proc = subprocess.Popen(
        [titanpost, "mail", "listen", "--port", str(port), "--interval", "0.5"],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "listen.log").read_text()
                assert time.monotonic() < deadline, "the listener did not start"
                time.sleep(0.2)
        with pytest.raises(smtplib.SMTPRecipientsRefused):
            send(port, gmail_reply("nobody@titanpost.test", "pass"), ["nobody@titanpost.test"])
        send(port, gmail_reply(table.address(), table.options[0]), [table.address()])
        while not table.moves():
            assert time.monotonic() < deadline, (tmp_path / "listen.log").read_text()
            time.sleep(0.2)
        assert table.moves()[0]["input"] == table.options[0]
        proc.terminate()  # SIGTERM, as systemd and container runtimes stop it: a clean exit
        assert proc.wait(10) == 0, (tmp_path / "listen.log").read_text()
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()
