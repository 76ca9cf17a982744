"""Rendered mails stay byte for byte what they were, and nothing of one mail reaches another.

``tests/data/mails/`` holds the subject, text and HTML of mails of both games in English and
Polish (the decision, "started", a reminder, a pause, a passed deadline and a digest), rendered
by the code before the renderer kept what is the same for every mail of a kind (inlined CSS,
compiled templates, the game's words). The games are dealt from seeds and their ids and seat
secrets set to fixed values, so every link, token and reply address is the same each run.
``TITANPOST_WRITE_MAIL_FIXTURES=1`` writes the files again (only when a change of the mails is
meant).

The second test renders mails of different games, seats and languages in a row with one renderer
(as the sender does) and checks that each carries only its own links, names and addresses.
"""

from __future__ import annotations

import email.policy
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from email.generator import BytesGenerator
from email.message import EmailMessage
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import upgrade
from app.core.models import Game, OutboxMail, Seat
from app.games.ui import game_ui
from app.mail.images import read_picture_token
from app.mail.message import MAIL_POLICY
from app.mail.notify import insert_rows, message_id
from app.mail.render import MailRenderer, Rendered, build_message
from app.service import GameService
from app.web.linktokens import (
    read_game_token,
    read_option_token,
    read_unsubscribe_token,
)

FIXTURES = Path(__file__).parent / "data" / "mails"
WRITE = os.environ.get("TITANPOST_WRITE_MAIL_FIXTURES") == "1"
BASE = "https://titanpost.example.org"
SECRET = "fixture-secret-key-0123456789abcdef"
DOMAIN = "titanpost.example"
DUE = "2026-03-04T14:30:00+00:00"


def settings_for(url: str) -> Settings:
    return Settings.from_env({
        "TITANPOST_MAIL_IMAGES": "link",
        "TITANPOST_DATABASE_URL": url,
        "TITANPOST_ENV": "test",
        "TITANPOST_SECRET_KEY": SECRET,
        "TITANPOST_BASE_URL": BASE,
        "TITANPOST_MAIL_DOMAIN": DOMAIN,
        "TITANPOST_MAIL_FROM": "Titan Post <post@titanpost.example>",
    })


@dataclass(frozen=True)
class Race:
    """A game to mail about: its rules, seed, circuits and players."""

    label: str
    rules: str
    seed: int
    circuits: tuple[str, ...]
    players: tuple[tuple[str, str, str], ...]  # (email, name, language)
    moves: int


RACES = (
    Race("titan", "titan-race", 1, ("kaldheira",),
         (("ann@example.com", "Ann", "en"), ("bolek@example.com", "Bolek", "pl")), 21),
    Race("great", "great-race", 1, ("alger",),
         (("cyryl@example.com", "Cyryl", "pl"), ("dora@example.com", "Dora", "en")), 7),
)


def uid_of(n: int) -> str:
    """The fixed id of the ``n``-th race (ids are 32 hex digits)."""
    return f"{'ab'[n]}{n}" * 16


def seat_secret(race: Race, position: int) -> str:
    return f"seat-secret-{race.label}-{position}".ljust(40, "x")


def computer_move(service: GameService, uid: str) -> bool:
    """The computer answers the pending decision; False when none is pending."""
    state = service.state(uid, 0)
    acting = state["game"]["to_act"]
    if not acting:
        return False
    with service.session() as s:
        loaded = service._load(s, uid)
        choice = loaded.rules.bot_move(loaded.state, acting[0])
    service.submit(uid, acting[0], state["seq"], choice)
    return True


def set_up(service: GameService, race: Race, n: int) -> None:
    """The race created, played ``race.moves`` decisions in, then given a fixed id and fixed
    seat secrets (so its mails' links are the same every run)."""
    created = service.create_game(
        seats=[*({"email": e, "name": name, "language": lang} for e, name, lang in race.players),
               {"bot": True}],
        name=f"Race {race.label}", circuits=list(race.circuits), seed=race.seed,
        rules_name=race.rules)
    for invitation in created["invitations"]:
        service.accept(invitation["invite_token"])
    service.start(created["game"], created["creator_token"])
    for _ in range(race.moves):
        if not computer_move(service, created["game"]):
            break
    with service.session(write=True) as s:
        game = s.exec(select(Game).where(Game.uid == created["game"])).one()
        game.uid = uid_of(n)
        for seat in s.exec(select(Seat).where(Seat.game_id == game.id)).all():
            seat.secret = seat_secret(race, seat.position)
            s.add(seat)
        s.add(game)
        s.commit()


def outbox_rows(s: Session) -> list[dict[str, Any]]:
    """One of each kind of mail for every human seat of every game, and a digest."""
    rows: list[dict[str, Any]] = []
    digest_games = []
    for game in s.exec(select(Game).order_by(col(Game.id))).all():
        seats = s.exec(select(Seat).where(Seat.game_id == game.id)
                       .order_by(col(Seat.position))).all()
        for seat in seats:
            if seat.is_bot:
                continue
            kinds = {"started": {"started": True}, "reminder": {"due_at": DUE, "action": "bot"},
                     "paused": {"reason": "by its owner"},
                     "deadline": {"action": "pass", "inputs": ["pass"], "missed": 1}}
            for kind, payload in kinds.items():
                rows.append({"game_id": game.id, "seq": None, "kind": kind,
                             "recipient": seat.email, "seat_id": seat.id, "payload": payload,
                             "message_id": message_id(game.uid, 0, seat.position, kind, DOMAIN)})
            digest_games.append({"game_id": game.id, "position": seat.position})
    rows.append({"game_id": None, "seq": None, "kind": "digest", "recipient": "ann@example.com",
                 "seat_id": None, "message_id": f"<digest.fixture@{DOMAIN}>",
                 "payload": {"games": digest_games, "language": "pl", "date": "2026-03-04"}})
    return rows


def with_head(s: Session, service: GameService, rows: list[dict[str, Any]]) -> None:
    """Each game row about the log's head, and a decision mail for whoever is to answer."""
    extra = []
    for row in rows:
        if row["game_id"] is None:
            continue
        game = s.get(Game, row["game_id"])
        assert game is not None
        loaded = service.load(s, game.uid)
        row["seq"] = loaded.seq
        seat = s.get(Seat, row["seat_id"])
        assert seat is not None
        row["message_id"] = message_id(game.uid, loaded.seq, seat.position, row["kind"], DOMAIN)
        if row["kind"] == "started" and loaded.state is not None \
                and seat.position in loaded.rules.to_act(loaded.state):
            kind = game_ui(game.ruleset).mail_kind(loaded.rules.pending(loaded.state))
            extra.append(row | {"kind": kind, "payload": {},
                                "message_id": message_id(game.uid, loaded.seq, seat.position,
                                                         kind, DOMAIN)})
    rows.extend(extra)


@pytest.fixture(scope="module")
def mails(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[tuple[str, Rendered,
                                                                           OutboxMail]]]:
    """Every fixture mail, rendered by one renderer in a row (as a sender's batch is)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('mails') / 'mail.db'}"
    upgrade(url)
    settings = settings_for(url)
    service = GameService(make_engine(url), settings)
    for n, race in enumerate(RACES):
        set_up(service, race, n)
    service.engine.dispose()
    service = GameService(make_engine(url), settings)  # nothing kept under the old ids
    with service.session(write=True) as s:
        rows = outbox_rows(s)
        with_head(s, service, rows)
        insert_rows(s, rows)
        s.commit()
    renderer = MailRenderer(service)
    found = []
    with service.session() as s:  # one session for them all, as the sender renders a batch
        rows_read = list(s.exec(select(OutboxMail).order_by(col(OutboxMail.id))).all())
        renderer.prefetch(s, rows_read)
        for row in rows_read:
            game = s.get(Game, row.game_id) if row.game_id is not None else None
            seat = s.get(Seat, row.seat_id) if row.seat_id is not None else None
            name = (f"{RACES[int(game.uid[1])].label}-{seat.position}-{row.kind}" if game and seat
                    else f"{row.kind}-{row.recipient.split('@')[0]}")
            found.append((name, renderer.render(row, always=True, session=s), row))
    yield found
    service.engine.dispose()


TIMED_TOKEN = re.compile(r"(/[A-Za-z]+/\.?[A-Za-z0-9_\-]+)\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}"
                         r"(?![A-Za-z0-9_\-])")
"""A timed link token (``/g/``, ``/l/``): its payload, then the time it was signed and the
signature, which change with the second the mail is rendered (the leak test verifies them)."""


def untimed(text: str) -> str:
    return TIMED_TOKEN.sub(r"\1.<signed-at>.<signature>", text)


def as_files(mail: Rendered) -> dict[str, str]:
    return {"subject.txt": mail.subject + "\n", "txt": untimed(mail.text),
            "html": untimed(mail.html)}


def test_mails_are_rendered_as_they_were(mails: list[tuple[str, Rendered, OutboxMail]]) -> None:
    kinds = {(name.split("-")[0], mail.lang, mail.kind) for name, mail, _ in mails}
    assert {("titan", "en", "started"), ("titan", "pl", "reminder"),
            ("great", "en", "paused"), ("great", "pl", "deadline")} <= kinds, kinds
    assert len({mail.kind for _, mail, _ in mails}) >= 7
    for name, mail, _ in mails:
        assert mail.text and mail.html, name  # (rendered even where it would be skipped)
        for suffix, content in as_files(mail).items():
            path = FIXTURES / f"{name}.{suffix}"
            if WRITE:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content, encoding="utf-8", newline="")
                continue
            with path.open(encoding="utf-8", newline="") as saved:
                assert saved.read() == content, path.name
    if WRITE:
        pytest.skip("fixtures written")


LINK = re.compile(r"/([glu])/([A-Za-z0-9_.\-]+)")
PICTURE = re.compile(r"/board/([A-Za-z0-9_.\-]+)\.png")


def test_each_mail_carries_only_its_own_links_and_names(
        mails: list[tuple[str, Rendered, OutboxMail]]) -> None:
    """Rendered in a row by one renderer, mails of two games, four seats and two languages:
    every link and picture address is its own seat's (signed with its secret, naming its game
    and seat, its picture in its language), its unsubscribe address its own, and the only
    players' names it shows its own game's."""
    secrets = {(uid_of(n), position): seat_secret(race, position)
               for n, race in enumerate(RACES) for position in range(len(race.players))}
    names = {uid_of(n): {name for _, name, _ in race.players} for n, race in enumerate(RACES)}
    languages = {email: lang for race in RACES for email, _, lang in race.players}
    checked = 0
    for name, mail, row in mails:
        if mail.game_uid is None or mail.position is None:
            continue
        own = (mail.game_uid, mail.position)
        both = mail.text + unescape(mail.html)
        links = LINK.findall(both)
        assert any(kind == "g" for kind, _ in links), name
        for kind, token in links:
            if kind == "g":
                assert read_game_token(token, SECRET, secrets[own]) == own, name
            elif kind == "l":
                link = read_option_token(token, SECRET, secrets[own])
                assert (link.game, link.seat) == own, name
        for token in PICTURE.findall(both):
            picture = read_picture_token(SECRET, token)
            assert (picture.game, picture.seat, picture.lang) == (*own, mail.lang), name
        assert mail.unsubscribe_url is not None, name
        unsubscribe = mail.unsubscribe_url.removeprefix(f"{BASE}/u/")
        assert read_unsubscribe_token(unsubscribe, SECRET, secrets[own]) == own, name
        for other_uid, other_names in names.items():
            if other_uid != mail.game_uid:
                assert other_uid not in both, (name, other_uid)
                for other_name in other_names - names[mail.game_uid]:
                    assert other_name not in both, (name, other_name)
        assert mail.lang == languages[row.recipient], name
        checked += 1
    assert checked >= 16


BOUNDARY = re.compile(rb"===============\d+==")


def test_the_quick_header_factory_builds_the_same_messages(
        mails: list[tuple[str, Rendered, OutboxMail]]) -> None:
    """Built with the mail policy's header factory (header classes made once, recent headers
    kept), every message is byte for byte what the standard one builds (its random MIME
    boundaries aside), with an inline picture too; and so is what goes over SMTP (lines ending
    in CRLF: the headers it keeps are folded once for each way of ending lines)."""
    standard = email.policy.default.clone(max_line_length=998)
    assert standard.header_factory is not MAIL_POLICY.header_factory
    settings = settings_for("sqlite://")
    for name, mail, row in mails * 2:  # the second time from the factory's kept headers
        for images in ({}, {f"board.{name}@{DOMAIN}": b"\x89PNG\r\n"}):
            pictured = replace(mail, images=images)
            quick = build_message(settings, row, pictured)
            plain = build_message(settings, row, pictured, policy=standard)
            assert BOUNDARY.sub(b"-", bytes(quick)) == BOUNDARY.sub(b"-", bytes(plain)), name
            assert BOUNDARY.sub(b"-", _smtp_bytes(quick)) == BOUNDARY.sub(
                b"-", _smtp_bytes(plain)), name
            assert b"\r" not in bytes(quick).split(b"\n\n")[0], name  # (no CRLF fold kept)


def _smtp_bytes(message: EmailMessage) -> bytes:
    """The message as ``smtplib.SMTP.send_message`` writes it (CRLF line ends)."""
    out = io.BytesIO()
    BytesGenerator(out).flatten(message, linesep="\r\n")
    return out.getvalue()
