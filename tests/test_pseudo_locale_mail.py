"""Untranslated text cannot hide in a mail (issue 23): every kind of mail of every registered
game (:data:`app.games.GAMES`), taken from the code's own lists
(:data:`app.mail.notify.SHARED_KINDS` and the decision mails the game declares,
``GameUI.mail_kinds``), rendered in the pseudo-locale of :mod:`tests.test_pseudo_locale`: the
Subject, the From's display name, the text part and the HTML part (with the attributes a
reader sees) show no word outside the catalogue's markers.

The mails are those a real race writes: a game of each played to its end by the computer's
choices, with the clock's notices written as the clock writes them, a daily digest, a chat
message, and mailed-in replies the inbound worker answers (refused, unreadable, from a
stranger, a chat line, a played move confirmed).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.headerregistry import Address
from email.utils import make_msgid
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import col, select

from app.core.models import Game, Move, OutboxMail, Seat
from app.features.chat import messages as chat
from app.features.signin.signins import ask_link
from app.games import GAMES
from app.games.ui import game_ui
from app.mail.addresses import reply_address
from app.mail.inbound import process_inbound
from app.mail.inbound_queue import queue_inbound
from app.mail.message import build_message
from app.mail.notify import (
    NOTICE_KINDS,
    SHARED_KINDS,
    decision_kinds,
    enqueue_notice,
    write_digests,
)
from app.mail.render import MailRenderer, Rendered
from tests.dbutil import migrated_sqlite
from tests.gamefixtures import game_fixture
from tests.test_mail_out import Post, make_post
from tests.test_pseudo_locale import _unmarked
from tests.test_pseudo_locale import pseudo as pseudo  # the fixture

ANN, BOLEK = "ann@example.com", "bolek@example.com"
STRANGER = "stranger@example.org"


def race_setup(game: str) -> dict[str, Any]:
    """What a sample race of ``game`` is created with (its test fixture's ``mail_race``)."""
    return {**game_fixture(game).mail_race, "rules_name": game}



@pytest.fixture
def post(tmp_path: Path, pseudo: None) -> Iterator[Post]:
    with migrated_sqlite(tmp_path) as url:
        made = make_post(url, None, TITANPOST_MAIL_IMAGES="link")
        yield made
        made.service.engine.dispose()


def _kinds(game: str) -> set[str]:
    """Every kind of mail ``game`` may send, from the code's own lists."""
    declared = set(game_ui(game).mail_kinds)
    assert declared and declared <= decision_kinds()
    return set(SHARED_KINDS) | declared


NOTATION: set[str] = set()
"""The words of every option offered in the races so far: the notation a reply is written
in, the same in every language (the mails quote it as it is)."""


def _answer(post: Post, uid: str) -> bool:
    """The computer's choice for the first seat to act; False once nobody is to act."""
    state = post.service.state(uid, None)
    acting = state["game"]["to_act"]
    if not acting:
        return False
    for option in post.service.options(uid, acting[0])["options"]:
        NOTATION.update(re.findall(r"[^\W\d_]+", str(option)))
    with post.service.session() as s:
        loaded = post.service.load(s, uid)
        move = loaded.rules.bot_move(loaded.state, acting[0])
    post.service.submit(uid, acting[0], int(state["seq"]), move)
    return True


def _seats(post: Post, uid: str) -> tuple[Game, list[Seat]]:
    with post.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        seats = list(s.exec(select(Seat).where(Seat.game_id == game.id)
                            .order_by(col(Seat.position))).all())
        return game, seats


def _notices(post: Post, uid: str) -> None:
    """Each of the clock's notices to both people, with the payloads the clock writes."""
    game, seats = _seats(post, uid)
    seq = int(post.service.state(uid, None)["seq"])
    now = datetime(2026, 11, 27, 9, 0, tzinfo=UTC)
    payloads: dict[str, dict[str, Any]] = {
        "reminder": {"due_at": (now + timedelta(hours=5)).isoformat(), "action": "bot",
                     "hours": 19},
        "deadline": {"action": "pass", "inputs": ["pass"], "input": "pass",
                     "handover": None, "missed": 1},
        "paused": {"reason": "by its owner", "by": "owner", "position": 0},
        "resumed": {"paused_seconds": 7200, "by": "owner", "position": 0},
        "away": {"position": 0, "player": "Ann", "from": "2026-12-01", "until": "2026-12-08",
                 "mode": "stretch"},
        "outage": {"from": now.isoformat(), "until": (now + timedelta(hours=3)).isoformat(),
                   "due_at": (now + timedelta(days=1)).isoformat()},
        "handover": {"position": 1, "player": "Bolek", "to": "computer", "missed": 2},
        "rollback": {"to": 3, "from": seq, "by": "admin"},
        "takeback": {"takeback": 1, "player": "Ann", "position": 0, "move": seq,
                     "input": "pick red", "due_at": (now + timedelta(days=1)).isoformat(),
                     "link": "http://localhost/t/token"},
        "takeback_result": {"takeback": 1, "status": "refused", "move": seq, "by": "Bolek"},
        "rematch": {"player": "Ann", "rematch": uid, "name": "Wyścig (2)"},
        "address-test": {"asked_at": now.isoformat()},
        "unreachable": {"position": 1, "player": "Bolek", "since": now.isoformat(),
                        "due_at": (now + timedelta(days=1)).isoformat()},
    }
    assert set(payloads) == set(NOTICE_KINDS), "a new notice: give it its payload here"
    with post.service.session(write=True) as s:
        for seat in seats:
            if not seat.email:
                continue
            for kind, payload in payloads.items():
                enqueue_notice(s, post.settings, game=game, seat=seat, kind=kind, seq=seq,
                               payload=payload)
            enqueue_notice(s, post.settings, game=game, seat=seat, kind="deadline", seq=seq,
                           payload={"action": "bot", "inputs": [], "handover": "computer",
                                    "missed": 2}, extra="handed")
        s.commit()


def _digest(post: Post, uid: str) -> None:
    """A daily digest for whoever is to act (their mail setting set to the digest)."""
    _, seats = _seats(post, uid)
    acting = set(post.service.state(uid, None)["game"]["to_act"])
    with post.service.session(write=True) as s:
        for seat in seats:
            if seat.position in acting and seat.email:
                row = s.get(Seat, seat.id)
                assert row is not None
                row.notify = {**(row.notify or {}), "mail": "digest"}
                s.add(row)
        s.commit()
    assert write_digests(post.service) >= 1


def _replies(post: Post, uid: str) -> None:
    """Mailed-in answers of each sort, processed by the inbound worker (which writes the
    ``reply-error`` and ``reply-ok`` mails in the pseudo-locale): no move, a word of the
    notation that is no input, a stranger's, a chat line, another seat's move (not yours),
    the same move twice (the game moved on), and a move confirmed."""
    acting = post.service.state(uid, None)["game"]["to_act"]
    position = acting[0] if acting else 0
    _, seats = _seats(post, uid)
    person = next(seat for seat in seats if seat.position == position)
    other = next(seat for seat in seats if seat.position != position and seat.email)
    legal = post.service.options(uid, position)["options"] if acting else []
    bodies = [(person, "What a race!"), (person, "move 99 zzz"), (person, "pick zzz"),
              (person, "chat: good luck everybody")]
    if legal:
        bodies += [(other, legal[0]), (person, legal[0]), (person, legal[0])]
    for number, (seat, body) in enumerate(bodies):
        _mail_in(post, uid, seat, body, subject=bool(number % 2))
    _mail_in(post, uid, person, "pick 1", sender=STRANGER)
    process_inbound(post.service, confirm=True)


def _mail_in(post: Post, uid: str, seat: Seat, body: str, *, subject: bool = True,
             sender: str | None = None) -> None:
    """A mail to the seat's reply address, queued for the inbound worker (with a subject of
    its own, or none: the answer's is then ours)."""
    settings = post.settings
    to = reply_address(settings.secret_key, settings.mail_domain, uid, seat.position)
    sender = sender or seat.email
    said = "Subject: Re: the race\r\n" if subject else ""
    raw = (f"From: {sender}\r\nTo: {to}\r\n{said}"
           f"Message-ID: {make_msgid(domain='example.com')}\r\n\r\n{body}\n").encode()
    queue_inbound(post.service.engine, settings, to, raw, sender=sender)


def _race(post: Post, game: str) -> str:
    """A race of ``game`` played to its end, with every sort of mail written on the way."""
    created = post.new_game(seats=[{"email": ANN, "name": "Ann"},
                                   {"email": BOLEK, "name": "Bolek", "language": "pl"},
                                   {"bot": True}], name="Wyścig", **race_setup(game))
    uid = str(created["game"])
    chat.post(post.service, uid, 0, "Hello from Ann")
    for _ in range(12):
        _answer(post, uid)
    _notices(post, uid)
    _replies(post, uid)
    for _ in range(5000):
        if not _answer(post, uid):
            break
    _, seats = _seats(post, uid)
    _mail_in(post, uid, seats[1], "pass")  # (the race is over: it takes no moves)
    process_inbound(post.service, confirm=True)
    abandoned = post.new_game(seats=[{"email": ANN, "name": "Ann"},
                                     {"email": BOLEK, "name": "Bolek", "language": "pl"},
                                     {"bot": True}],
                              name="Wyścig", **race_setup(game))
    _digest(post, abandoned["game"])
    post.service.abandon(abandoned["game"], abandoned["creator_token"])
    for address in (ANN, BOLEK):  # a sign-in link, in the seat's language
        ask_link(post.service, address, "127.0.0.1", "en")
    return uid


def _data(post: Post) -> set[str]:
    """What may stand outside the markers: the test's names and addresses, the games' ids,
    the moves' notation (the words a reply is written in, the same in every language), the
    chat lines and the reply the test wrote."""
    found = {"Ann", "Bolek", "Wyścig", "example", "com", "org", "stranger", "ann", "bolek",
             "Hello", "from", "good", "luck", "everybody", "What", "race", "zzz", "Re", "the",
             "chat", "move", "pick", "red",
             "UTC"}
    with post.service.session() as s:
        for uid in s.exec(select(Game.uid)).all():
            found |= {uid, uid[:8]}
            rules = post.service.load(s, uid).rules
            inputs = s.exec(select(Move.input).join(Game, col(Game.id) == col(Move.game_id))
                            .where(Game.uid == uid)).all()
            for text in inputs:  # (as the log shows it, a secret part hidden)
                found |= set(re.findall(r"[^\W\d_]+", f"{text} {rules.public_input(text)}"))
        for payload in s.exec(select(OutboxMail.payload)
                              .where(OutboxMail.kind == "signin")).all():
            found |= set(re.findall(r"[^\W\d_]+", str(payload.get("token", ""))))
    return found | NOTATION


def _read(post: Post, row: OutboxMail, mail: Rendered) -> dict[str, str]:
    """What a person reads of the mail: its Subject, the From's display name, both parts."""
    message = build_message(post.settings, row, mail)
    sender = message["From"].addresses[0]
    assert isinstance(sender, Address)
    return {"Subject": str(message["Subject"]), "From": sender.display_name,
            "text": mail.text, "html": mail.html}


def _unmarked_mails(post: Post, game: str) -> tuple[set[str], dict[str, list[str]]]:
    """A race's every mail read in the pseudo-locale: the kinds seen, and the words outside
    the markers by kind and part."""
    _race(post, game)
    renderer = MailRenderer(post.service)
    data = _data(post)
    with post.service.session() as s:
        seen: set[str] = set()
        unmarked: dict[str, list[str]] = {}
        for row in s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all():
            mail = renderer.render(row, always=True, session=s)
            seen.add(row.kind)
            for part, text in _read(post, row, mail).items():
                words = _unmarked(text, data)
                if words:
                    unmarked.setdefault(f"{row.kind} {part}", []).extend(words)
    return seen, unmarked


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_mail_kind_shows_no_words_outside_the_catalogue(post: Post, game: str) -> None:
    seen, unmarked = _unmarked_mails(post, game)
    assert seen == _kinds(game), sorted(seen ^ _kinds(game))
    assert not unmarked, "\n".join(f"{name}: {sorted(set(words))}"
                                   for name, words in sorted(unmarked.items()))


@pytest.mark.parametrize("game", sorted(GAMES))
def test_a_refused_moves_reason_is_catalogue_text(post: Post, game: str) -> None:
    """The engines' reasons for refusing a mailed move are catalogue text in the answer."""
    _, unmarked = _unmarked_mails(post, game)
    assert not any(name.startswith("reply-error") for name in unmarked), sorted(unmarked)


@pytest.mark.parametrize("game", sorted(GAMES))
def test_the_kinds_a_game_mails_are_those_its_ui_names(game: str) -> None:
    """The decision mails a game declares (``GameUI.mail_kinds``) are the ones its UI maps its
    decisions to (a new one would be left out of the test above otherwise), from the sample
    decisions of every kind its test fixture gives."""
    ui = game_ui(game)
    mailed = {ui.mail_kind(decision) for decision in game_fixture(game).decisions}
    assert mailed - {None} == set(ui.mail_kinds)


def test_the_great_races_plan_has_a_mail_of_its_own() -> None:
    assert game_ui("great-race").mail_kind({"kind": "plan"}) == "plan"
