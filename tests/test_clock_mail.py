"""The clock's mails (reminder, deadline, paused, resumed, away, outage, handover), made the real
way: a migrated database (SQLite and PostgreSQL), the service with its listeners from
``app.listeners.build_service``, games of three people, the timekeeper run as of chosen times; then
every outbox row rendered and wrapped as the sender would, in English and in Polish."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from html import unescape
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from sqlmodel import col, select

from app.core.config import Settings
from app.core.models import Game, OutboxMail, Seat, utcnow
from app.features.clock import timekeeper
from app.features.clock.timekeeper import Timekeeper
from app.games.titanrace.describe import titan_name
from app.listeners import build_service
from app.mail.notify import NOTICE_KINDS, enqueue_notice
from app.mail.render import (
    MailRenderer,
    Rendered,
    build_message,
    format_duration,
    format_time,
)
from app.service import GameService

BASE = "http://titan.test"
NAME = "Clock race"
SEED = 6  # (seat 3 plays first: the owner, seat 1, is not the late player)
WARSAW = "Europe/Warsaw"
PEOPLE = ("ann", "bolek", "cyryl")

MONTHS = {
    "en": ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"),
    "pl": ("stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia",
           "września", "października", "listopada", "grudnia"),
}
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "waiting": "Reminder: your decision is waiting",
        "deadline": "Deadline: ",
        "your time": "your time, Europe/Warsaw",
        "bot ahead": "the computer makes this decision for you",
        "bot done": "The computer played for you: ",
        "once": "only this once",
        "pass ahead": "If you have not answered by then, ",
        "pass done": "What could be passed was passed",
        "pause ahead": "the game pauses until you answer",
        "pause done": "The game is paused until you answer",
        "first missed": "This is your first missed deadline in this game.",
        "two more": "After 2 more missed deadlines, your seat goes to the computer.",
        "seat gone": "seat now belongs to the computer",
        "owner may invite": "The game's owner may invite someone new",
        "you may invite": "As the game's owner, you can invite someone new",
        "handed": "went to the computer",
        "one missed": "missed 1 deadline",
        "late you": "because your time for a decision ran out",
        "late other": "because the time of {name} ({titan}) for a decision ran out",
        "you paused": "You paused the game.",
        "owner paused": "The game's owner paused the game.",
        "reason": "Reason: ",
        "paused subject": "the game is paused",
        "resumed": "it was paused for 3 hours and 25 minutes",
        "moved by": "moved on by 3 hours and 25 minutes",
        "away": "{name} ({titan}), who plays with you in",
        "stretch": "their clock is stretched",
        "computer away": "the computer plays for them",
        "outage": "Titan Post was not running for ",
        "new deadline": "Your new deadline: ",
        "game": "Open the game",
    },
    "pl": {
        "waiting": "Przypomnienie: czekamy na Twoją decyzję",
        "deadline": "Termin: ",
        "your time": "czyli u Ciebie",  # then "godz. HH:MM", or the date first when it differs
        "bot ahead": "komputer podejmie tę decyzję za Ciebie",
        "bot done": "Komputer zagrał za Ciebie: ",
        "once": "tylko ten jeden raz",
        "pass ahead": "Jeśli do tego czasu nie odpowiesz, ",
        "pass done": "Spasowano to, co można było spasować",
        "pause ahead": "gra zostanie wstrzymana i poczeka na Twoją odpowiedź",
        "pause done": "Gra jest wstrzymana, dopóki nie odpowiesz",
        "first missed": "To Twój pierwszy przekroczony termin w tej grze.",
        "two more": "Jeszcze 2 przekroczone terminy, a Twoje miejsce przejmie komputer.",
        "seat gone": "miejsce przejął komputer",
        "owner may invite": "Właściciel gry może zaprosić na",
        "you may invite": "Ta gra należy do Ciebie, więc możesz zaprosić",
        "handed": "przejął komputer",
        "one missed": "po 1 przekroczonym terminie",
        "late you": "bo minął czas na Twoją decyzję",
        "late other": "bo minął czas na decyzję gracza {name} ({titan})",
        "you paused": "Gra została przez Ciebie wstrzymana.",
        "owner paused": "Gra została wstrzymana przez właściciela.",
        "reason": "Powód: ",
        "paused subject": "gra jest wstrzymana",
        "resumed": "przerwa trwała 3 godziny i 25 minut",
        "moved by": "przesunęły się o 3 godziny i 25 minut",
        "away": "{name} ({titan}) \u2013 zgłasza nieobecność",
        "stretch": "zegar tej osoby stoi",
        "computer away": "zagra za nią komputer",
        "outage": "Serwer Titan Post nie działał przez ",
        "new deadline": "Nowy termin: ",
        "game": "Otwórz grę",
    },
}


# ------------------------------------------------------------------ the server


@dataclass
class Clock:
    settings: Settings
    service: GameService
    keeper: Timekeeper
    renderer: MailRenderer

    def game(self, lang: str, *, prefix: str = "", timezone: str | None = None,
             settings: dict[str, Any] | None = None, owner_email: str | None = None,
             ) -> dict[str, Any]:
        """A started game of three people: ``{"game", "creator_token", ...}``."""
        seats = [{"email": f"{prefix}{name}@example.com", "language": lang,
                  **({"timezone": timezone} if timezone else {})} for name in PEOPLE]
        created = self.service.create_game(seats=seats, seed=SEED, name=NAME,
                                           settings=settings or {}, owner_email=owner_email)
        for invitation in created["invitations"]:
            self.service.accept(invitation["invite_token"])
        self.service.start(created["game"], created["creator_token"])
        return created

    def rows(self, kind: str, uid: str | None = None) -> list[OutboxMail]:
        with self.service.session() as s:
            query = select(OutboxMail).where(OutboxMail.kind == kind)
            if uid is not None:
                game = s.exec(select(Game).where(Game.uid == uid)).one()
                query = query.where(OutboxMail.game_id == game.id)
            return list(s.exec(query.order_by(col(OutboxMail.id))).all())

    def seats(self, uid: str) -> dict[int, Seat]:
        with self.service.session() as s:
            game = s.exec(select(Game).where(Game.uid == uid)).one()
            return {seat.position: seat
                    for seat in s.exec(select(Seat).where(Seat.game_id == game.id)).all()}

    def to_act(self, uid: str) -> list[int]:
        with self.service.session() as s:
            loaded = self.service.load(s, uid)
            return list(loaded.rules.to_act(loaded.state))

    def timeout_at(self, uid: str, position: int) -> datetime:
        return next(_parse(d["due_at"]) for d in self.keeper.deadlines_of(uid)
                    if d["seat"] == position and d["kind"].startswith("timeout"))

    def reminders_at(self, uid: str) -> list[datetime]:
        return sorted(_parse(d["due_at"]) for d in self.keeper.deadlines_of(uid)
                      if d["kind"].startswith("reminder"))

    def mail(self, row: OutboxMail) -> tuple[Rendered, EmailMessage]:
        """Render ``row`` and wrap it as the sender does, checking what every mail needs."""
        rendered = self.renderer.render(row)
        assert rendered.skip is None, (row.kind, rendered.skip)
        msg = build_message(self.settings, row, rendered)
        check(rendered, msg, row)
        return rendered, msg


@pytest.fixture(params=["en", "pl"])
def lang(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def clock(migrated_database_url: str) -> Iterator[Clock]:
    settings = Settings.from_env({
        "TITANPOST_DATABASE_URL": migrated_database_url,
        "TITANPOST_ENV": "test",
        "TITANPOST_BASE_URL": BASE,
        "TITANPOST_MAIL_DOMAIN": "titan.test",
        "TITANPOST_SECRET_KEY": "clock-mail-test-secret-0123456789abcdef",
    })
    service = build_service(settings)
    made = Clock(settings, service, timekeeper.install(service), MailRenderer(service))
    yield made
    service.engine.dispose()


# ------------------------------------------------------------------ checks


def _parse(value: str) -> datetime:
    moment = datetime.fromisoformat(value)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def utc_words(moment: datetime, lang: str) -> str:
    """How a mail writes the UTC date and time of ``moment`` (checked piecewise, not by the
    renderer's own helper)."""
    moment = moment.astimezone(UTC)
    month = MONTHS[lang][moment.month - 1]
    if lang == "pl":
        return f"{moment.day} {month} {moment.year}"
    return f"{moment.day} {month} {moment.year}, {moment:%H:%M} UTC"


def utc_clock(moment: datetime, lang: str) -> str:
    moment = moment.astimezone(UTC)
    return f"godz. {moment:%H:%M} UTC" if lang == "pl" else f"{moment:%H:%M} UTC"


def has_time(text: str, moment: datetime, lang: str) -> bool:
    return utc_words(moment, lang) in text and utc_clock(moment, lang) in text


def check(rendered: Rendered, msg: EmailMessage, row: OutboxMail) -> None:
    """What every clock mail must be: a subject like the others', a text and an HTML part with
    no template left-overs, a link to the game, the board only in a reminder."""
    assert rendered.kind == row.kind
    assert rendered.subject.startswith(f"[Titan Post] {NAME}: "), rendered.subject
    text, html = rendered.text, rendered.html
    for part in (rendered.subject, text, html):
        for leftover in ("{{", "}}", "{%", "%}", "None", "Undefined"):
            assert leftover not in part, (row.kind, leftover, part)
    assert text.endswith("\n") and "\n\n\n" not in text
    assert f"{BASE}/g/" in text and f"{BASE}/g/" in unescape(html)
    assert WORDS[rendered.lang]["game"] in text and WORDS[rendered.lang]["game"] in html
    assert html.lstrip().lower().startswith("<!doctype html>")
    # the message: headers as for every game mail, a board picture only in a reminder
    assert msg["X-Titan-Post-Kind"] == row.kind
    assert msg["Subject"] == rendered.subject
    assert msg["Message-ID"] == row.message_id
    assert msg["Content-Language"] == rendered.lang
    images = [p for p in msg.walk() if p.get_content_type() == "image/png"]
    if row.kind == "reminder":
        assert len(rendered.images) == 1 and len(images) == 1
        assert "cid:" in html
    else:
        assert not rendered.images and not images and "cid:" not in html
    body_text = msg.get_body(("plain",))
    body_html = msg.get_body(("html",))
    assert body_text is not None and body_html is not None
    assert body_text.get_content() == text  # type: ignore[attr-defined]


def both(rendered: Rendered, *needles: str) -> None:
    """Each of ``needles`` is in the text and in the HTML (read as text)."""
    html = unescape(rendered.html)
    for needle in needles:
        assert needle in rendered.text, (needle, rendered.text)
        assert needle in html, (needle, html)


# ------------------------------------------------------------------ the helpers alone


def test_times_and_durations_in_words() -> None:
    moment = "2026-03-04T23:30:00+00:00"
    assert format_time(moment, "en") == "Wednesday 4 March 2026, 23:30 UTC"
    assert format_time(moment, "en", WARSAW) == (
        "Wednesday 4 March 2026, 23:30 UTC (Thursday 5 March, 00:30 your time, Europe/Warsaw)")
    assert format_time("2026-03-04T12:00:00Z", "en", WARSAW) == (
        "Wednesday 4 March 2026, 12:00 UTC (13:00 your time, Europe/Warsaw)")
    assert format_time(moment, "pl") == "4 marca 2026 (środa), godz. 23:30 UTC"
    assert format_time("2026-07-01T10:05:00", "pl", WARSAW) == (
        "1 lipca 2026 (środa), godz. 10:05 UTC, czyli u Ciebie godz. 12:05 (Europe/Warsaw)")
    # UTC itself, an unknown zone and no time at all
    assert format_time(moment, "en", "UTC") == format_time(moment, "en", "Mars/Olympus")
    assert format_time(None, "en") == format_time("soon", "pl") == ""
    assert format_duration(12300, "en") == "3 hours and 25 minutes"
    assert format_duration(86400 + 3600, "en") == "1 day and 1 hour"
    assert format_duration(20, "en") == "less than a minute"
    # Polish plural forms, in the accusative ("przez …", "o …")
    assert format_duration(3600, "pl") == "1 godzinę"
    assert format_duration(2 * 3600, "pl") == "2 godziny"
    assert format_duration(5 * 3600, "pl") == "5 godzin"
    assert format_duration(22 * 3600 + 60, "pl") == "22 godziny i 1 minutę"
    assert format_duration(12 * 3600 + 12 * 60, "pl") == "12 godzin i 12 minut"
    assert format_duration(2 * 86400 + 24 * 60, "pl") == "2 dni i 24 minuty"
    assert format_duration(86400, "pl") == "1 dzień"


# ------------------------------------------------------------------ the clock's mails


def test_reminders_then_the_computer_decides(clock: Clock, lang: str) -> None:
    """on_timeout "bot": the reminders tell when the deadline is (in UTC and in the player's
    time), what happens then, and keep the options; the deadline mail says what the computer
    played, this once."""
    created = clock.game(lang, timezone=WARSAW)
    uid = created["game"]
    [late] = clock.to_act(uid)
    due = clock.timeout_at(uid, late)
    report = clock.keeper.process_due(now=clock.reminders_at(uid)[-1] + timedelta(seconds=1),
                                      max_gap=None)
    assert report.reminders == 2 and report.timeouts == 0
    words = WORDS[lang]
    reminders = clock.rows("reminder", uid)
    assert len(reminders) == 2
    local = due.astimezone(ZoneInfo(WARSAW))
    for row in reminders:
        assert row.recipient == f"{PEOPLE[late]}@example.com"
        mail, _ = clock.mail(row)
        both(mail, words["waiting"], words["deadline"], words["bot ahead"], words["once"],
             words["your time"], f"{local:%H:%M}", WARSAW)
        assert has_time(mail.text, due, lang) and has_time(unescape(mail.html), due, lang)
        options = [line for line in mail.text.splitlines() if f"{BASE}/l/" in line]
        assert len(options) >= 2  # the decision's options, each with its signed link
        assert unescape(mail.html).count(f"{BASE}/l/") == len(options)
    # the deadline passes: the computer makes this one decision
    report = clock.keeper.process_due(now=due + timedelta(seconds=1), max_gap=None)
    assert report.timeouts == 1
    [row] = clock.rows("deadline", uid)
    payload = row.payload
    assert payload["action"] == "bot" and payload["inputs"] and payload["handover"] is None
    mail, _ = clock.mail(row)
    both(mail, words["bot done"], words["once"], words["first missed"], *payload["inputs"])
    assert words["seat gone"] not in mail.text
    assert "plays your seat from now on" not in mail.text  # the old, wrong meaning of "bot"
    # a reminder of the answered decision is not sent any more
    assert all(clock.renderer.render(r).skip for r in reminders)


def test_pass_and_hand_over_to_a_new_player(clock: Clock, lang: str) -> None:
    """on_timeout "pass" with max_missed 1 and after_missed "invite": the late player hears what
    was passed and that the seat is the computer's now; the owner hears they may invite
    someone new from the setup page, and the other players of a game whose owner does not play
    hear that the owner may."""
    words = WORDS[lang]
    settings = {"on_timeout": "pass", "max_missed": 1, "after_missed": "invite"}
    owned = clock.game(lang, settings=settings)["game"]
    outsider = clock.game(lang, prefix="x", settings=settings,
                          owner_email="boss@example.com")["game"]
    [late] = clock.to_act(owned)
    assert clock.to_act(outsider) == [late]
    due = max(clock.timeout_at(owned, late), clock.timeout_at(outsider, late))
    report = clock.keeper.process_due(now=due + timedelta(seconds=1), max_gap=None)
    assert report.timeouts == 2
    for uid, prefix in ((owned, ""), (outsider, "x")):
        [row] = clock.rows("deadline", uid)
        assert row.payload["action"] == "pass" and row.payload["handover"] == "invite"
        assert row.payload["missed"] == 1
        mail, _ = clock.mail(row)
        both(mail, words["pass done"], words["seat gone"], words["owner may invite"],
             *row.payload["inputs"])
        assert words["once"] not in mail.text
        handovers = clock.rows("handover", uid)
        assert handovers
        name = PEOPLE[late]
        for row in handovers:
            assert row.payload["position"] == late and row.payload["to"] == "invite"
            assert row.recipient != f"{prefix}{name}@example.com"
            mail, _ = clock.mail(row)
            both(mail, name, words["handed"], words["one missed"])
            setup = f"{BASE}/games/{uid}/setup"
            if uid == owned:  # the owner (the first seat) is told where to invite someone
                assert row.recipient == f"{PEOPLE[0]}@example.com" != f"{name}@example.com"
                both(mail, words["you may invite"], setup)
            else:
                both(mail, words["owner may invite"])
                assert setup not in mail.text
        if uid == outsider:
            assert {r.recipient for r in handovers} == {
                f"x{p}@example.com" for p in PEOPLE if p != name}


def test_a_missed_deadline_pauses_the_game(clock: Clock, lang: str) -> None:
    """on_timeout "pause": every player hears the game paused (the late one that it waits for
    their answer), and the late player how many deadlines they may still miss."""
    words = WORDS[lang]
    uid = clock.game(lang, settings={"on_timeout": "pause", "max_missed": 3})["game"]
    [late] = clock.to_act(uid)
    reminders_due = clock.reminders_at(uid)[0]
    clock.keeper.process_due(now=reminders_due + timedelta(seconds=1), max_gap=None)
    [reminder] = clock.rows("reminder", uid)
    mail, _ = clock.mail(reminder)
    both(mail, words["pause ahead"])
    report = clock.keeper.process_due(now=clock.timeout_at(uid, late) + timedelta(seconds=1),
                                      max_gap=None)
    assert report.timeouts == 1
    [row] = clock.rows("deadline", uid)
    assert row.payload["action"] == "pause" and row.payload["inputs"] == []
    mail, _ = clock.mail(row)
    both(mail, words["pause done"], words["first missed"], words["two more"])
    paused = clock.rows("paused", uid)
    # the others are told of the pause; the late player hears it from the deadline mail
    assert sorted(r.recipient for r in paused) == sorted(
        f"{p}@example.com" for i, p in enumerate(PEOPLE) if i != late)
    titan = titan_name(clock.seats(uid)[late].pieces["titans"][0], lang)
    for row in paused:
        assert row.payload["by"] == "clock"
        mail, _ = clock.mail(row)
        assert words["paused subject"] in mail.subject
        both(mail, words["late other"].format(name=PEOPLE[late], titan=titan))
        assert "waiting for seat" not in mail.text  # the log's words are not shown


def test_the_owner_pauses_and_resumes(clock: Clock, lang: str) -> None:
    words = WORDS[lang]
    created = clock.game(lang)
    uid, token = created["game"], created["creator_token"]
    start = utcnow() + timedelta(hours=1)
    clock.service.pause(uid, token, reason="Ann moves house", at=start)
    paused = clock.rows("paused", uid)
    assert len(paused) == 3
    for row in paused:
        assert row.payload["by"] == "owner"
        mail, _ = clock.mail(row)
        both(mail, words["reason"] + "Ann moves house")
        owner = row.recipient == f"{PEOPLE[0]}@example.com"
        both(mail, words["you paused"] if owner else words["owner paused"])
    clock.service.resume(uid, token, at=start + timedelta(hours=3, minutes=25))
    resumed = clock.rows("resumed", uid)
    assert len(resumed) == 3
    for row in resumed:
        assert row.payload["paused_seconds"] == 3 * 3600 + 25 * 60
        mail, _ = clock.mail(row)
        both(mail, words["resumed"], words["moved by"])


def test_co_players_hear_of_away_dates(clock: Clock, lang: str) -> None:
    words = WORDS[lang]
    uid = clock.game(lang, timezone=WARSAW)["game"]
    now = utcnow()
    begins = (now + timedelta(days=2)).replace(hour=7, minute=0, second=0, microsecond=0)
    ends = begins + timedelta(days=6, hours=12)
    clock.keeper.set_absence(f"{PEOPLE[1]}@example.com", begins, ends, "stretch", at=now)
    clock.keeper.set_absence(f"{PEOPLE[0]}@example.com", begins, ends, "computer", at=now)
    away = clock.rows("away", uid)
    assert len(away) == 4
    seats = clock.seats(uid)
    for row in away:
        who = int(row.payload["position"])
        assert row.recipient != f"{PEOPLE[who]}@example.com"
        mail, _ = clock.mail(row)
        titan = titan_name(seats[who].pieces["titans"][0], lang)
        both(mail, words["away"].format(name=PEOPLE[who], titan=titan),
             words["stretch" if row.payload["mode"] == "stretch" else "computer away"],
             words["your time"], f"{begins.astimezone(ZoneInfo(WARSAW)):%H:%M}")
        for moment in (begins, ends):
            assert has_time(mail.text, moment, lang)
        assert PEOPLE[who] in mail.subject and str(ends.day) in mail.subject


def test_an_outage_moves_deadlines_and_says_so(clock: Clock, lang: str) -> None:
    """No time zone: times in UTC only."""
    words = WORDS[lang]
    uid = clock.game(lang)["game"]
    [late] = clock.to_act(uid)
    due = clock.timeout_at(uid, late)
    first = utcnow() + timedelta(hours=1)
    clock.keeper.process_due(now=first, max_gap=timedelta(hours=1))
    back = due + timedelta(hours=2)
    report = clock.keeper.process_due(now=back, max_gap=timedelta(hours=1))
    assert report.outage == back - first and report.timeouts == 0
    assert not clock.rows("deadline", uid) and not clock.rows("reminder", uid)
    [row] = clock.rows("outage", uid)
    assert row.recipient == f"{PEOPLE[late]}@example.com"
    moved = _parse(row.payload["due_at"])
    assert moved == due + (back - first)
    mail, _ = clock.mail(row)
    both(mail, words["outage"], words["new deadline"], format_duration(
        (back - first).total_seconds(), lang))
    for moment in (first, back, moved):
        assert has_time(mail.text, moment, lang) and has_time(unescape(mail.html), moment, lang)
    assert words["your time"] not in mail.text


def test_every_notice_renders_from_a_bare_payload(clock: Clock, lang: str) -> None:
    """Rows written with little or nothing in their payload (older rows, other writers) still
    render, without "None" or template left-overs, and only the reminder has a board."""
    uid = clock.game(lang)["game"]
    [late] = clock.to_act(uid)
    with clock.service.session(write=True) as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        seat = s.exec(select(Seat).where(Seat.game_id == game.id,
                                         Seat.position == late)).one()
        for kind in NOTICE_KINDS:
            enqueue_notice(s, clock.settings, game=game, seat=seat, kind=kind, seq=0,
                           payload={})
        # the payloads of before the clock's rewrite
        enqueue_notice(s, clock.settings, game=game, seat=seat, kind="deadline", seq=0,
                       payload={"action": "default", "input": "pick red"}, extra="old")
        s.commit()
    seen = set()
    for kind in NOTICE_KINDS:
        for row in clock.rows(kind, uid):
            mail, _ = clock.mail(row)
            seen.add(kind)
            if row.payload.get("input") == "pick red":
                both(mail, WORDS[lang]["pass done"], "pick red")
    assert seen == set(NOTICE_KINDS)
