"""The Great Race's own mails (plan, take, turn, react and the passed deadline) come from one set
of templates, ``templates/mail/great-race/``, in every language, on SQLite and PostgreSQL: an
English and a Polish seat of one race get the same mails, each all in its own language (no
sentence of the templates' English in the Polish mail; the catalogue has every message, or the
conftest's check of :data:`app.core.i18n.MISSED` fails the test), with the reply example intact."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import cache
from html import unescape

from sqlmodel import col, select

from app.core.i18n_catalogue import extract
from app.core.models import Game, OutboxMail, utcnow
from app.games.ui import game_ui
from app.mail.render import MailRenderer, Rendered
from tests.greatrace.test_clock import to_planning
from tests.test_clock import Clock
from tests.test_clock import clock as clock  # the fixture: a server on the test database

OWN_KINDS = ("plan", "take", "turn", "react", "deadline")
"""The mails The Great Race words itself (the others are the shared templates')."""
ANN, BOLEK, CYRYL = 0, 1, 2
TEMPLATES = "templates/mail/great-race/"


@cache
def english_sentences() -> frozenset[str]:
    """The fixed words of every message of The Great Race's mail templates: each message id
    cut at its {fields}, the pieces long enough to be words of a sentence."""
    pieces: set[str] = set()
    for message in extract():
        if not any(path.startswith(TEMPLATES) for path, _ in message.locations):
            continue
        for text in (message.id,) if isinstance(message.id, str) else message.id:
            pieces |= {p.strip(" ().,:;“”") for p in re.split(r"\{\w+\}", text)}
    return frozenset(p for p in pieces if len(p) >= 10)


def start(clock: Clock) -> str:
    created = clock.service.create_game(
        seats=[{"email": "ann@example.com", "name": "Ann"},
               {"email": "bolek@example.com", "name": "Bolek", "language": "pl"},
               {"email": "cyryl@example.com", "name": "Cyryl"}],
        name="Sahara", seed=4, circuits=["alger"], rules_name="great-race",
        settings={"deadline_hours": 24, "on_timeout": "bot", "max_missed": 2})
    for invitation in created["invitations"]:
        clock.service.accept(invitation["invite_token"])
    clock.service.start(created["game"], created["creator_token"])
    return str(created["game"])


def let_time_run_out(clock: Clock, uid: str, position: int, since: datetime) -> datetime:
    """Tick past every deadline of ``position``'s open decisions until one passes; Cyryl
    answers his own in time. Returns the moment ticked at."""
    now = since
    for _ in range(40):
        state = clock.service.state(uid, None)
        to_act = state["game"]["to_act"]
        if CYRYL in to_act:
            clock.service.submit(uid, CYRYL, int(state["seq"]),
                                 clock.computer_choice(uid) if to_act == [CYRYL]
                                 else "plan P1 M1 S1 F2")
            continue
        if position not in to_act:
            clock.play(uid)
            continue
        now += timedelta(hours=25)
        clock.tick(now)
        return now
    raise AssertionError(f"seat {position} was never late")


def mails(clock: Clock, uid: str) -> dict[str, dict[str, list[Rendered]]]:
    """The game's own mails of each kind, by language, rendered as the sender would."""
    renderer = MailRenderer(clock.service)
    found: dict[str, dict[str, list[Rendered]]] = {}
    with clock.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        rows = s.exec(select(OutboxMail).where(OutboxMail.game_id == game.id,
                                               col(OutboxMail.kind).in_(OWN_KINDS))
                      .order_by(col(OutboxMail.id))).all()
        for row in rows:
            mail = renderer.render(row, always=True, session=s)
            found.setdefault(row.kind, {}).setdefault(mail.lang, []).append(mail)
    return found


def words(mail: Rendered) -> str:
    return mail.subject + "\n" + mail.text + "\n" + unescape(re.sub(r"<[^>]+>", " ", mail.html))


def test_english_and_polish_seats_read_the_same_mails_each_in_its_language(
        clock: Clock) -> None:
    uid = start(clock)
    to_planning(clock, uid)
    asked = mails(clock, uid)  # as the sender renders them: before anyone answers
    now = let_time_run_out(clock, uid, ANN, utcnow())  # the planning: Ann and Bolek are late
    now = let_time_run_out(clock, uid, ANN, now)  # late again: her seat goes to the computer
    let_time_run_out(clock, uid, BOLEK, now)
    found = mails(clock, uid)

    assert {"plan", "deadline"} <= set(found), sorted(found)
    for kind, by_lang in found.items():
        assert set(by_lang) == {"en", "pl"}, (kind, sorted(by_lang))
        for mail in by_lang["pl"]:
            english = [s for s in english_sentences() if s in words(mail)]
            assert not english, (kind, mail.subject, english)
        for mail in by_lang["en"] + by_lang["pl"]:
            assert "plan P2 M2 S1" in mail.text and "plan P2 M2 S1" in unescape(mail.html)

    plan_en, plan_pl = asked["plan"]["en"][0], asked["plan"]["pl"][0]
    assert "plan your assistants" in plan_en.subject
    assert "zaplanuj asystentów" in plan_pl.subject
    assert "SUGGESTED PLANS" in plan_en.text and "PROPONOWANE PLANY" in plan_pl.text
    assert "Suggested plans" in plan_en.html and "Proponowane plany" in plan_pl.html
    assert "for example “plan P1 M2 S1 F1”" in plan_en.text
    assert "na przykład „plan P1 M2 S1 F1”" in plan_pl.text
    assert "SINCE YOUR LAST TURN" in plan_en.text or "THE RACE" in plan_en.text
    assert "WYŚCIG" in plan_pl.text

    late_en = [words(m) for m in found["deadline"]["en"]]
    late_pl = [words(m) for m in found["deadline"]["pl"]]
    assert any("This is your first missed deadline in this game. After 1 more missed "
               "deadline, your seat goes to the computer." in m for m in late_en)
    assert any("To Twój pierwszy przekroczony termin w tej grze. Jeszcze 1 przekroczony "
               "termin, a Twoje miejsce przejmie komputer." in m for m in late_pl)
    assert any("You have missed 2 deadlines in this game, so your seat now belongs to the "
               "computer." in m for m in late_en)
    assert any("Masz już 2 przekroczone terminy w tej grze, więc Twoje miejsce przejął "
               "komputer." in m for m in late_pl)
    assert any("The computer played for you: " in m for m in late_en)
    assert any("Komputer zagrał za Ciebie: " in m for m in late_pl)


def test_each_plan_mail_names_its_readers_crew(clock: Clock) -> None:
    """The planning asks every crew at once: each seat's plan mail names that seat's own crew
    in its subject (not the first crew still owing a plan), in the seat's language."""
    uid = start(clock)
    planners = to_planning(clock, uid)
    seats = {s["position"]: s for s in clock.service.state(uid, None)["game"]["seats"]}
    renderer = MailRenderer(clock.service)
    subjects: dict[int, str] = {}
    with clock.service.session() as s:
        game = s.exec(select(Game).where(Game.uid == uid)).one()
        rows = s.exec(select(OutboxMail).where(OutboxMail.game_id == game.id,
                                               OutboxMail.kind == "plan")).all()
        for row in rows:
            seat = next(p for p, info in seats.items()
                        if info["name"].lower() in str(row.recipient))
            subjects[seat] = renderer.render(row, always=True, session=s).subject
    assert sorted(subjects) == sorted(planners)
    ui = game_ui("great-race")
    for position, subject in subjects.items():
        lang = "pl" if position == BOLEK else "en"
        own = ui.piece_name(seats[position]["titans"][0], lang)
        others = {ui.piece_name(seats[p]["titans"][0], lang) for p in seats if p != position}
        assert f"({own})" in subject, (position, subject)
        assert not any(f"({name})" in subject for name in others), (position, subject)
