"""Hypothesis fuzzing of the two parsers that read what people type: the move notation of the
engine and the inbound-mail parser.

- Notation: any text either normalises or is refused with ``InvalidInputError`` (a
  ``ValueError`` with a message); applied to a reachable race, any text is applied or refused
  with an ``InputError`` and the race unchanged; and in random reachable states every legal
  option is its own canonical spelling, and any spelling of it (case, spaces) reads back as it.
- Mail: any bytes, headers and bodies are read into a message, its reply text and notation,
  or refused, never with an unexpected exception; the reply-address parser takes only the
  genuine address; and processing a fuzzed reply against a real database changes the move log
  only when it is a legal move from the seat's own player, at that seat.

Every test is derandomized, with modest example counts (CI time).
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.games.titanrace.engine import BUILT_IN, VARIANTS, InputError, InvalidInputError, Race
from app.games.titanrace.engine.notation import normalise
from app.mail import inbound
from app.mail.addresses import parse_reply_address, reply_address
from app.mail.inbound import process_inbound
from app.mail.inbound_headers import automatic_reason, message_id_of, parse_message
from app.mail.inbound_queue import queue_inbound, reply_recipients
from app.mail.inbound_text import extract, find_notation, html_to_text, strip_quotes
from app.service import GameService
from tests.apifixtures import human_game, make_service
from tests.test_properties import setup_game

pytest_plugins = ["tests.apifixtures"]



def fuzz(examples: int) -> settings:
    """Deterministic settings (no example database, no deadline) with ``examples`` examples."""
    return settings(derandomize=True, database=None, deadline=None, max_examples=examples,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=80)
WORDS = ["pick", "start", "move", "trap", "hit", "ability", "play", "discard", "reroll", "end",
         "pass", "lose", "red", "RR", "LLL", "c3", "A1", "tribal-trap", "craken", "BL", ";",
         "  ", "\t", "é", "ß", "\u0130", "\x00", "\n"]
NOTATION_LIKE = st.lists(st.sampled_from(WORDS) | TEXT, max_size=6).map(" ".join)
DOMAIN = "titanpost.test"
SECRET = "fuzz-secret-key-0123456789abcdef"


def _is_notation(part: str) -> bool:
    try:
        normalise(part)
    except InvalidInputError:
        return False
    return True


# ------------------------------------------------------------------------------ notation


@given(text=TEXT | NOTATION_LIKE)
@fuzz(400)
def test_any_text_normalises_or_is_refused_with_a_message(text: str) -> None:
    try:
        canonical = normalise(text)
    except InvalidInputError as exc:
        assert isinstance(exc, ValueError) and exc.message
        return
    assert canonical == " ".join(canonical.split()) and canonical.split()[0] in WORDS
    assert normalise(canonical) == canonical  # canonical spelling is a fixed point


def _reachable(seed: int, variant: str, circuit: str, steps: int) -> Race:
    """A race after ``steps`` random legal inputs from its start (or its end, if sooner)."""
    race = setup_game(variant, circuit, seed)
    picker = __import__("random").Random(seed)
    for _ in range(steps):
        if race.is_over:
            break
        race.apply(picker.choice(race.options()))
    return race


RACES = st.builds(_reachable, seed=st.integers(0, 10_000), variant=st.sampled_from(VARIANTS),
                  circuit=st.sampled_from(BUILT_IN), steps=st.integers(0, 120))


@given(race=RACES, text=TEXT | NOTATION_LIKE)
@fuzz(60)
def test_any_text_applied_to_a_race_is_applied_or_refused_unchanged(race: Race,
                                                                     text: str) -> None:
    before = json.dumps(race.to_json(), sort_keys=True)
    try:
        race.apply(text)
    except InputError as exc:
        assert isinstance(exc, ValueError) and exc.message
        assert json.dumps(race.to_json(), sort_keys=True) == before
    # else: the text was (after normalising) a legal answer, and it was applied


def _respell(option: str, data: st.DataObject) -> str:
    """Another spelling of ``option``: each letter's case flipped or not, spaces around."""
    flips = data.draw(st.lists(st.booleans(), min_size=len(option), max_size=len(option)))
    letters = "".join(c.swapcase() if flip else c for c, flip in zip(option, flips, strict=True))
    pad = st.sampled_from(["", " ", "\t", " \t "])
    gap = st.sampled_from([" ", "  ", " \t"])
    return data.draw(pad) + data.draw(gap).join(letters.split(" ")) + data.draw(pad)


@given(race=RACES, data=st.data())
@fuzz(60)
def test_every_legal_option_round_trips_through_parse_and_format(race: Race,
                                                                 data: st.DataObject) -> None:
    options = race.options()
    assert race.is_over or options
    for option in options:
        assert normalise(option) == option, option
        assert normalise(_respell(option, data)) == option
    if options:
        trial = race.copy()
        trial.apply(_respell(data.draw(st.sampled_from(options)), data))


# ------------------------------------------------------------------------ reply addresses

UID = "0123456789abcdef0123456789abcdef"


@given(text=TEXT | st.from_regex(r"play\+[0-9a-f]{32}\.[0-9]\.[0-9a-f]{16}@[a-z.]{1,20}"))
@fuzz(300)
def test_the_reply_address_parser_takes_only_genuine_addresses(text: str) -> None:
    found = parse_reply_address(SECRET, DOMAIN, text)
    if found is not None:
        uid, seat = found
        assert reply_address(SECRET, DOMAIN, uid, seat) == text.strip().strip("<>").lower()


@given(seat=st.integers(0, 5), index=st.integers(0, 200), char=st.sampled_from(
    string.ascii_lowercase + string.digits + "+.@<> "))
@fuzz(200)
def test_a_changed_reply_address_is_refused(seat: int, index: int, char: str) -> None:
    genuine = reply_address(SECRET, DOMAIN, UID, seat)
    assert parse_reply_address(SECRET, DOMAIN, genuine) == (UID, seat)
    assert parse_reply_address(SECRET, DOMAIN, f" <{genuine.upper()}> ") == (UID, seat)
    position = index % len(genuine)
    changed = genuine[:position] + char + genuine[position + 1:]
    if changed.lower() != genuine:
        assert parse_reply_address(SECRET, DOMAIN, changed) is None


# ------------------------------------------------------------------------ reading a reply

HEADER_NAMES = ["From", "To", "Cc", "Subject", "Message-ID", "In-Reply-To", "References",
                "Reply-To", "Content-Type", "Content-Transfer-Encoding", "Auto-Submitted",
                "Precedence", "Delivered-To", "X-Original-To", "MIME-Version", "List-Id",
                "Return-Path", "X-Autoreply"]
CONTENT_TYPES = ["text/plain; charset=utf-8", "text/plain; charset=iso-8859-2",
                 "text/plain; charset=no-such-charset", "text/html; charset=utf-8",
                 "multipart/alternative; boundary=\"b1\"", "multipart/mixed",
                 "multipart/report; report-type=delivery-status", "application/octet-stream",
                 "text/plain; charset=\"utf-8", "text/"]
ENCODINGS = ["7bit", "8bit", "base64", "quoted-printable", "x-uuencode", "binary"]
BODY_LINES = ["pick red", "Pick Blue", "move RR; end", "- pass", "> pick green",
              "On Sat, Nov 21, 2026 at 10:02 AM Titan Post <play@x> wrote:", "-- ",
              "Sent from my phone", "-----Original Message-----", "From: someone",
              "<div>pick yellow</div>", "<blockquote>pick red</blockquote>",
              "<div class=\"gmail_quote\">pick red</div>", "--b1", "--b1--",
              "Content-Type: text/plain", "=?utf-8?b?cGljayByZWQ=?=", "cGljayByZWQ=", "=3D",
              "\u202epick red", "pick red" + "x" * 600, "\x00\x01", ""]


@st.composite
def raw_mails(draw: st.DrawFn, to: str, player: str, decision: str) -> bytes:
    """A reply as bytes: headers real, damaged or made up, a body of notation, quotes,
    markup and noise, and now and then bytes flipped anywhere."""
    header_text = TEXT.map(lambda t: t.replace("\r", " ").replace("\n", " "))
    headers = [
        ("From", draw(st.sampled_from([player, f"Player <{player}>", "stranger@example.com",
                                       "<>", "MAILER-DAEMON@example.com"]) | header_text)),
        ("To", draw(st.sampled_from([to, f"Titan Post <{to}>"]) | header_text)),
        ("In-Reply-To", draw(st.sampled_from([decision, "<x@y>"]) | header_text)),
        ("Content-Type", draw(st.sampled_from(CONTENT_TYPES) | header_text)),
        ("Content-Transfer-Encoding", draw(st.sampled_from(ENCODINGS) | header_text)),
    ]
    headers += draw(st.lists(st.tuples(st.sampled_from(HEADER_NAMES), header_text),
                             max_size=5))
    lines = draw(st.lists(st.sampled_from(BODY_LINES) | TEXT, max_size=12))
    head = "".join(f"{name}: {value}\r\n" for name, value in headers)
    raw = (head + "\r\n" + "\r\n".join(lines) + "\r\n").encode("utf-8", "surrogatepass")
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, max(len(raw) - 1, 0)))
        raw = raw[:at] + bytes([draw(st.integers(0, 255))]) + raw[at + 1:]
    return raw


@given(raw=raw_mails(reply_address(SECRET, DOMAIN, UID, 1), "ann@example.com",
                     f"<{UID}.4.1.turn@{DOMAIN}>") | st.binary(max_size=600))
@fuzz(300)
def test_any_mail_is_read_or_refused_without_an_unexpected_exception(raw: bytes) -> None:
    from app.core.config import Settings

    settings_ = Settings.from_env({"TITANPOST_SECRET_KEY": SECRET, "TITANPOST_ENV": "test",
                                   "TITANPOST_DATABASE_URL": "sqlite://",
                                   "TITANPOST_MAIL_DOMAIN": DOMAIN})
    message_id = message_id_of(raw)
    assert message_id is None or (isinstance(message_id, str) and len(message_id) <= 250)
    msg = parse_message(raw)
    for address in reply_recipients(msg, settings_):
        assert parse_reply_address(SECRET, DOMAIN, address) is not None
    read = extract(msg, _is_notation)
    assert isinstance(read.text, str)
    if read.notation is not None:
        parts = read.notation.split("; ")
        assert parts and all(_is_notation(part) for part in parts)
    seq = inbound._replied_seq(msg, UID, 1, DOMAIN)
    assert seq is None or seq >= 0
    assert isinstance(automatic_reason(msg, "ann@example.com", settings_), str)


@given(text=TEXT | st.lists(st.sampled_from(BODY_LINES) | TEXT, max_size=15).map("\n".join))
@fuzz(200)
def test_the_quote_stripper_and_the_notation_finder_take_any_text(text: str) -> None:
    reply = strip_quotes(text)
    assert isinstance(reply, str)
    for source in (text, reply, html_to_text(text)):
        found = find_notation(source, _is_notation)
        assert found is None or all(_is_notation(part) for part in found.split("; "))


# ------------------------------------------------------------- fuzzed replies, real database


@dataclass
class Desk:
    """A started game of human seats on a migrated SQLite database."""

    service: GameService
    uid: str
    emails: dict[int, str]


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    folder: Path = tmp_path_factory.mktemp("fuzz-mail")
    service = make_service(f"sqlite:///{folder / 'mail.db'}", TITANPOST_MAIL_DOMAIN=DOMAIN)
    game = human_game(service, 3)
    with service.engine.connect() as conn:
        emails = dict(conn.execute(sa.text(
            "SELECT position, email FROM seats JOIN games ON games.id = seats.game_id "
            "WHERE games.uid = :uid"), {"uid": game["game"]}).all())
    yield Desk(service, game["game"], emails)
    service.engine.dispose()


def _log(desk: Desk) -> list[tuple[Any, ...]]:
    with desk.service.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(sa.text(
            "SELECT moves.seq, moves.seat, moves.input, moves.actor FROM moves JOIN games ON "
            "games.id = moves.game_id WHERE games.uid = :uid ORDER BY moves.seq"),
            {"uid": desk.uid})]


def _one_of(draw: st.DrawFn, items: list[Any]) -> Any:
    """One of ``items``, drawn within the same bounds however many there are: the game moves on
    from one example to the next, and a draw whose bounds moved with it would make Hypothesis
    refuse the data generation as flaky."""
    return items[draw(st.integers(0, 999)) % len(items)]


@st.composite
def fuzzed_replies(draw: st.DrawFn, desk: Desk) -> tuple[int, bytes]:
    """A seat, and a reply to its reply address: sometimes from its player with one of its
    legal options (or another seat's, or garbage) on top, always possibly damaged."""
    svc = desk.service
    acting = svc.state(desk.uid, None)["game"]["to_act"] or sorted(desk.emails)
    seat = _one_of(draw, acting if draw(st.booleans()) else sorted(desk.emails))
    options = svc.options(desk.uid, seat)
    legal = [*(options.get("options") or []), "pick red", "end", "pass"]
    player = desk.emails[seat]
    to = reply_address(svc.settings.secret_key, DOMAIN, desk.uid, seat)
    decision = f"<{desk.uid}.{options['seq']}.{seat}.turn@{DOMAIN}>"
    raw = draw(raw_mails(to, player, decision))
    if draw(st.integers(0, 3)):  # mostly a clean reply with a move on top, to reach the service
        sender = draw(st.sampled_from([player, player, player.upper(), "someone@example.com"]))
        move = _one_of(draw, (legal[:-3] or legal) if draw(st.booleans()) else legal)
        raw = (f"From: {sender}\r\nTo: {to}\r\nSubject: Re: your turn\r\nIn-Reply-To: "
               f"{decision}\r\nMessage-ID: <{draw(st.uuids()).hex}@mail.example>\r\n\r\n"
               f"{move}\r\n\r\n> quoted\r\n").encode()
    return seat, raw


@given(data=st.data())
@fuzz(80)
def test_a_fuzzed_reply_changes_the_log_only_as_a_legal_move_of_its_seat(
    desk: Desk, data: st.DataObject
) -> None:
    svc = desk.service
    seat, raw = data.draw(fuzzed_replies(desk))
    to = reply_address(svc.settings.secret_key, DOMAIN, desk.uid, seat)
    before = _log(desk)
    pending = svc.options(desk.uid, seat)
    row = queue_inbound(svc.engine, svc.settings, to, raw, sender=desk.emails[seat])
    outcomes = process_inbound(svc)
    after = _log(desk)
    if row is None:  # the same Message-ID was queued before: nothing new is processed
        assert outcomes == [] and after == before
        return
    [outcome] = outcomes
    assert outcome.result != "error", outcome
    if outcome.result != "applied":
        assert after == before, outcome
        return
    assert pending["yours"] and outcome.notation is not None
    added = after[len(before):]
    assert added and all(entry[1] == seat for entry in added if entry[3] == "player"), added
    assert added[0][2] in pending["options"]  # the first input answered the pending decision
    assert parse_message(raw)["From"] is not None
    assert desk.emails[seat] in str(parse_message(raw)["From"]).lower()
